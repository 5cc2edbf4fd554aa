"""Every lab export carries the verdict, its reasons and the caveats, read by the lab's own
readers: a real short run's result, its verdict set to PASS, FAIL and INCONCLUSIVE, rendered by
`rtsoak report --format` and read with junitparser (and the Jenkins-shaped JUnit schema),
kcidb-io, LAVA's own helper and test shell reader, prometheus_client and promtool. Under
RTSOAK_CI=1 a missing reader fails."""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
from pathlib import Path
from xml.etree import ElementTree

import pytest
from conftest import rtsoak_binary, write_result
from lava_job import read_run, replay
from test_lab_exports import SCHEMAS, rendered, require

REASON = "the kernel 6.1.0 is not PREEMPT_RT (verdict.require_preempt_rt)"
WHY_INCONCLUSIVE = "not a PREEMPT_RT kernel (6.1.0): the profile neither requires otherwise"


def with_verdict(data: dict, status: str) -> dict:
    """`data` with its verdict made `status`: FAIL by a machine breach, INCONCLUSIVE by an
    invalidating condition, PASS with nothing against it."""
    variant = copy.deepcopy(data)
    verdict = variant["verdict"]
    verdict.update(status=status, **{"pass": status == "pass"}, failures=[], breaches=[], inconclusive=[])
    verdict.pop("baseline", None)
    if status == "fail":
        verdict["breaches"].append(
            {"transport": None, "what": "verdict.require_preempt_rt", "series": None, "figure": 0.0,
             "limit": 1.0, "unit": "", "message": REASON}
        )
    if status == "inconclusive":
        verdict["inconclusive"].append({"transport": None, "kind": "invalidated", "message": WHY_INCONCLUSIVE})
    return variant


@pytest.fixture(params=["pass", "fail", "inconclusive"])
def judged(request, real_data, tmp_path):
    data = with_verdict(real_data, request.param)
    return request.param, data, write_result(data, tmp_path / request.param)


def test_junit_says_the_verdict_in_its_own_idiom(judged, tmp_path):
    status, data, path = judged
    junitparser = require("junitparser")
    xmlschema = require("xmlschema")
    junit = rendered(path, "junit", tmp_path)
    xmlschema.XMLSchema(str(SCHEMAS / "junit.xsd")).validate(str(junit))
    suite = next(iter(junitparser.JUnitXml.fromfile(str(junit))))
    case = next(c for c in suite if (c.classname, c.name) == ("rtsoak", "verdict"))
    if status == "pass":
        assert not case.result
    elif status == "fail":
        assert isinstance(case.result[0], junitparser.Failure)
        assert REASON in case.result[0].message
    else:
        assert isinstance(case.result[0], junitparser.Skipped), "INCONCLUSIVE is skipped, never passed"
        assert WHY_INCONCLUSIVE in case.result[0].message
    # junitparser reads a testcase's system-out only; the suite's is read as XML.
    out = ElementTree.parse(junit).getroot().find("testsuite/system-out").text
    assert f"rtsoak verdict: {status.upper()}" in out
    for caveat in data["caveats"]:
        assert f"[{caveat['severity']}] {caveat['text']}" in out
    properties = {p.name: p.value for p in suite.properties()}
    assert properties["kernel_release"] == data["host"]["kernel_release"]
    assert properties["profile"] == data["plan"]["profile"]
    assert properties["board"]


def test_kcidb_validates_and_its_verdict_test_holds_the_reasons_and_caveats(judged, tmp_path):
    status, data, path = judged
    kcidb_io = require("kcidb_io")
    import json

    document = json.loads(rendered(path, "kcidb", tmp_path).read_text())
    kcidb_io.schema.V4_5.validate(document)
    verdict = next(t for t in document["tests"] if t["path"] == "rtsoak.verdict")
    assert verdict["status"] == {"pass": "PASS", "fail": "FAIL", "inconclusive": "SKIP"}[status]
    misc = verdict["misc"]
    assert misc["verdict"].startswith(status.upper())
    assert misc["caveats"] == [f"[{c['severity']}] {c['text']}" for c in data["caveats"]]
    if status == "fail":
        assert REASON in misc["reasons"]
    if status == "inconclusive":
        assert WHY_INCONCLUSIVE in misc["reasons"]


def test_lava_records_the_verdict_and_each_reason_as_a_case_after_its_sentence(judged, tmp_path):
    """The lava export replayed through LAVA's own helper, its console read by the dispatcher's
    own test shell code: the verdict's result, one case per reason with the result that reason
    makes of it, the reason's sentence on the line before its signal, the caveats in the log."""
    status, data, path = judged
    console = replay(rendered(path, "lava", tmp_path), tmp_path)
    reading = read_run(console)
    assert not reading.raised and not reading.errors, reading
    cases = reading.cases()
    assert cases["verdict"]["result"] == {"pass": "pass", "fail": "fail", "inconclusive": "skip"}[status]
    reasons = {name: case["result"] for name, case in cases.items() if name.startswith("verdict.reason.")}
    expected = {"pass": {}, "fail": {"verdict.reason.require_preempt_rt": "fail"},
                "inconclusive": {"verdict.reason.invalidated": "skip"}}[status]
    assert reasons == expected, cases
    lines = console.splitlines()
    said = {"verdict.reason.require_preempt_rt": REASON, "verdict.reason.invalidated": WHY_INCONCLUSIVE}
    for name, sentence in said.items():
        if name in reasons:
            at = next(i for i, line in enumerate(lines) if f"TEST_CASE_ID={name} " in line)
            assert lines[at - 1] == f"rtsoak verdict reason: {sentence}", lines[at - 1]
    at = next(i for i, line in enumerate(lines) if "TEST_CASE_ID=verdict RESULT" in line)
    assert lines[at - 1].startswith(f"rtsoak verdict: {status.upper()}"), lines[at - 1]
    for caveat in data["caveats"]:
        assert f"rtsoak caveat: [{caveat['severity']}] {caveat['text']}" in lines
    figures = [name for name, case in cases.items() if name.endswith(".delivery.longest")]
    assert figures and all(cases[name]["units"] == "us" for name in figures)


