//! The system check: is this machine set up so that a latency figure measured on it means what
//! an RT engineer would take it to mean? Each finding is `ok`, `warning` or `problem`, says
//! what was found on which subject and what to do about it; the non-ok ones add up to a short
//! "what a result measured here is worth" summary.
//!
//! Owns: judging. [`check`] is pure over its inputs: the `/proc` and `/sys` tree (a
//! [`SysRoot`], a fixture in tests), the CPUs the run uses, the privileges found by trying
//! ([`try_privileges`], the only part that touches the live process), and the transport
//! support matrix. Never changes the system: remedies are told, not applied.
//!
//! The checks live by area: [`kernel`] (RT kernel, io_uring, throttling, timers, compaction of
//! locked pages, clock source), [`isolation`] (isolated CPUs, interrupts, tasks, noise
//! placement), [`cpu`] (frequency, idle states, SMT), [`access`] (privileges, transports), and
//! on a Jetson [`board`] (the bootloader's default entry, its isolation, device interrupts on
//! the RT CPUs). `export::probe` turns a check into the text `rtsoak probe` prints.

mod access;
mod board;
mod cpu;
mod inputs;
mod isolation;
mod kernel;
mod privileges;

pub(crate) use privileges::{WORKER_LOCK_BYTES, try_privileges};

use crate::sysinfo::irqs::irqs_allowed_on;
use crate::sysinfo::kernel::{compact_unevictable_allowed, timer_migration};
use crate::sysinfo::tasks::{irqbalance_pids, own_pid, tasks_allowed_on};
use crate::sysinfo::{SysRoot, host_facts};
use inputs::Inputs;
use rtsoak_record::TransportSupport;
use rtsoak_record::{CheckFacts, CpuIdle, Finding, Level, Privileges, RtCpus, SystemCheck};

/// Judge the machine under `root` for a run on `cpus`, with `privileges` found by trying and
/// the transport `support` matrix. Pure: reads only `root`; never fails (missing files are facts).
pub(crate) fn check(
    root: &SysRoot,
    cpus: &RtCpus,
    privileges: &Privileges,
    support: &[TransportSupport],
) -> SystemCheck {
    let host = host_facts(root);
    let pair = cpus.pair();
    let facts = CheckFacts {
        timer_migration: timer_migration(root),
        compact_unevictable_allowed: compact_unevictable_allowed(root),
        hypervisor: crate::sysinfo::cpus::hypervisor(
            root,
            host.board.as_ref().map_or(&[], |board| &board.compatible),
        ),
        irqbalance_pids: irqbalance_pids(root),
        irqs_on_rt_cpus: irqs_allowed_on(root, &pair),
        tasks_on_rt_cpus: tasks_allowed_on(root, &pair, own_pid(root)),
        rt_cpu_idle_states: pair
            .iter()
            .map(|&cpu| CpuIdle {
                cpu,
                states: crate::sysinfo::cpus::idle_state_details(root, cpu),
            })
            .collect(),
    };
    let inputs = Inputs {
        host: &host,
        cpus,
        facts: &facts,
        privileges,
        support,
    };
    let mut findings = Vec::new();
    findings.extend(kernel::findings(&inputs));
    findings.extend(isolation::findings(&inputs));
    findings.extend(cpu::findings(&inputs));
    findings.extend(access::findings(&inputs));
    let worth = worth(&findings);
    let board = board::check(root, &inputs);
    SystemCheck {
        cpus: cpus.clone(),
        privileges: privileges.clone(),
        facts,
        findings,
        worth,
        board,
    }
}

/// The distinct worth lines of the non-ok findings, problems first, in finding order within a
/// level.
fn worth(findings: &[Finding]) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for level in [Level::Problem, Level::Warning] {
        for line in findings
            .iter()
            .filter(|f| f.level == level)
            .filter_map(|f| f.worth.as_ref())
        {
            if !lines.contains(line) {
                lines.push(line.clone());
            }
        }
    }
    lines
}

#[cfg(test)]
mod caveats_tests;
#[cfg(test)]
pub(crate) mod fixture_tests;
