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
use rtsoak_record::plan::Limits;
use rtsoak_record::result::ResultDoc;
use rtsoak_record::result::verdict::{Accepted, Breach, Inconclusive, InconclusiveKind, Limit};
use rtsoak_record::{CaveatKind, CheckId, Severity};

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
        let requirement = requirement(&caveat.kind);
        if required(limits, requirement)
            || answered_as_rt_priority(requirement, breaches, inconclusive)
        {
            // A breach of its own (`judge_machine`, `judge_rt_priority`) or the rt-priority
            // reason already answers it.
            continue;
        }
        if requirement == Some(Limit::RequireNoiseApart) && limits.require_noise_apart {
            breaches.push(noise_breach(&caveat.text));
        } else if limits.development && acceptable(requirement) {
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
                    requirement.unwrap_or(Limit::RequireRtPriority).key()
                ),
            });
        }
    }
    accepted
}

/// The profile key that requires a condition of `kind` absent: the kernel not PREEMPT_RT, noise
/// on the RT CPUs, an RT worker without its policy (what it recorded, or what the check found it
/// may do). None for any other kind.
fn requirement(kind: &CaveatKind) -> Option<Limit> {
    match kind {
        CaveatKind::Check(CheckId::KernelPreemptRt) => Some(Limit::RequirePreemptRt),
        CaveatKind::Check(CheckId::LayoutNoiseSharesRtCpu) => Some(Limit::RequireNoiseApart),
        CaveatKind::WorkerPolicy | CaveatKind::Check(CheckId::PrivilegesRtPriority) => {
            Some(Limit::RequireRtPriority)
        }
        _ => None,
    }
}

/// Whether a development machine's profile may accept the condition: no PREEMPT_RT and noise on
/// the RT CPUs describe the machine, and its figures still describe it. A worker without its RT
/// priority describes nothing a user of the transport would run, and a kind this build does not
/// know is not known to be harmless, so no profile accepts either.
fn acceptable(requirement: Option<Limit>) -> bool {
    matches!(
        requirement,
        Some(Limit::RequirePreemptRt | Limit::RequireNoiseApart)
    )
}

/// Whether a requirement the verdict already judges as a breach covers the condition.
fn required(limits: &Limits, requirement: Option<Limit>) -> bool {
    match requirement {
        Some(Limit::RequirePreemptRt) => limits.require_preempt_rt,
        Some(Limit::RequireRtPriority) => limits.require_rt_priority,
        _ => false,
    }
}

/// Whether an RT worker's missing policy is already a breach or a reason of its own.
fn answered_as_rt_priority(
    requirement: Option<Limit>,
    breaches: &[Breach],
    inconclusive: &[Inconclusive],
) -> bool {
    requirement == Some(Limit::RequireRtPriority)
        && (breaches.iter().any(|b| b.what == Limit::RequireRtPriority)
            || inconclusive
                .iter()
                .any(|i| i.kind == InconclusiveKind::RtPriority))
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
