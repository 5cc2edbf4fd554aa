"""LAVA's own code, driven as a job drives it, without a board: lava-dispatcher's test shell
helpers (unpacked from Debian's lava-dispatcher by .ci/run), its run script writer (`run.sh`
from a test definition and the job's parameters), its `lava-test-runner` and `lava-test-shell`,
and its test shell's reader of the console, which turns signals into the results LAVA records.

A "device" here is a directory standing for the board's root, with the overlay a job's deploy
action puts on it: the helpers in `bin/` with the interpreter line the overlay writer puts in
front of each, `environment` (`export LAVA_JOB_ID=...`) and `secrets` (one `KEY=value` line per
secret of the job), written here as lava_dispatcher/actions/deploy/overlay.py writes them (its
module needs libguestfs, libmagic and netifaces to import, none of which this writing uses).
The runner is started as the test shell action starts it on the board's console
(`. /lava-N/environment`, then `/lava-N/bin/lava-test-runner /lava-N/0`), its stdout and stderr
one stream, as a serial console is. Under RTSOAK_CI=1 a missing piece fails the test instead of
skipping it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

LAVA_DIST = Path("/usr/lib/python3/dist-packages")
JOB_ID = 4242


def missing(message: str):
    if os.environ.get("RTSOAK_CI") == "1":
        pytest.fail(message)
    pytest.skip(message)


def helper_dir() -> Path:
    """lava-dispatcher's test shell helpers (`lava-test-case`, `lava-common-functions`, ...):
    installed, or unpacked by .ci/run into $LAVA_TEST_SHELL_DIR."""
    for candidate in (os.environ.get("LAVA_TEST_SHELL_DIR"), LAVA_DIST / "lava_dispatcher" / "lava_test_shell"):
        if candidate and (Path(candidate) / "lava-test-case").is_file():
            return Path(candidate)
    missing("lava-dispatcher's lava_test_shell helpers not found: set LAVA_TEST_SHELL_DIR (see .ci/run)")


def dispatcher():
    """The dispatcher's modules: the package the helpers came with, on lava-common (apt) and the
    dispatcher's own Python dependencies (pexpect, requests, PyYAML: analysis/requirements.txt)."""
    root = helper_dir().parents[1]
    for path in (root, LAVA_DIST):
        if str(path) not in sys.path:
            sys.path.append(str(path))
    try:
        from lava_dispatcher.actions.deploy import testdef
        from lava_dispatcher.actions.test import shell
    except ImportError as error:
        missing(f"lava-dispatcher cannot be imported ({error}): pip install -r analysis/requirements.txt, "
                "apt-get install lava-common (.ci/run does both)")
    return testdef, shell


def deploy_helpers(bin_dir: Path) -> Path:
    """Every helper in `bin_dir` as the overlay writer deploys it: the interpreter line in front
    (the helpers ship without one), mode 755."""
    bin_dir.mkdir(parents=True)
    for helper in sorted(helper_dir().glob("lava-*")):
        if helper.is_file():
            (bin_dir / helper.name).write_text("#!/bin/sh\n\n" + helper.read_text())
            (bin_dir / helper.name).chmod(0o755)
    return bin_dir


