//! Whether the figures are real-time figures at all: every caveat marked `invalidates` is
//! answered by the verdict, so none stands under a plain PASS. One rule decides how:
//!
//! - the profile **requires** the condition's absence (`verdict.require_*`): the machine is not
//!   what the lab said it is, a breach, so FAIL;
//! - the profile **accepts** it (`verdict.development`, for the conditions that describe a
//!   development machine: no PREEMPT_RT, noise on the RT CPUs): PASS stays possible, and names
//!   the condition;
//! - neither: the figures cannot answer what the profile asks, so INCONCLUSIVE.
//!
//! Pure: reads a result document and what the verdict found so far.

use super::caveats::ranked;
use super::sharing::NOISE_SHARES;
use rtsoak_record::Severity;
use rtsoak_record::plan::Limits;
use rtsoak_record::result::ResultDoc;
use rtsoak_record::result::verdict::{Accepted, Breach, Inconclusive, InconclusiveKind, Limit};

/// The kernel is not PREEMPT_RT (the system check's finding id, the caveat's kind).
const NOT_PREEMPT_RT: &str = "kernel.preempt-rt";
/// An RT worker did not get its policy (what it recorded, and what the check found it may do).
const RT_PRIORITY: [&str; 2] = ["worker.policy", "privileges.rt-priority"];
/// The conditions a development machine's profile may accept: they describe the machine, and
/// its figures still describe it. A worker without its RT priority describes nothing a user of
/// the transport would run, so no profile accepts it.
const ACCEPTABLE: [&str; 2] = [NOT_PREEMPT_RT, NOISE_SHARES];

/// Answer every `invalidates` caveat of `doc` the verdict has not answered yet: a breach of a
/// stated requirement, an accepted condition (returned), or a reason it is inconclusive.
pub(super) fn answer(
    doc: &ResultDoc,
    breaches: &mut Vec<Breach>,
    inconclusive: &mut Vec<Inconclusive>,
) -> Vec<Accepted> {
    let limits = &doc.plan.verdict;
    let mut accepted = Vec::new();
    if inconclusive
        .iter()
        .any(|i| i.kind == InconclusiveKind::NothingMeasured)
    {
        // No figure to invalidate: `nothing-measured` already says why it is not PASS.
        return accepted;
    }
    for caveat in ranked(doc)
        .into_iter()
        .filter(|c| c.severity == Severity::Invalidates)
    {
        let kind = caveat.kind.as_str();
        if required(limits, kind) || answered_as_rt_priority(kind, breaches, inconclusive) {
            // A breach of its own (`judge_machine`, `judge_rt_priority`) or the rt-priority
            // reason already answers it.
            continue;
        }
        if kind == NOISE_SHARES && limits.require_noise_apart {
            breaches.push(noise_breach(&caveat.text));
        } else if limits.development && ACCEPTABLE.contains(&kind) {
            accepted.push(Accepted {
                condition: caveat.kind,
                message: caveat.text,
            });
        } else {
            inconclusive.push(Inconclusive {
                transport: None,
                ring_setup: None,
                kind: InconclusiveKind::Invalidated,
                message: format!(
                    "{}: the profile neither requires otherwise ({}) nor accepts it \
                     (verdict.development)",
                    caveat.text,
                    requirement_of(kind)
                ),
            });
        }
    }
    accepted
}

/// Whether a requirement the verdict already judges as a breach covers `kind`.
fn required(limits: &Limits, kind: &str) -> bool {
    (kind == NOT_PREEMPT_RT && limits.require_preempt_rt)
        || (RT_PRIORITY.contains(&kind) && limits.require_rt_priority)
}

/// Whether an RT worker's missing policy is already a breach or a reason of its own.
fn answered_as_rt_priority(kind: &str, breaches: &[Breach], inconclusive: &[Inconclusive]) -> bool {
    RT_PRIORITY.contains(&kind)
        && (breaches.iter().any(|b| b.what == Limit::RequireRtPriority)
            || inconclusive
                .iter()
                .any(|i| i.kind == InconclusiveKind::RtPriority))
}

/// The profile key that would make `kind` a breach.
fn requirement_of(kind: &str) -> String {
    match kind {
        NOT_PREEMPT_RT => Limit::RequirePreemptRt,
        NOISE_SHARES => Limit::RequireNoiseApart,
        _ => Limit::RequireRtPriority,
    }
    .key()
}

fn noise_breach(caveat: &str) -> Breach {
    Breach {
        transport: None,
        ring_setup: None,
        what: Limit::RequireNoiseApart,
        series: None,
        figure: 0.0,
        limit: 1.0,
        unit: String::new(),
        message: format!("{caveat} ({})", Limit::RequireNoiseApart.key()),
    }
}

#[cfg(test)]
#[path = "validity_tests.rs"]
mod tests;
