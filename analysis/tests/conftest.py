"""Fixtures: a real short rtsoak compare run in this session, and helpers to run the scripts.

The result comes from the built binary ($RTSOAK_BIN, else target/{debug,release}/rtsoak under
$CARGO_TARGET_DIR or the repository, else `cargo build`), so the tests check the scripts against
the JSON rtsoak writes today, never a stored copy.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ANALYSIS_DIR = Path(__file__).resolve().parent.parent
REPO_DIR = ANALYSIS_DIR.parent
# Long enough for several intervals per run, short enough for CI (about 20 s for 4 transports).
RUN_ARGS = ["compare", "-q", "--profile", "ci", "--duration", "3s", "--interval", "1s"]
# 0 pass, 1 threshold breached, 4 messages lost, 7 inconclusive (a starved publisher missed many
# periods): a result was written and is worth plotting.
EXIT_CODES_WITH_RESULT = (0, 1, 4, 7)


def candidate_binaries() -> list[Path]:
    if os.environ.get("RTSOAK_BIN"):
        return [Path(os.environ["RTSOAK_BIN"])]
    target_dirs = [Path(os.environ["CARGO_TARGET_DIR"])] if os.environ.get("CARGO_TARGET_DIR") else []
    target_dirs.append(REPO_DIR / "target")
    return [d / profile / "rtsoak" for d in target_dirs for profile in ("debug", "release")]


def rtsoak_binary() -> Path:
    for candidate in candidate_binaries():
        if candidate.is_file():
            return candidate
    if os.environ.get("RTSOAK_BIN"):
        pytest.fail(f"RTSOAK_BIN={os.environ['RTSOAK_BIN']} is not a file; point it at a built rtsoak")
    subprocess.run(["cargo", "build", "--locked"], cwd=REPO_DIR, check=True)
    for candidate in candidate_binaries():
        if candidate.is_file():
            return candidate
    pytest.fail("cargo build succeeded but no target/debug/rtsoak was found; set RTSOAK_BIN")


def saved_compare(tmp_path_factory, name: str, args: list[str]) -> Path:
    """The result.json of a real `rtsoak` run with `args`, saved under a temporary `name`."""
    output_dir = tmp_path_factory.mktemp("rtsoak") / name
    completed = subprocess.run(
        [str(rtsoak_binary()), *args, "-o", str(output_dir)], capture_output=True, text=True, timeout=300
    )
    result = output_dir / "result.json"
    if completed.returncode not in EXIT_CODES_WITH_RESULT or not result.is_file():
        pytest.fail(f"rtsoak exited {completed.returncode} without a result:\n{completed.stderr}")
    return result


@pytest.fixture(scope="session")
def real_result(tmp_path_factory) -> Path:
    """The result.json of a real short `rtsoak compare` of every transport."""
    return saved_compare(tmp_path_factory, "compare", RUN_ARGS)


@pytest.fixture(scope="session")
def explained_result(tmp_path_factory) -> Path:
    """The result.json of a real short `rtsoak compare` whose spikes were explained (root needed
    for tracing; `--explain` because CI's 2 CPUs are all RT CPUs)."""
    args = ["compare", "-q", "--profile", "ci", "--explain", "-t", "futex,msg-ring", "--duration", "3s"]
    return saved_compare(tmp_path_factory, "explained", args)


@pytest.fixture(scope="session")
def real_data(real_result) -> dict:
    return json.loads(real_result.read_text())


def run_script(name: str, *args, expect_code: int = 0) -> subprocess.CompletedProcess:
    completed = subprocess.run(
        [sys.executable, str(ANALYSIS_DIR / name), *map(str, args)], capture_output=True, text=True, timeout=300
    )
    assert completed.returncode == expect_code, f"{name} exited {completed.returncode}:\n{completed.stderr}"
    return completed


def parse_table(stdout: str, max_columns: int | None = None) -> list[dict]:
    """Rows of a printed table as dicts keyed by its header (the last column may hold spaces)."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    headers = lines[0].split()
    count = max_columns or len(headers)
    return [dict(zip(headers, line.split(None, count - 1))) for line in lines[1:]]


def write_result(data: dict, directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "result.json"
    path.write_text(json.dumps(data))
    return path


def edited_copy(data: dict, started_at: str, scale_max: float, over_threshold_add: int) -> dict:
    """A synthetic night: a real result with its start time, maxima and over-threshold counts edited."""
    variant = copy.deepcopy(data)
    variant["started_at"] = started_at
    for run in variant["runs"]:
        for series in run["series"].values():
            summary = series["summary"]
            if summary["count"]:
                summary["max_ns"] = int(summary["max_ns"] * scale_max)
                summary["over_threshold"] += over_threshold_add
    return variant


def measured_runs(data: dict) -> list[dict]:
    return [run for run in data["runs"] if run["integrity"]["sent"] > 0]


def assert_images(directory: Path, name: str) -> None:
    png, svg = directory / f"{name}.png", directory / f"{name}.svg"
    assert png.is_file() and png.stat().st_size > 1000, f"{png} missing or empty"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", f"{png} is not a PNG"
    assert svg.is_file() and "<svg" in svg.read_text()[:2000], f"{svg} missing or not SVG"
