#!/usr/bin/env python3
"""Check what kernel campaigns left (files brought out by scripts/campaign-vm-test).

Usage:
  check_campaign.py qemu --exit N --bisect-exit N --parent RELEASE --child RELEASE DIR
  check_campaign.py kexec --parent RELEASE --child RELEASE DIR

qemu: DIR is the campaign directory `rtsoak campaign run` wrote. Three boots A B A, each the
point meant (its release, its token on its command line), each measured with a valid bench
result of that kernel; the document says TCG and the verdict is inconclusive for emulation
alone; `run` exited 7 and `report --bisect` 125; the JUnit export parses.

kexec: DIR is the guest's share. Three campaigns ran one after another in one systemd guest:
1. A B A across kernels (parent 6.1-rt, child 6.12-rt), 2. a command-line A/B on 6.12-rt
(mitigations=off), 3. a child whose kernel panics. For each: every boot ran the point meant
(release, token, command line) and is one of the guest's boots as the guest itself logged them
(the state survived the reboots), the table and the verdict agree with the document, the unit
is disabled at the end, no kernel is left loaded, and the machine is back in its first kernel
with its first command line. The panicking point is recorded once as fell_back, and the
campaign saw exactly the two boots it caused (no loop). Timings under emulation mean nothing
and are never checked. Python 3 standard library only.
"""

import argparse
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

TOKEN = "rtsoak.campaign="
VERDICT_EXITS = {"regression": 3, "inconclusive": 7, "no-change": 0, "improvement": 0}
BISECT_EXITS = {"regression": 1, "inconclusive": 125, "no-change": 0, "improvement": 0}


class Checker:
    """Collects check outcomes; every check prints a line."""

    def __init__(self):
        self.failures = 0

    def check(self, ok, what, detail=""):
        print(f"{'ok  ' if ok else 'FAIL'} {what}" + (f" ({detail})" if detail and not ok else ""))
        if not ok:
            self.failures += 1
        return ok


def load(path):
    return json.loads(Path(path).read_text())


def boots_meant(c, doc, releases, label):
    """Every planned boot whose last try measured ran its point's release with its token."""
    for boot in doc["boots"]:
        slot, last = boot["slot"], boot["attempts"][-1]
        role = slot["role"]
        reached = last.get("reached")
        name = f"{label}: boot {slot['seq']} ({role})"
        if last.get("outcome", {}).get("kind") != "measured":
            continue
        c.check(reached is not None, f"{name} came up as the boot meant")
        if reached is None:
            continue
        facts = reached["facts"]
        c.check(facts["release"] == releases[role], f"{name} runs {releases[role]}", facts["release"])
        c.check(f"{TOKEN}{last['token']}" in facts["cmdline"].split(), f"{name} carries its token",
                facts["cmdline"])
        result = boot.get("result", {}).get("bench")
        c.check(result is not None and result["valid"], f"{name} saved a valid bench result")
        if result:
            c.check(result["host"]["kernel_release"] == facts["release"],
                    f"{name}'s result was measured on that kernel", result["host"]["kernel_release"])


def check_qemu(args):
    c = Checker()
    directory = Path(args.dir)
    doc = load(directory / "campaign.json")
    c.check(doc["schema_version"] == 1 and doc["command"] == "campaign", "a campaign document, version 1")
    c.check(doc["driver"] == "qemu" and doc.get("accel") == "tcg", "the qemu driver, under TCG")
    c.check(len(doc["boots"]) == 3, "three boots: parent, child, parent", len(doc["boots"]))
    outcomes = [b["attempts"][-1].get("outcome", {}).get("kind") for b in doc["boots"]]
    c.check(outcomes == ["measured"] * 3, "every boot measured", outcomes)
    c.check(all(len(b["attempts"]) == 1 for b in doc["boots"]), "one try each")
    boots_meant(c, doc, {"parent": args.parent, "child": args.child}, "qemu")
    judgement = doc["judgement"]
    kinds = [r["kind"] for r in judgement["reasons"]]
    c.check(judgement["verdict"] == "inconclusive" and kinds == ["emulated"],
            "inconclusive because of emulation, and nothing else", (judgement["verdict"], kinds))
    rows = judgement.get("bench", [])
    c.check(len(rows) == 1 and len(rows[0]["boots"]) == 3 and len(rows[0]["comparison"]["means_ns_per_op"]) == 3,
            "one A/B/A row of three boots", rows)
    c.check(doc["phase"].get("phase") == "finished", "the campaign finished", doc["phase"])
    c.check(args.exit == 7, "`campaign run` exited 7 (inconclusive)", args.exit)
    c.check(args.bisect_exit == 125, "`campaign report --bisect` exited 125 (skip)", args.bisect_exit)
    junit = ET.parse(directory.parent / "junit.xml").getroot()
    cases = junit.findall(".//testcase")
    c.check(len(cases) == 2 and cases[0].find("skipped") is not None,
            "the JUnit export: the campaign skipped, one row", [e.get("name") for e in cases])
    return c.failures


def guest_boots(share):
    """The guest's own log of its boots: boot id -> (release, cmdline, stage, unit)."""
    boots = []
    for line in (share / "boots.tsv").read_text().splitlines():
        boot_id, release, cmdline, stage, unit = line.split("\t")
        boots.append({"boot_id": boot_id, "release": release, "cmdline": cmdline,
                      "stage": stage.split("=")[1], "unit": unit.split("=")[1]})
    return boots


