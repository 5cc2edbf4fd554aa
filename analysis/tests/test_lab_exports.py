"""The lab exports of a real short run, read by the tools the labs use: `junit.xml` parsed by
`junitparser` (what CI plugins are written against) and validated against the JUnit schema in
schemas/junit.xsd. Under RTSOAK_CI=1 a missing reader fails the test instead of skipping it."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import measured_runs, rtsoak_binary
from lava_job import LAVA_DIST, helper_dir, read_run, replay

SCHEMAS = Path(__file__).resolve().parent / "schemas"
CHECKS = ("run", "lost-messages", "transport-errors", "verdict")


def require(module: str, install: str = "pip install -r analysis/requirements.txt"):
    """Import `module`, or skip (fail in CI) saying what to install."""
    try:
        return importlib.import_module(module)
    except ImportError:
        message = f"{module} is not installed: {install}"
        if os.environ.get("RTSOAK_CI") == "1":
            pytest.fail(message)
        pytest.skip(message)


def rendered(result: Path, format_name: str, tmp_path: Path) -> Path:
    """`rtsoak report --format NAME` of the saved real result, written to a file."""
    out = tmp_path / format_name
    completed = subprocess.run(
        [str(rtsoak_binary()), "report", "--format", format_name, "-o", str(out), str(result)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert completed.returncode == 0, completed.stderr
    return out


def label(run: dict) -> str:
    setup = run.get("ring_setup_requested")
    return f"rtsoak.{run['transport']}" + (f".{setup}" if setup else "")


def test_junit_validates_against_the_junit_schema(real_result, tmp_path):
    xmlschema = require("xmlschema")
    schema = xmlschema.XMLSchema(str(SCHEMAS / "junit.xsd"))
    schema.validate(str(rendered(real_result, "junit", tmp_path)))


def test_junitparser_reads_a_testcase_per_transport_and_check_with_the_runs_figures(real_result, real_data, tmp_path):
    junitparser = require("junitparser")
    xml = junitparser.JUnitXml.fromfile(str(rendered(real_result, "junit", tmp_path)))
    suites = list(xml)
    assert len(suites) == 1, "one suite per invocation"
    suite = suites[0]
    cases = {(case.classname, case.name): case for case in suite}
    runs = {label(run): run for run in real_data["runs"]}
    for classname, run in runs.items():
        for check in CHECKS:
            assert (classname, check) in cases, (classname, check, sorted(cases))
        results = cases[(classname, "run")].result
        if run["status"] == "unsupported":
            assert results and isinstance(results[0], junitparser.Skipped), classname
        lost = cases[(classname, "lost-messages")].result
        if run["integrity"]["lost"] > 0:
            assert lost and isinstance(lost[0], junitparser.Failure), classname
        else:
            assert not any(isinstance(r, junitparser.Failure) for r in lost), classname
    assert ("rtsoak", "verdict") in cases
    if real_data["verdict"]["status"] == "pass":
        assert not cases[("rtsoak", "verdict")].result, "a passing invocation fails no testcase"
    assert suite.tests == len(cases)
    properties = {p.name: p.value for p in suite.properties()}
    assert properties["kernel_release"] == real_data["host"]["kernel_release"]
    for run in measured_runs(real_data):
        prefix = label(run)
        assert int(properties[f"{prefix}.messages"]) == run["integrity"]["sent"]
        assert int(properties[f"{prefix}.lost"]) == run["integrity"]["lost"]
        delivery = run["series"]["delivery"]["summary"]
        assert float(properties[f"{prefix}.delivery.longest_us"]) == pytest.approx(delivery["max_ns"] / 1000, abs=0.05 + 1e-9)
        assert float(properties[f"{prefix}.delivery.p99_us"]) == pytest.approx(delivery["p99_ns"] / 1000, abs=0.05)


def test_the_verdicts_breaches_fail_the_transport_they_name(real_data, tmp_path):
    """A breach of a limit is a failure of that transport's `verdict` testcase, typed by the
    profile key: a copy of the real result with one breach added, rendered by rtsoak."""
    junitparser = require("junitparser")
    from conftest import write_result

    data = json.loads(json.dumps(real_data))
    run = measured_runs(data)[0]
    data["verdict"]["breaches"].append(
        {
            "transport": run["transport"],
            "series": "delivery",
            "what": "verdict.max_delivery_us",
            "figure": 900.0,
            "limit": 100.0,
            "unit": "us",
            "message": f"{run['transport']}: delivery longest 900 us over the 100 us limit",
        }
    )
    data["verdict"]["status"], data["verdict"]["pass"] = "fail", False
    path = write_result(data, tmp_path / "breached")
    xml = junitparser.JUnitXml.fromfile(str(rendered(path, "junit", tmp_path)))
    case = next(c for c in next(iter(xml)) if c.classname == label(run) and c.name == "verdict")
    failure = case.result[0]
    assert isinstance(failure, junitparser.Failure)
    assert failure.type == "verdict.max_delivery_us"
    assert "900 us" in failure.message


DEFINITION = Path(__file__).resolve().parents[2] / "lava" / "rtsoak-compare.yaml"


def lava_testdef_schema():
    """LAVA's own test definition schema, from Debian's lava-common (apt), whose voluptuous
    rules the pip-installed voluptuous runs."""
    require("voluptuous")
    try:
        from lava_common.schemas.test import testdef
    except ImportError:
        if str(LAVA_DIST) not in sys.path and (LAVA_DIST / "lava_common").is_dir():
            sys.path.append(str(LAVA_DIST))
        testdef = require("lava_common.schemas.test.testdef", "apt-get install lava-common (.ci/run does)")
    return testdef


def test_the_lava_definition_validates_against_lavas_own_schema():
    yaml = require("yaml")
    definition = yaml.safe_load(DEFINITION.read_text())
    lava_testdef_schema().validate(definition)
    assert set(definition["params"]) >= {"PROFILE", "TRANSPORTS", "DURATION", "ARTIFACT_URL", "ARTIFACT_METHOD"}
    steps = definition["run"]["steps"]
    assert any("rtsoak compare" in step for step in steps)
    assert any("lava/rtsoak-publish" in step for step in steps)
    assert not any("lava-test-case-attach" in step for step in steps), "LAVA V2 has no attachments"
    assert not any("|| true" in step for step in steps), "no failure is hidden"


def test_inside_a_lava_test_shell_rtsoak_prints_what_lavas_own_helper_prints_for_its_export(tmp_path):
    """A real short run inside a LAVA test shell (LAVA_RESULT_DIR set): rtsoak prints, itself,
    exactly what the lava export's script prints through LAVA's own `lava-test-case` (the
    signals and the log lines between them), the dispatcher's own reader records every case of
    the export from it, and no `lava-test-case` on PATH is executed."""
    helper_dir()
    planted = tmp_path / "planted"
    planted.mkdir()
    marker = tmp_path / "helper-ran"
    (planted / "lava-test-case").write_text(f"#!/bin/sh\ntouch '{marker}'\n")
    (planted / "lava-test-case").chmod(0o755)
    env = dict(os.environ, PATH=f"{planted}:{os.environ['PATH']}", LAVA_RESULT_DIR=str(tmp_path / "lava-results"))
    env.pop("KMSG", None)
    out = tmp_path / "run"
    completed = subprocess.run(
        [str(rtsoak_binary()), "run", "-q", "-t", "futex", "--profile", "ci", "--duration", "1s", "-o", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert (out / "result.json").is_file(), completed.stderr
    assert not marker.exists(), "rtsoak executed a lava-test-case it found on PATH"

    # LAVA's own helper, given the export's lines in a shell as a test definition would.
    script = rendered(out / "result.json", "lava", tmp_path)
    helper = replay(script, tmp_path).splitlines()
    printed = completed.stdout.splitlines()
    assert printed[: len(helper)] == helper, (printed, helper)

    reading = read_run("\n".join(printed))
    assert not reading.raised and not reading.errors, reading
    cases = reading.cases()
    expected = [line.split() for line in script.read_text().splitlines() if line.startswith("lava-test-case ")]
    assert len(cases) == len(expected) > 1, (cases, expected)
    for words in expected:
        assert all(c.isalnum() or c in "_-." for c in words[1]), words[1]
        assert cases[words[1]]["result"] == words[3], (words, cases[words[1]])
    verdict = json.loads((out / "result.json").read_text())["verdict"]["status"]
    assert cases["verdict"]["result"] == {"pass": "pass", "fail": "fail", "inconclusive": "skip"}[verdict]


# The KCIDB I/O schema version rtsoak writes, and the one kcidb-io validates it at.
KCIDB_VERSION = (4, 5)


def test_kcidb_validates_with_kcidb_io_at_the_pinned_schema_version(real_result, real_data, tmp_path):
    kcidb_io = require("kcidb_io")
    document = json.loads(rendered(real_result, "kcidb", tmp_path).read_text())
    schema = kcidb_io.schema.V4_5
    assert (schema.major, schema.minor) == KCIDB_VERSION
    assert (document["version"]["major"], document["version"]["minor"]) == KCIDB_VERSION
    schema.validate(document)
    tests = {t["path"]: t for t in document["tests"]}
    for run in measured_runs(real_data):
        setup = run.get("ring_setup_requested")
        prefix = f"rtsoak.{run['transport']}" + (f".{setup}" if setup else "")
        delivery = tests[f"{prefix}.delivery"]
        assert delivery["number"] == {"value": run["series"]["delivery"]["summary"]["max_ns"] / 1000, "unit": "us"}
        assert delivery["environment"]["misc"]["kernel_release"] == real_data["host"]["kernel_release"]
        assert tests[prefix]["status"] in ("PASS", "FAIL", "ERROR", "SKIP")
    verdict = {"pass": "PASS", "fail": "FAIL", "inconclusive": "SKIP"}[real_data["verdict"]["status"]]
    assert tests["rtsoak.verdict"]["status"] == verdict
