"""lava/rtsoak-compare.yaml run as a LAVA job runs it: the overlay on a "board" (a directory),
`run.sh` written by lava-dispatcher's own run script writer from the definition and the job's
parameters, started through LAVA's `lava-test-runner` and `lava-test-shell` with LAVA's helpers
on PATH, a real short soak, the result directory published to storage on 127.0.0.1, and the
console read by the dispatcher's own test shell code. Checked: the archive arrives intact and
holds the result; `artifacts` is recorded with the archive's URL as its reference, fails when the
storage is unreachable or refuses, and is skipped, saying so, without a URL; the token never
reaches the console; every figure and the verdict are recorded as the lava export lists them."""

from __future__ import annotations

import hashlib
import io
import json
import socket
import tarfile
from pathlib import Path

import pytest
from artifact_store import ArtifactStore
from conftest import REPO_DIR, rtsoak_binary
from lava_job import Device, read_console

TOKEN = "s3cr3t-upload-token-4242"
FILES = {name: REPO_DIR / name for name in ("lava/rtsoak-compare.yaml", "lava/rtsoak-publish")}
# One transport, one second: a job's whole run, kept short.
SOAK = {"PROFILE": "ci", "TRANSPORTS": "futex", "DURATION": "1s"}


def job(tmp_path: Path, secrets: dict, **parameters: str):
    """The definition run on a board under `tmp_path` with `parameters`: the board, its console
    and what the dispatcher recorded from it."""
    board = Device(tmp_path / "board", secrets)
    board.overlay()
    runner = board.deploy(FILES, "lava/rtsoak-compare.yaml", "rtsoak", {**SOAK, **parameters})
    console = board.run(f"{rtsoak_binary().parent}:/usr/bin:/bin")
    reading = read_console(console)
    assert not reading.raised and not reading.errors, (reading, console)
    assert (runner / "rtsoak-result" / "result.json").is_file(), console
    return runner, console, reading


def closed_port() -> int:
    """A port of 127.0.0.1 nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def archive_of(runner: Path) -> Path:
    archives = list(runner.glob("rtsoak-*.tar.gz"))
    assert len(archives) == 1, archives
    return archives[0]


def test_put_publishes_the_intact_result_and_records_its_url_and_every_figure(tmp_path):
    with ArtifactStore(TOKEN) as store:
        runner, console, reading = job(
            tmp_path, {"ARTIFACT_TOKEN": TOKEN}, ARTIFACT_URL=f"{store.url}/rtsoak/night/"
        )
    archive = archive_of(runner)
    artifacts = reading.case("artifacts")
    assert artifacts["result"] == "pass", console
    assert artifacts["reference"] == f"{store.url}/rtsoak/night/{archive.name}"
    assert archive.name.startswith("rtsoak-4242-0_rtsoak-"), "named by job and test run"
    sent = store.files[f"/rtsoak/night/{archive.name}"]
    assert sent == archive.read_bytes(), "the archive arrived intact"
    assert hashlib.sha256(sent).hexdigest() in console, "the log names its sha256"
    with tarfile.open(fileobj=io.BytesIO(sent)) as tar:
        kept = tar.extractfile("rtsoak-result/result.json").read()
        names = tar.getnames()
    assert kept == (runner / "rtsoak-result" / "result.json").read_bytes()
    assert {"rtsoak-result/junit.xml", "rtsoak-result/kcidb.json", "rtsoak-result/lava-test-cases.sh"} <= set(names)
    assert TOKEN not in console, "the secret never reaches the log"

    # Every case of the lava export, as the dispatcher recorded it from rtsoak's own signals.
    recorded = reading.cases()
    script = (runner / "rtsoak-result" / "lava-test-cases.sh").read_text().splitlines()
    for line in (l for l in script if l.startswith("lava-test-case ")):
        words = line.split()
        case = recorded[words[1]]
        assert case["result"] == words[3], (line, case)
        if "--measurement" in words:
            assert case["measurement"] == float(words[words.index("--measurement") + 1]), (line, case)
            assert case["units"] == words[words.index("--units") + 1], (line, case)
    status = json.loads(kept)["verdict"]["status"]
    assert recorded["verdict"]["result"] == {"pass": "pass", "fail": "fail", "inconclusive": "skip"}[status]
    assert recorded["futex.delivery.p99"]["units"] == "us"


def test_post_publishes_to_the_lava_labs_artifact_store_and_records_the_url_it_answered(tmp_path):
    with ArtifactStore(TOKEN) as store:
        runner, console, reading = job(
            tmp_path, {"ARTIFACT_TOKEN": TOKEN}, ARTIFACT_URL=f"{store.url}/artifacts/team/",
            ARTIFACT_METHOD="post",
        )
    archive = archive_of(runner)
    artifacts = reading.case("artifacts")
    assert artifacts["result"] == "pass", console
    assert artifacts["reference"] == f"{store.url}/artifacts/team/{archive.name}"
    assert store.files[f"/artifacts/team/{archive.name}"] == archive.read_bytes()
    assert TOKEN not in console


@pytest.mark.parametrize("storage", ["unreachable", "refusing"])
def test_an_upload_that_fails_is_a_failed_case_saying_why(tmp_path, storage):
    with ArtifactStore(TOKEN) as store:
        url = f"http://127.0.0.1:{closed_port()}/rtsoak/" if storage == "unreachable" else f"{store.url}/rtsoak/"
        runner, console, reading = job(tmp_path, {"ARTIFACT_TOKEN": "not-the-token"}, ARTIFACT_URL=url)
    assert reading.case("artifacts")["result"] == "fail", console
    assert "reference" not in reading.case("artifacts")
    curl_exit = {"unreachable": 7, "refusing": 22}[storage]
    assert f"failed (curl exit {curl_exit}, above): the result files are not kept" in console
    assert not store.files
    assert reading.case("verdict"), "the figures and the verdict are recorded all the same"


def test_without_a_url_the_files_are_said_not_kept_and_artifacts_is_skipped(tmp_path):
    runner, console, reading = job(tmp_path, {})
    assert reading.case("artifacts")["result"] == "skip"
    assert "no ARTIFACT_URL: the result files" in console and "are not kept" in console
    assert not list(runner.glob("rtsoak-*.tar.gz")), "nothing packed for nowhere"
