#!/usr/bin/env python3
"""Check what the packaged units did under a real systemd (files from scripts/systemd-vm-test).

Usage: check_systemd_vm.py [--kernel NAME] [--install-only] DIR

DIR is the 9p share scripts/vm/systemd-check.sh wrote into, inside a VM booted with systemd as
PID 1. Checked: the package installed with apt (status `install ok installed`, the profiles as
conffiles, /usr/bin/rtsoak, its worker program in /usr/libexec/rtsoak), systemd-analyze verify accepts the units; `systemctl start
rtsoak@vmpass.service` saved a PASS result and left the unit inactive, not failed, with the
summary lines in its journal and the textfile written; `systemctl stop` in the middle of
rtsoak@vmlong.service left it inactive (not failed) and its result marked interrupted; a breach
(rtsoak@vmbreach.service, a 1 us limit) failed the unit with exit 1 and ran its OnFailure= unit;
the started timer lists its next elapse; `apt-get purge` then leaves nothing that names rtsoak
under /etc, /usr or /var (the package's files, enabled timers, results, the textfile). With
--install-only (a chroot, no boot), the install and the purge of what the units would leave.
Prints one line per check (and the paths the purge left that the install did not find); exits
1 if any failed.
Python 3 standard library only.
"""

import argparse
import json
import sys
from pathlib import Path

PROFILES = ["ci", "default", "jetson-orin-nano", "nightly"]


class Checks:
    def __init__(self) -> None:
        self.failed = 0

    def check(self, ok: bool, what: str, detail: str = "") -> None:
        print(f"{'ok  ' if ok else 'FAIL'} {what}{'' if ok or not detail else ': ' + detail}")
        self.failed += 0 if ok else 1


def read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def show(share: Path, step: str) -> dict:
    """`systemctl show` properties of a step's unit, as a dict."""
    pairs = (line.split("=", 1) for line in read(share / f"{step}.show").splitlines() if "=" in line)
    return dict(pairs)


def result(share: Path, step: str) -> dict | None:
    try:
        return json.loads((share / f"{step}.result.json").read_text())
    except (OSError, ValueError):
        return None


def check_install(share: Path, c: Checks) -> None:
    c.check(read(share / "install.exit").strip() == "0", "apt-get install ./rtsoak_*.deb",
            read(share / "install.log")[-600:])
    c.check(read(share / "dpkg-status.txt").startswith("install ok installed"),
            "dpkg says the package is installed", read(share / "dpkg-status.txt"))
    conffiles = read(share / "conffiles.txt")
    missing = [p for p in PROFILES if f"/etc/rtsoak/profiles/{p}.toml" not in conffiles]
    c.check(not missing, "the profiles are conffiles", f"missing {missing}")
    c.check(read(share / "which.txt").strip() == "/usr/bin/rtsoak", "rtsoak is /usr/bin/rtsoak",
            read(share / "which.txt"))
    worker = read(share / "worker.txt")
    c.check(worker.startswith("-rwxr-xr-x 1 root root") and "/usr/libexec/rtsoak/rtsoak-worker" in worker,
            "its worker program is /usr/libexec/rtsoak/rtsoak-worker, root's", worker)
    c.check(not read(share / "worker-on-path.txt").strip(), "the worker program is no command on PATH",
            read(share / "worker-on-path.txt"))
    c.check(read(share / "verify.exit").strip() == "0" and not read(share / "verify.txt").strip(),
            "systemd-analyze verify accepts the packaged units", read(share / "verify.txt"))


# What the package made, and what was made for it, before the purge: each must have been there.
MADE = [
    "/usr/bin/rtsoak",
    "/usr/libexec/rtsoak/rtsoak-worker",
    "/etc/rtsoak/profiles/nightly.toml",
    "/usr/lib/systemd/system/rtsoak-nightly.timer",
    "/etc/systemd/system/timers.target.wants/rtsoak-nightly.timer",
    "/var/lib/rtsoak",
]


def check_purge(share: Path, c: Checks) -> None:
    """`apt-get purge` left nothing of the package: no path under /etc, /usr or /var that names
    rtsoak, where the package, its enabled timers, its results and its textfile were."""
    c.check(read(share / "purge.exit").strip() == "0", "apt-get purge rtsoak", read(share / "purge.log")[-600:])
    before_install = set(read(share / "before-install.txt").splitlines())
    before = set(read(share / "before-purge.txt").splitlines())
    after = set(read(share / "after-purge.txt").splitlines())
    c.check(bool(before_install) and bool(after), "the file lists were written")
    missing = [path for path in MADE if path not in before]
    textfiles = [p for p in before if p.startswith("/var/lib/prometheus/node-exporter/rtsoak-")]
    instances = [p for p in before if p.startswith("/etc/systemd/system/timers.target.wants/rtsoak@")]
    c.check(not missing and textfiles and instances,
            "before the purge: the package, its enabled timers (an instance too), results and textfile",
            f"missing {missing}, textfiles {textfiles}, instances {instances}")
    # The test's own unit (rtsoak-vm-check.service) was there before the package.
    left = sorted(p for p in after - before_install if "rtsoak" in p)
    c.check(not left, "after the purge nothing named rtsoak is left under /etc, /usr or /var", "\n  ".join(left))
    new = sorted(after - before_install)
    print(f"     paths under /etc, /usr, /var after the purge that were not there before the install: {len(new)}")
    for path in new:
        print(f"       {path}")


