//! `rtsoak probe`: the system check for the CPUs a run would use, and the transport support
//! matrix with the reason for each unsupported one.

use serde::Serialize;

use crate::exit::Outcome;
use crate::preflight;
use crate::profile::{self, CpuTopology, Overrides};
use crate::sysinfo::{SysRoot, host_facts};
use rtsoak_measure::transport;
use rtsoak_record::TransportSupport;
use rtsoak_record::{HostFacts, Level, Severity, SystemCheck};

/// What `rtsoak probe --json` prints.
#[derive(Debug, Serialize)]
struct ProbeReport<'a> {
    /// The machine.
    host: &'a HostFacts,
    /// The whole check.
    system_check: &'a SystemCheck,
    /// Every registry transport with its support.
    support: &'a [TransportSupport],
}

/// Check the system for the RT CPUs the profile would pick here (or `rt_cpus`) and print the
/// verdicts, the matrix and the summary.
pub(super) fn probe(
    json: bool,
    rt_cpus: Option<Vec<usize>>,
    profile_name: &str,
) -> anyhow::Result<Outcome> {
    let root = SysRoot::system();
    let host = host_facts(&root);
    let (name, profile) = profile::load(profile_name)?;
    let overrides = Overrides {
        rt_cpus,
        ..Overrides::default()
    };
    let topology = CpuTopology {
        online: host.online_cpus(),
        isolated: host.isolated_cpus(),
    };
    let plan = profile::resolve(
        &name,
        &profile,
        &overrides,
        &topology,
        &rtsoak_record::transport::Name::all(),
    )?;
    let support = transport::support_matrix(&plan.abi);
    let privileges = preflight::try_privileges(plan.rt.policy, plan.rt.publisher_priority);
    let check = preflight::check(&root, &plan.rt_cpus(), &privileges, &support);
    if json {
        let report = ProbeReport {
            host: &host,
            system_check: &check,
            support: &support,
        };
        println!("{}", rtsoak_report::escape::pretty_json(&report)?);
    } else {
        print!(
            "{}",
            rtsoak_report::probe::render(&check, &host, &support, transport::about)
        );
    }
    Ok(readiness(&check))
}

/// Ready (0) unless a finding is a problem, or a condition that invalidates real-time figures
/// (judged as a result's caveats judge it): then not ready (1).
fn readiness(check: &SystemCheck) -> Outcome {
    let invalidating = check.findings.iter().any(|f| {
        f.level == Level::Problem
            || (f.level != Level::Ok
                && rtsoak_analysis::judge::caveats::check_severity(&f.id) == Severity::Invalidates)
    });
    if invalidating {
        Outcome::NotReady
    } else {
        Outcome::Pass
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preflight::fixture_tests::checked;

    #[test]
    fn a_board_with_only_warnings_is_ready_and_a_non_rt_shared_machine_is_not() {
        // The RT board's only finding is RT throttling, a warning that distorts.
        assert_eq!(readiness(&checked("rt-board-6cpu")), Outcome::Pass);
        // The VM: no PREEMPT_RT (a problem), noise on its two CPUs.
        assert_eq!(readiness(&checked("vm-2cpu")), Outcome::NotReady);
        assert_eq!(Outcome::NotReady.code(), 1);
    }

    #[test]
    fn an_invalidating_warning_alone_makes_the_machine_not_ready() {
        let mut check = checked("rt-board-6cpu");
        let noise = check
            .findings
            .iter_mut()
            .find(|f| f.id == rtsoak_record::CheckId::LayoutNoiseSharesRtCpu)
            .expect("the check judges noise placement");
        noise.level = Level::Warning;
        assert_eq!(readiness(&check), Outcome::NotReady);
    }
}

#[cfg(test)]
mod escaping_tests {
    use std::path::Path;

    use crate::sysinfo::{SysRoot, host_facts};
    use rtsoak_record::text::acts_on;
    use rtsoak_record::{Privileges, Trial};

    /// What another user could have set: a title change, a screen clear, a carriage return
    /// that hides the line, C1 CSI, a right-to-left override, and a line break before a forgery.
    const HOSTILE: &str = "\u{1b}]0;pwned\u{7}\u{1b}[2J\r\u{9b}31m\u{202e}\nFORGED line";

    fn copy_tree(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                copy_tree(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), target).unwrap();
            }
        }
    }

    #[test]
    fn probe_shows_a_hosts_escape_sequences_escaped_on_lines_of_their_own() {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sys/vm-2cpu");
        let dir = tempfile::tempdir().unwrap();
        copy_tree(&fixture, dir.path());
        let proc = dir.path().join("proc");
        for file in [
            "sys/kernel/hostname",
            "sys/kernel/osrelease",
            "sys/kernel/version",
        ] {
            std::fs::write(proc.join(file), format!("{HOSTILE}\n")).unwrap();
        }
        std::fs::write(
            proc.join("cmdline"),
            format!("isolcpus=1 rcu_nocbs={HOSTILE}\n"),
        )
        .unwrap();
        std::fs::write(proc.join("cpuinfo"), format!("model name\t: {HOSTILE}\n")).unwrap();
        std::fs::write(
            proc.join("interrupts"),
            format!("           CPU0       CPU1\n 26:  0  13  IO-APIC   4-edge      {HOSTILE}\n"),
        )
        .unwrap();
        let root = SysRoot::at(dir.path());
        let host = host_facts(&root);
        let granted = Trial::granted("everything");
        let privileges = Privileges {
            rt_priority: granted.clone(),
            memory_lock: granted.clone(),
            pidfd_getfd: granted,
        };
        let cpus = rtsoak_record::RtCpus {
            publisher: 1,
            subscriber: 1,
            noise: vec![0],
        };
        let check = crate::preflight::check(&root, &cpus, &privileges, &[]);
        let text = rtsoak_report::probe::render(&check, &host, &[], |_| "");
        assert!(text.contains("\\x1b]0;pwned\\x07\\x1b[2J\\x0d"), "{text}");
        assert!(!text.chars().any(|c| acts_on(c) && c != '\n'), "{text}");
        assert!(
            !text.lines().any(|line| line.starts_with("FORGED")),
            "{text}"
        );
    }
}