def test_a_lab_origin_names_every_kcidb_object_and_id_and_kcidb_io_takes_it(judged, tmp_path):
    """`--kcidb-origin` on a saved result (as `export.kcidb_origin` and the soak's flag record it):
    every checkout, build and test is the lab's, every id starts with it, kcidb-io validates."""
    status, data, path = judged
    kcidb_io = require("kcidb_io")
    import json

    out = tmp_path / "kcidb.json"
    completed = subprocess.run(
        [str(rtsoak_binary()), "report", "--format", "kcidb", "--kcidb-origin", "board_lab_2", "-o", str(out),
         str(path)],
        capture_output=True, text=True, timeout=60,
    )
    assert completed.returncode == 0, completed.stderr
    document = json.loads(out.read_text())
    kcidb_io.schema.V4_5.validate(document)
    for kind in ("checkouts", "builds", "tests"):
        for obj in document[kind]:
            assert obj["origin"] == "board_lab_2", obj
            assert obj["id"].startswith("board_lab_2:"), obj
    assert all(t["build_id"].startswith("board_lab_2:") for t in document["tests"])
    verdict = next(t for t in document["tests"] if t["path"] == "rtsoak.verdict")
    assert verdict["status"] == {"pass": "PASS", "fail": "FAIL", "inconclusive": "SKIP"}[status]
    # An origin KCIDB's schema refuses is refused by rtsoak too, before rendering anything.
    refused = subprocess.run(
        [str(rtsoak_binary()), "report", "--format", "kcidb", "--kcidb-origin", "Board-Lab", str(path)],
        capture_output=True, text=True, timeout=60,
    )
    assert refused.returncode == 2 and not refused.stdout, refused
    bad = json.loads(json.dumps(document).replace('"board_lab_2', '"Board-Lab'))
    with pytest.raises(Exception):
        kcidb_io.schema.V4_5.validate(bad)


def test_two_boards_starting_in_the_same_second_get_distinct_kcidb_ids(real_data, tmp_path):
    import json

    ids = []
    for host in ("board-a", "board-b"):
        data = copy.deepcopy(real_data)
        data["host"]["hostname"] = host
        path = write_result(data, tmp_path / host)
        document = json.loads(rendered(path, "kcidb", tmp_path / host).read_text())
        ids.append({t["id"] for t in document["tests"]})
    assert len(ids[0]) == len(json.loads(rendered(path, "kcidb", tmp_path).read_text())["tests"])
    assert not ids[0] & ids[1], "same start second, different boards: no id shared"


def test_prometheus_has_the_verdict_its_reasons_the_end_time_and_who_measured_on_every_series(judged, tmp_path):
    status, data, path = judged
    parser = require("prometheus_client.parser")
    text = rendered(path, "prometheus", tmp_path).read_text()
    promtool = shutil.which("promtool")
    if promtool is None:
        message = "promtool is not installed: apt-get install prometheus (.ci/run does)"
        if os.environ.get("RTSOAK_CI") == "1":
            pytest.fail(message)
        pytest.skip(message)
    check = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    samples = [s for family in parser.text_string_to_metric_families(text) for s in family.samples]
    for sample in samples:
        labels = sample.labels
        assert labels["kernel_release"] == data["host"]["kernel_release"], sample
        assert labels["preempt_rt"] == str(data["host"]["preempt_rt"]).lower(), sample
        assert labels["board"] and labels["profile"] == data["plan"]["profile"], sample
    given = {s.labels["verdict"]: s.value for s in samples if s.name == "rtsoak_verdict"}
    assert given == {w: float(w == status) for w in ("pass", "fail", "inconclusive")}
    reasons = {(s.labels["verdict"], s.labels["kind"]) for s in samples if s.name == "rtsoak_verdict_reason"}
    expected = {"pass": set(), "fail": {("fail", "verdict.require_preempt_rt")},
                "inconclusive": {("inconclusive", "invalidated")}}[status]
    assert reasons == expected
    assert any(s.name == "rtsoak_run_end_timestamp_seconds" and s.value > 1.7e9 for s in samples)


def test_the_html_reports_verdict_colour_follows_its_meaning_and_caveats_keep_their_severity(judged, tmp_path):
    from conftest import run_script

    status, data, path = judged
    if status == "pass":
        data["verdict"]["accepted"] = [{"condition": "kernel.preempt-rt", "message": "not a PREEMPT_RT kernel"}]
        path = write_result(data, tmp_path / "accepted")
    run_script("report.py", path, "-o", tmp_path / "report")
    page = (tmp_path / "report" / "report.html").read_text()
    heading = {
        "pass": '<h2 class="verdict qualified">Verdict: PASS on a non-RT kernel: these figures describe this kernel</h2>',
        "fail": '<h2 class="verdict fail">Verdict: FAIL</h2>',
        "inconclusive": '<h2 class="verdict inconclusive">Verdict: INCONCLUSIVE</h2>',
    }[status]
    assert heading in page
    assert "h2.verdict.pass { color: #1b5e20; }" in page, "only a plain PASS is green"
    for caveat in data["caveats"]:
        assert f'<li class="{caveat["severity"]}">[{caveat["severity"]}] ' in page
