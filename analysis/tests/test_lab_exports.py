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


LAVA_DIST = Path("/usr/lib/python3/dist-packages")
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


def lava_helper_dir() -> Path:
    """lava-dispatcher's test shell helpers (`lava-test-case`, `lava-common-functions`):
    installed, or unpacked by .ci/run into $LAVA_TEST_SHELL_DIR."""
    for candidate in (os.environ.get("LAVA_TEST_SHELL_DIR"), LAVA_DIST / "lava_dispatcher" / "lava_test_shell"):
        if candidate and (Path(candidate) / "lava-test-case").is_file():
            return Path(candidate)
    message = "lava-dispatcher's lava_test_shell helpers not found: set LAVA_TEST_SHELL_DIR (see .ci/run)"
    if os.environ.get("RTSOAK_CI") == "1":
        pytest.fail(message)
    pytest.skip(message)


def test_the_lava_definition_validates_against_lavas_own_schema():
    yaml = require("yaml")
    definition = yaml.safe_load(DEFINITION.read_text())
    lava_testdef_schema().validate(definition)
    assert set(definition["params"]) >= {"PROFILE", "TRANSPORTS", "DURATION"}
    assert any("rtsoak compare" in step for step in definition["run"]["steps"])


def deploy_helpers(helpers: Path, bin_dir: Path) -> None:
    """LAVA's helpers deployed as LAVA deploys them: an interpreter line put in front."""
    bin_dir.mkdir()
    (bin_dir / "lava-test-case").write_text("#!/bin/sh\n" + (helpers / "lava-test-case").read_text())
    (bin_dir / "lava-test-case").chmod(0o755)
    (bin_dir / "lava-common-functions").write_text((helpers / "lava-common-functions").read_text())


def dispatcher_reading(signals: list[str]) -> dict:
    """The dispatcher's reading of TESTCASE signals (lava_dispatcher/actions/test/shell.py):
    the signal pattern, the words after the signal name, each KEY=VALUE, no space in the id, a
    measurement a Decimal."""
    import decimal
    import re

    pattern = re.compile(r"<LAVA_SIGNAL_(\S+) ([^>]+)>")
    cases = {}
    for line in signals:
        match = pattern.search(line)
        assert match and match.group(1) == "TESTCASE", line
        data = {}
        for param in match.group(2).split():
            key, value = param.split("=")
            data[key.lower()] = value
        assert data["result"] in ("pass", "fail", "skip", "unknown"), line
        if "measurement" in data:
            decimal.Decimal(data["measurement"])
        cases[data["test_case_id"]] = data
    return cases


def test_inside_a_lava_test_shell_rtsoak_signals_each_figure_as_lavas_own_helper_does(tmp_path):
    """A real short run inside a LAVA test shell (LAVA_RESULT_DIR set): rtsoak prints, itself,
    exactly the signals LAVA's own `lava-test-case` prints for the lines of the lava export,
    they parse as the dispatcher parses them, and no `lava-test-case` on PATH is executed."""
    helpers = lava_helper_dir()
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
    signals = [line for line in completed.stdout.splitlines() if line.startswith("<LAVA_SIGNAL_")]

    # LAVA's own helper, given the lines of the lava export in a shell as a test definition
    # would give them.
    bin_dir = tmp_path / "bin"
    deploy_helpers(helpers, bin_dir)
    script = rendered(out / "result.json", "lava", tmp_path)
    helper_env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", LAVA_RESULT_DIR=str(tmp_path / "helper-results"))
    helper_env.pop("KMSG", None)
    helper = subprocess.run(["sh", "-e", str(script)], capture_output=True, text=True, env=helper_env, timeout=60)
    assert helper.returncode == 0, helper.stderr
    helper_signals = [line for line in helper.stdout.splitlines() if line.startswith("<LAVA_SIGNAL_")]
    assert signals == helper_signals, (signals, helper_signals)

    cases = dispatcher_reading(signals)
    expected = script.read_text().splitlines()
    assert len(cases) == len(expected) > 1, (signals, expected)
    for line in expected:
        words = line.split()
        assert words[0] == "lava-test-case"
        assert words[1] in cases, (words[1], sorted(cases))
        assert all(c.isalnum() or c in "_-." for c in words[1]), words[1]
        assert cases[words[1]]["result"] == words[3]
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
