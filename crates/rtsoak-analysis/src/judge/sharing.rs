//! The caveats that depend on what ran beside the RT pair, derived from the runs rather than
//! from the plan's intent or the system check (which is made before anything runs and cannot
//! know whether there will be noise): noise on the RT pair's CPUs, the coordinator on them, and
//! RT throttling, which matters only where busy real-time noise ran.
//!
//! Pure: reads a result document and says nothing it cannot point to in it.

use rtsoak_record::cpulist;
use rtsoak_record::result::ResultDoc;
use rtsoak_record::{Caveat, CaveatKind, CheckId, Severity};

/// The check findings whose truth depends on what ran: their caveats come from here, not from
/// the check's worth line.
pub(super) const RUN_DERIVED: [CheckId; 2] =
    [CheckId::LayoutNoiseSharesRtCpu, CheckId::SchedRtThrottling];

/// Every caveat of what shared the RT pair's CPUs, and of throttling where it could bite.
pub(super) fn caveats(doc: &ResultDoc) -> Vec<Caveat> {
    let mut caveats = Vec::new();
    let shared = noise_on_rt_cpus(doc);
    if !shared.is_empty() {
        let text = format!(
            "noise shares {} with the RT pair: latencies include that interference",
            cpus_named(&shared)
        );
        caveats.push(Caveat::new(
            Severity::Invalidates,
            CheckId::LayoutNoiseSharesRtCpu,
            text,
        ));
    }
    let coordinator = coordinator_on_rt_cpus(doc);
    if !coordinator.is_empty() {
        let text = format!(
            "the coordinator shares {} with the RT pair (no CPU of its own): it wakes there, \
             30 % into a period where the run recorded its pacing, and its kernel work can \
             delay RT wakeups",
            cpus_named(&coordinator)
        );
        caveats.push(Caveat::new(
            Severity::Distorts,
            CaveatKind::CoordinatorSharesRtCpu,
            text,
        ));
    }
    if busy_rt_noise_ran(doc)
        && let Some(line) = check_line(doc, &CheckId::SchedRtThrottling)
    {
        caveats.push(Caveat::new(
            Severity::Distorts,
            CheckId::SchedRtThrottling,
            line,
        ));
    }
    caveats
}

/// The RT CPUs that noise of a run with noise was pinned to (or, in results that did not record
/// the noise's CPUs, the plan's noise CPUs). Empty when no run had noise.
fn noise_on_rt_cpus(doc: &ResultDoc) -> Vec<usize> {
    let pair = rt_pair(doc);
    let mut shared: Vec<usize> = doc
        .runs
        .iter()
        .filter(|run| run.noise.enabled)
        .flat_map(|run| {
            if run.noise.cpus.is_empty() {
                &doc.plan.noise_cpus
            } else {
                &run.noise.cpus
            }
        })
        .copied()
        .filter(|cpu| pair.contains(cpu))
        .collect();
    shared.sort_unstable();
    shared.dedup();
    shared
}

/// The RT CPUs the coordinator ran on, when anything ran at all: it is pinned to the plan's
/// housekeeping CPUs, which never include an RT CPU, and where there are none it is not pinned
/// and shares both. A run that recorded its pacing says so itself (`phase_locked`: it had no
/// CPU of its own); older results are read from the plan.
fn coordinator_on_rt_cpus(doc: &ResultDoc) -> Vec<usize> {
    let recorded: Vec<bool> = doc
        .runs
        .iter()
        .filter_map(|run| run.coordinator.as_ref().map(|c| c.phase_locked))
        .collect();
    let shared = if recorded.is_empty() {
        !doc.runs.is_empty() && doc.plan.housekeeping_cpus.is_empty()
    } else {
        recorded.contains(&true)
    };
    if !shared {
        return Vec::new();
    }
    let mut pair = rt_pair(doc).to_vec();
    pair.sort_unstable();
    pair.dedup();
    pair
}

/// Whether a run had real-time busy bursts that ran: the only work rtsoak starts that can use
/// up RT throttling's budget (the RT pair and the queue noise sleep between periods).
fn busy_rt_noise_ran(doc: &ResultDoc) -> bool {
    doc.runs
        .iter()
        .any(|run| run.noise.enabled && run.noise.bursts.as_ref().is_some_and(|b| b.bursts > 0))
}

/// The system check's worth line of the non-ok finding `id`, if there is one.
fn check_line(doc: &ResultDoc, id: &CheckId) -> Option<String> {
    let check = doc.system_check.as_ref()?;
    check
        .by_id(id)
        .filter(|f| f.level != rtsoak_record::Level::Ok)
        .find_map(|f| f.worth.clone())
}

fn rt_pair(doc: &ResultDoc) -> [usize; 2] {
    [doc.plan.rt.publisher_cpu, doc.plan.rt.subscriber_cpu]
}

/// `CPU 4` or `CPUs 4-5`: how caveats and the system check's findings name CPUs.
pub fn cpus_named(cpus: &[usize]) -> String {
    format!(
        "CPU{} {}",
        if cpus.len() == 1 { "" } else { "s" },
        cpulist::format(cpus)
    )
}