def check_profiles(share: Path, c: Checks) -> None:
    profiles = read(share / "profiles.txt")
    c.check(all(f"{name}" in profiles for name in ("vmpass", "vmlong", "vmbreach"))
            and "installed" in profiles, "rtsoak profiles lists the installed profiles", profiles)


def check_pass(share: Path, c: Checks) -> None:
    state = show(share, "pass")
    c.check(read(share / "pass.exit").strip() == "0", "systemctl start rtsoak@vmpass.service succeeded",
            f"exit {read(share / 'pass.exit').strip()}, {state}")
    c.check(state.get("ActiveState") == "inactive" and state.get("Result") == "success",
            "the passing unit is inactive and not failed", str(state))
    doc = result(share, "pass")
    verdict = (doc or {}).get("verdict") or {}
    c.check(doc is not None and verdict.get("status") == "pass" and not doc.get("interrupted"),
            "it saved a PASS result", f"verdict {verdict}" if doc else read(share / "pass.dir"))
    if doc:
        c.check(doc.get("plan", {}).get("profile") == "/etc/rtsoak/profiles/vmpass.toml",
                "the result names the installed profile it ran", str(doc.get("plan", {}).get("profile")))
    journal = read(share / "pass.journal")
    lines = journal.splitlines()
    c.check(any(line.startswith("rtsoak eventfd: ") for line in lines)
            and any(line.startswith("rtsoak verdict: PASS") for line in lines),
            "the journal holds the transport's summary line and the verdict", journal[-800:])
    c.check("rtsoak-vmpass.prom" in read(share / "textfile.txt"),
            "the textfile for node_exporter was written", read(share / "textfile.txt"))


def check_stop(share: Path, c: Checks) -> None:
    state = show(share, "stop")
    c.check(state.get("ActiveState") == "inactive" and state.get("Result") == "success",
            "systemctl stop mid-run leaves the unit inactive, not failed", str(state))
    doc = result(share, "stop")
    c.check(doc is not None and doc.get("interrupted") is True,
            "the stopped run's result is saved and marked interrupted",
            "no result" if doc is None else f"interrupted = {doc.get('interrupted')}")


def check_breach(share: Path, c: Checks) -> None:
    state = show(share, "breach")
    c.check(state.get("ActiveState") == "failed" and state.get("ExecMainStatus") == "1",
            "a breach fails the unit with exit 1", str(state))
    doc = result(share, "breach")
    verdict = (doc or {}).get("verdict") or {}
    c.check(verdict.get("status") == "fail", "the breaching run's result says FAIL", str(verdict)[:300])
    c.check(read(share / "alert.txt").strip() == "rtsoak@vmbreach.service failed",
            "its OnFailure= unit ran", read(share / "alert.txt") or "no alert.txt")


def check_timer(share: Path, c: Checks) -> None:
    state = show(share, "timer")
    next_elapse = state.get("NextElapseUSecRealtime", "")
    c.check(state.get("ActiveState") == "active" and next_elapse not in ("", "0", "n/a"),
            "the started timer lists its next elapse", str(state))
    c.check("rtsoak@vmpass.timer" in read(share / "timer.txt"), "list-timers shows it",
            read(share / "timer.txt"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernel", default="the VM's kernel")
    parser.add_argument("--install-only", action="store_true")
    parser.add_argument("share", type=Path)
    args = parser.parse_args()
    c = Checks()
    if not (args.share / "check.done").exists():
        print(f"FAIL the check script did not finish inside the VM ({args.kernel}); its log:")
        print(read(args.share / "check.log")[-3000:])
        return 1
    print(f"systemd VM: {read(args.share / 'os-release.txt').strip()}, "
          f"{read(args.share / 'systemd-version.txt').strip()}, {args.kernel}")
    steps = [check_install, check_purge] if args.install_only else [
        check_install, check_profiles, check_pass, check_stop, check_breach, check_timer, check_purge]
    for step in steps:
        step(args.share, c)
    if c.failed:
        print(f"{c.failed} check(s) failed; the VM's log is {args.share / 'check.log'}")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
