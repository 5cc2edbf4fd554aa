//! "What this result is worth": the conditions a reader of the figures must know, derived from
//! the host facts, the plan and what each RT worker recorded about itself. Pure: it reads a
//! result document and says nothing it cannot point to in it.

use super::ResultDoc;
use crate::cpulist;
use crate::protocol::Role;

/// Every caveat of `doc`, most serious first.
pub fn caveats(doc: &ResultDoc) -> Vec<String> {
    let mut caveats = Vec::new();
    let host = &doc.host;
    if !host.preempt_rt {
        caveats.push(format!(
            "not a PREEMPT_RT kernel ({}): the figures show this kernel's latencies, not an RT kernel's",
            host.kernel_release.as_deref().unwrap_or("release unknown")
        ));
    }
    let rt_cpus = [doc.plan.rt.publisher_cpu, doc.plan.rt.subscriber_cpu];
    let not_isolated: Vec<usize> = rt_cpus
        .iter()
        .copied()
        .filter(|cpu| !host.isolated.contains(cpu))
        .collect();
    if !not_isolated.is_empty() {
        caveats.push(format!(
            "RT CPU{} {} not isolated (isolcpus=/nohz_full=): other tasks and interrupts may run there",
            if not_isolated.len() > 1 { "s" } else { "" },
            cpulist::format(&not_isolated)
        ));
    }
    caveats.extend(doc.plan.layout_notes.iter().cloned());
    let mut seen = Vec::new();
    for worker in doc.runs.iter().flat_map(|run| &run.workers) {
        let role = match worker.role {
            Role::Publisher => "publisher",
            Role::Subscriber => "subscriber",
            other => other.name(),
        };
        let setup = &worker.setup;
        let mut notes = Vec::new();
        if let Some(error) = &setup.policy_error {
            notes.push(format!(
                "the RT {role} ran {} priority {} instead of {} {}: {error}",
                setup.policy, setup.priority, setup.policy_requested, setup.priority_requested
            ));
        }
        if let Some(error) = &setup.memory_lock_error {
            notes.push(format!(
                "the RT {role}'s memory was not locked, so page faults can add latency: {error}"
            ));
        }
        for note in notes {
            if !seen.contains(&note) {
                seen.push(note.clone());
                caveats.push(note);
            }
        }
    }
    caveats
}