def check_end(c, share, stage, doc, start):
    end = dict(line.split("=", 1) for line in (share / f"end-{stage}.txt").read_text().splitlines())
    c.check(end["unit"] == "disabled", f"campaign {stage}: the unit is disabled at the end", end["unit"])
    c.check(end["kexec_loaded"] == "0", f"campaign {stage}: no kernel is left loaded", end["kexec_loaded"])
    c.check(end["release"] == start["release"] and end["cmdline"] == start["cmdline"],
            f"campaign {stage}: the machine is back in its first kernel and command line",
            (end["release"], end["cmdline"]))
    phase = doc["phase"]
    c.check(phase.get("phase") == "finished" and phase["left_in"]["kind"] == "start",
            f"campaign {stage}: the document says it returned to the start", phase)
    verdict = doc["judgement"]["verdict"]
    exit_code = int((share / f"bisect-{stage}.exit").read_text())
    c.check(exit_code == BISECT_EXITS[verdict], f"campaign {stage}: --bisect exits {BISECT_EXITS[verdict]} for {verdict}",
            exit_code)
    table = (share / f"campaign-{stage}" / "table.txt").read_text()
    c.check(f"verdict: {verdict.replace('-', ' ')}" in table, f"campaign {stage}: the table ends in its verdict",
            table[-300:])
    print(table)


def check_state_survived(c, stage, doc, boots):
    """Each boot the campaign measured is one the guest logged, with that release and token."""
    by_id = {b["boot_id"]: b for b in boots}
    for boot in doc["boots"]:
        reached = boot["attempts"][-1].get("reached")
        if not reached:
            continue
        logged = by_id.get(reached["facts"]["boot_id"])
        c.check(logged is not None and logged["release"] == reached["facts"]["release"]
                and logged["unit"] == "enabled",
                f"campaign {stage}: boot {boot['slot']['seq']} is a boot the guest logged, the unit enabled there",
                logged)


def check_kexec(args):
    c = Checker()
    share = Path(args.dir)
    c.check((share / "check.done").exists(), "the guest ran all three campaigns")
    c.check((share / "install.exit").read_text().strip() == "0", "the package installed")
    c.check((share / "verify.exit").read_text().strip() == "0", "systemd-analyze verify accepts the unit",
            (share / "verify.txt").read_text())
    boots = guest_boots(share)
    start = boots[0]
    c.check(TOKEN not in start["cmdline"], "the guest started in its own kernel", start)
    releases = {"parent": args.parent, "child": args.child}
    for stage, releases_of in [(1, releases), (2, {"parent": args.child, "child": args.child}),
                               (3, {"parent": args.child, "child": args.child})]:
        path = share / f"campaign-{stage}" / "campaign.json"
        if not c.check(path.exists(), f"campaign {stage} left its document"):
            continue
        doc = load(path)
        state = load(share / f"campaign-{stage}" / "state.json")
        c.check(state["campaign_id"] == doc["campaign_id"] and doc["driver"] == "kexec",
                f"campaign {stage}: its state and document agree")
        boots_meant(c, doc, releases_of, f"campaign {stage}")
        check_state_survived(c, stage, doc, boots)
        check_end(c, share, stage, doc, start)
        outcomes = [b["attempts"][-1].get("outcome", {}).get("kind") for b in doc["boots"]]
        if stage in (1, 2):
            c.check(outcomes == ["measured"] * 3, f"campaign {stage}: every boot measured", outcomes)
        if stage == 2:
            c.check(doc["judgement"]["varied_parameters"] == ["mitigations"],
                    "campaign 2 varies mitigations, left out of the fingerprint",
                    doc["judgement"]["varied_parameters"])
            child = [b for b in doc["boots"] if b["slot"]["role"] == "child"][0]
            cmdline = child["attempts"][-1]["reached"]["facts"]["cmdline"].split()
            c.check("mitigations=off" in cmdline, "campaign 2's child booted with mitigations=off", cmdline)
        if stage == 3:
            check_panic(c, doc, boots)
    return c.failures


def check_panic(c, doc, boots):
    child = doc["boots"][1]
    attempts = child["attempts"]
    outcome = attempts[-1].get("outcome", {})
    c.check(len(attempts) == 1 and outcome.get("kind") == "fell_back",
            "campaign 3: the panicking child is recorded once, as fell back", attempts)
    c.check(outcome.get("found", {}).get("release") == doc["start"]["facts"]["release"],
            "campaign 3: it fell back to the default kernel", outcome)
    stage3 = [b for b in boots if b["stage"] == "3"]
    c.check(len(stage3) == 2, "campaign 3 saw exactly the two boots it caused (no loop)",
            [(b["release"], b["cmdline"]) for b in stage3])
    kinds = [r["kind"] for r in doc["judgement"]["reasons"]]
    c.check(doc["judgement"]["verdict"] == "inconclusive" and "boots_missing" in kinds,
            "campaign 3 is inconclusive: the child never measured", kinds)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mode", choices=["qemu", "kexec"])
    parser.add_argument("--exit", type=int, default=None)
    parser.add_argument("--bisect-exit", type=int, default=None)
    parser.add_argument("--parent", required=True)
    parser.add_argument("--child", required=True)
    parser.add_argument("dir")
    args = parser.parse_args()
    failures = check_qemu(args) if args.mode == "qemu" else check_kexec(args)
    print(f"{failures} check(s) failed" if failures else "every check passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
