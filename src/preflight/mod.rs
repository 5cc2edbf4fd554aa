//! The system check: is this machine set up so that a latency figure measured on it means what
//! an RT engineer would take it to mean? Each finding is `ok`, `warning` or `problem`, says
//! what was found on which subject and what to do about it; the non-ok ones add up to a short
//! "what a result measured here is worth" summary.
//!
//! Owns: judging. [`check`] is pure over its inputs: the `/proc` and `/sys` tree (a
//! [`SysRoot`], a fixture in tests), the CPUs the run uses, the privileges found by trying
//! ([`Privileges::gather`], the only part that touches the live process), and the transport
//! support matrix. Never changes the system: remedies are told, not applied.
//!
//! The checks live by area: [`kernel`] (RT kernel, io_uring, throttling, timers, clock
//! source), [`isolation`] (isolated CPUs, interrupts, tasks, noise placement), [`cpu`]
//! (frequency, idle states, SMT), [`access`] (privileges, transports). `export::probe` turns a
//! check into the text `rtsoak probe` prints.

#![forbid(unsafe_code)]

mod access;
mod cpu;
mod isolation;
mod kernel;
mod privileges;

use serde::{Deserialize, Serialize};

pub use privileges::{Privileges, Trial, WORKER_LOCK_BYTES};

use crate::plan::RunPlan;
use crate::record::TransportSupport;
use crate::record::{Finding, Level};
use crate::sysinfo::cpus::IdleState;
use crate::sysinfo::irqs::{Irq, irqs_allowed_on};
use crate::sysinfo::tasks::{Task, irqbalance_pids, own_pid, tasks_allowed_on};
use crate::sysinfo::{HostFacts, SysRoot, host_facts, kernel::timer_migration};

/// The CPUs a run uses (or would use), as the check judges them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RtCpus {
    /// CPU of the RT publisher.
    pub publisher: usize,
    /// CPU of the RT subscriber.
    pub subscriber: usize,
    /// CPUs of noise and the coordinator.
    pub noise: Vec<usize>,
}

impl RtCpus {
    /// The CPUs of a resolved plan.
    pub fn from_plan(plan: &RunPlan) -> Self {
        RtCpus {
            publisher: plan.rt.publisher_cpu,
            subscriber: plan.rt.subscriber_cpu,
            noise: plan.noise_cpus.clone(),
        }
    }

    /// Publisher and subscriber CPU, sorted.
    pub fn pair(&self) -> Vec<usize> {
        let mut pair = vec![self.publisher, self.subscriber];
        pair.sort_unstable();
        pair.dedup();
        pair
    }
}

/// One CPU's idle states.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuIdle {
    /// The CPU.
    pub cpu: usize,
    /// Its cpuidle states in order.
    pub states: Vec<IdleState>,
}

/// What the check read beyond the host facts a result already records, kept so a result can be
/// judged again later.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CheckFacts {
    /// `/proc/sys/kernel/timer_migration`.
    pub timer_migration: Option<u32>,
    /// Pids of running `irqbalance` processes.
    pub irqbalance_pids: Vec<i32>,
    /// Numbered interrupts whose affinity includes an RT CPU.
    pub irqs_on_rt_cpus: Vec<Irq>,
    /// Threads (other than rtsoak's own) allowed on an RT CPU.
    pub tasks_on_rt_cpus: Vec<Task>,
    /// cpuidle states of the RT CPUs.
    pub rt_cpu_idle_states: Vec<CpuIdle>,
}

/// The whole check, as `rtsoak probe --json` prints it and every result records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SystemCheck {
    /// The CPUs judged.
    pub cpus: RtCpus,
    /// What trying found this process may do.
    pub privileges: Privileges,
    /// What was read.
    pub facts: CheckFacts,
    /// Every verdict, grouped by area (kernel, isolation, CPUs, access).
    pub findings: Vec<Finding>,
    /// "What a result measured here is worth": one line per distinct non-ok condition,
    /// problems first. Empty on a properly set up RT machine.
    pub worth: Vec<String>,
}

impl SystemCheck {
    /// The most serious level among the findings.
    pub fn verdict(&self) -> Level {
        self.findings
            .iter()
            .map(|f| f.level)
            .max()
            .unwrap_or(Level::Ok)
    }

    /// Findings with this id.
    pub fn by_id<'a>(&'a self, id: &'a str) -> impl Iterator<Item = &'a Finding> + 'a {
        self.findings.iter().filter(move |f| f.id == id)
    }
}

/// Everything a single check function may look at.
struct Inputs<'a> {
    host: &'a HostFacts,
    cpus: &'a RtCpus,
    facts: &'a CheckFacts,
    privileges: &'a Privileges,
    support: &'a [TransportSupport],
}

impl Inputs<'_> {
    /// CPUs to move work to: online, outside the RT pair, not isolated (or, when that leaves
    /// none, just outside the RT pair). Empty on a machine with only the RT pair's CPUs.
    fn housekeeping(&self) -> Vec<usize> {
        let pair = self.cpus.pair();
        let outside: Vec<usize> = self
            .host
            .online
            .iter()
            .copied()
            .filter(|cpu| !pair.contains(cpu))
            .collect();
        let not_isolated: Vec<usize> = outside
            .iter()
            .copied()
            .filter(|cpu| !self.host.isolated.contains(cpu))
            .collect();
        if not_isolated.is_empty() {
            outside
        } else {
            not_isolated
        }
    }
}

/// Judge the machine under `root` for a run on `cpus`, with `privileges` found by trying and
/// the transport `support` matrix. Pure: reads only `root`; never fails (missing files are facts).
pub fn check(
    root: &SysRoot,
    cpus: &RtCpus,
    privileges: &Privileges,
    support: &[TransportSupport],
) -> SystemCheck {
    let host = host_facts(root);
    let pair = cpus.pair();
    let facts = CheckFacts {
        timer_migration: timer_migration(root),
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
    SystemCheck {
        cpus: cpus.clone(),
        privileges: privileges.clone(),
        facts,
        findings,
        worth,
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

/// `CPU 4` or `CPUs 4-5`.
fn cpus_named(cpus: &[usize]) -> String {
    format!(
        "CPU{} {}",
        if cpus.len() == 1 { "" } else { "s" },
        crate::cpulist::format(cpus)
    )
}