def replay(script: Path, tmp_path: Path) -> str:
    """The console of `sh -e SCRIPT` in a test shell's environment: LAVA's helpers first on
    PATH, LAVA_RESULT_DIR set as lava-test-shell sets it, signals on stdout."""
    bin_dir = deploy_helpers(tmp_path / "lava-bin")
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", LAVA_RESULT_DIR=str(tmp_path / "lava-results"))
    env.pop("KMSG", None)
    completed = subprocess.run(["sh", "-e", str(script)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, env=env, timeout=60)
    assert completed.returncode == 0, completed.stdout
    return completed.stdout


class Data:
    """The job's namespace data an action reads and writes, as a dict: what the actions before it
    in a real job would have put there."""

    def __init__(self, values: dict):
        self.values = values

    def get_namespace_data(self, action, label, key, deepcopy=True, parameters=None):
        return self.values.get((action, label, key))

    def set_namespace_data(self, action, label, key, value, parameters=None):
        self.values[(action, label, key)] = value

    def call_protocols(self):
        pass


@dataclass
class Device:
    """A board's root directory with LAVA's overlay on it and one test definition deployed."""

    root: Path
    secrets: dict = field(default_factory=dict)

    @property
    def lava(self) -> Path:
        return self.root / f"lava-{JOB_ID}"

    def overlay(self) -> None:
        """The overlay as lava-create-overlay writes it: every helper in bin/, the interpreter
        line in front, mode 755; `environment`; `secrets` where the job has any."""
        deploy_helpers(self.lava / "bin")
        for directory in ("tests", "results"):
            (self.lava / directory).mkdir()
        (self.lava / "environment").write_text(f"export LAVA_JOB_ID={JOB_ID}\n")
        if self.secrets:
            (self.lava / "secrets").write_text("".join(f"{k}={v}\n" for k, v in self.secrets.items()))

    def deploy(self, files: dict[str, Path], path: str, name: str, parameters: dict) -> Path:
        """A test definition from a repository holding `files` (its paths in the repository),
        written into the overlay as the test definition actions write it: the repository at the
        runner path, `run.sh` made by the real run script writer, the runner's list."""
        testdef, _ = dispatcher()
        runner = self.lava / "0" / "tests" / f"0_{name}"
        for relative, source in files.items():
            (runner / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, runner / relative)

        class RunScript(Data, testdef.TestRunnerAction):
            pass

        level = "1.3.2.4"
        levels = ("test-runscript-overlay", "test-runscript-overlay", "testdef_levels")
        action = RunScript({("uuid", "overlay_path", f"0_{name}"): str(runner),
                            ("uuid", "runner_path", f"0_{name}"): str(runner),
                            levels: {level: f"0_{name}"}})
        testdef.TestRunnerAction.__init__(action)
        action.level = level
        action.test_uuid = f"{JOB_ID}_1.3.2.4"
        action.parameters = {"namespace": "common", "name": name, "path": path, "from": "git",
                             "repository": "https://example.org/rtsoak.git", "test_name": f"0_{name}",
                             "parameters": parameters}
        action.run(None, None)
        (self.lava / "0" / "lava-test-runner.conf").write_text(f"{runner}\n")
        return runner

    def run(self, path: str, timeout: int = 300) -> str:
        """The test shell as the dispatcher starts it on the console; what the console shows."""
        lava = self.lava
        command = f". {lava}/environment && {lava}/bin/lava-test-runner {lava}/0"
        env = {"PATH": path, "SHELL": "/bin/sh", "HOME": str(self.root), "LANG": "C.UTF-8"}
        completed = subprocess.run(["sh", "-c", command], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   text=True, env=env, timeout=timeout)
        return completed.stdout


@dataclass
class Reading:
    """What the dispatcher made of a console: the results it recorded (test cases, references)
    and the errors a TESTRAISE raised."""

    results: list[dict]
    raised: list[str]
    errors: list[str]

    def case(self, name: str) -> dict:
        found = [r for r in self.results if r.get("case") == name and r.get("definition") != "lava"]
        assert len(found) == 1, (name, found, self.results)
        return found[0]

    def cases(self) -> dict[str, dict]:
        return {r["case"]: r for r in self.results if r.get("definition") != "lava"}


class Recorder:
    """The dispatcher's logger: results and errors kept, everything else dropped."""

    def __init__(self):
        self.recorded, self.errors = [], []

    def results(self, data):
        self.recorded.append(dict(data))

    def error(self, message, *args):
        self.errors.append(message % args if args else message)

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


def read_run(console: str) -> Reading:
    """[`read_console`] of the lines one test run printed, between the signals `run.sh` puts
    around them (the dispatcher records no test case outside a run)."""
    return read_console(f"<LAVA_SIGNAL_STARTRUN 0_rtsoak 1>\n{console}\n<LAVA_SIGNAL_ENDRUN 0_rtsoak 1>\n")


def read_console(console: str) -> Reading:
    """The console read by the test shell action's own code: its patterns searched in order of
    appearance (as pexpect does), each match handed to its `check_patterns`."""
    _, shell = dispatcher()
    from lava_common.exceptions import TestError

    class Reader(Data, shell.TestShellAction):
        pass

    action = Reader({("test-definition", "test-definition", "testdef_index"): ["rtsoak"],
                     ("repo-action", "repo-action", "uuid-list"): ["1"]})
    shell.TestShellAction.__init__(action)
    action.parameters = {"namespace": "common", "stage": 0}
    recorder = Recorder()
    action.logger = recorder
    action.signal_director.logger = recorder
    action._reset_patterns()
    patterns = {name: re.compile(p) for name, p in action.patterns.items() if isinstance(p, str)}
    raised, at = [], 0
    while True:
        found = [(m.start(), name, m) for name, p in patterns.items() if (m := p.search(console, at))]
        if not found:
            break
        _, event, match = min(found, key=lambda f: f[0])
        at = match.end()
        connection = type("Console", (), {"match": match})()
        try:
            action.check_patterns(event, connection, None)
        except TestError as error:
            raised.append(str(error))
    return Reading(recorder.recorded, raised, recorder.errors)
