//! Whether a result measured what it was asked: the reasons a verdict is INCONCLUSIVE rather
//! than PASS. A unit, a CI gate or a dashboard acts on the verdict without reading the table, so
//! a run that measured nothing, missed most of its periods, ran without the RT priority or the
//! noise the profile asked for, or sent too few messages for its figures to count must not say
//! PASS. None of these is a failure of what was measured (that is FAIL); each says the figures
//! do not stand for the run that was asked.
//!
//! Pure: reads a [`ResultDoc`] and its merged transports, returns reasons.

use crate::merge::TransportRuns;
use rtsoak_record::Support;
use rtsoak_record::result::verdict::{Inconclusive, InconclusiveKind};
use rtsoak_record::result::{ResultDoc, RunStatus, WorkerRecord};

/// Distinct noise problems named in one reason; the rest are counted.
const NOISE_PROBLEMS_NAMED: usize = 3;

/// Every reason `doc` did not measure what it was asked, in transport order.
pub(super) fn shortfalls(doc: &ResultDoc, merged: &[TransportRuns<'_>]) -> Vec<Inconclusive> {
    let mut out = Vec::new();
    let measured: Vec<&TransportRuns<'_>> = merged
        .iter()
        .filter(|t| t.status != RunStatus::Unsupported)
        .collect();
    if measured.is_empty() {
        out.push(nothing_measured(merged));
    } else {
        for t in merged.iter().filter(|t| t.status == RunStatus::Unsupported) {
            if let Some(reason) = not_measured(doc, t) {
                out.push(reason);
            }
        }
    }
    for t in measured {
        let mut reason = |kind, text: String| {
            out.push(Inconclusive {
                transport: Some(t.transport.to_string()),
                ring_setup: t.ring_setup,
                kind,
                message: format!("{}: {text}", t.label),
            });
        };
        if doc.plan.verdict.max_expected_per_day_ns.is_some() {
            for series in super::tail_limit::SERIES {
                if let Some(why) = super::tail_limit::not_estimable(t, series) {
                    reason(
                        InconclusiveKind::TailNotEstimable,
                        format!(
                            "verdict.max_expected_per_day_us cannot judge {}: its tail is not \
                             estimable ({why})",
                            series.name()
                        ),
                    );
                }
            }
        }
        if let Some(text) = missed_too_many(doc, t) {
            reason(InconclusiveKind::MissedPeriods, text);
        }
        if let Some(text) = too_few_messages(doc, t) {
            reason(InconclusiveKind::TooFewMessages, text);
        }
        if !doc.plan.verdict.require_rt_priority
            && let Some(worker) = rt_worker_short_of_its_policy(t)
        {
            let s = &worker.setup;
            let why = s
                .policy_error
                .as_deref()
                .map_or(String::new(), |e| format!(": {e}"));
            reason(
                InconclusiveKind::RtPriority,
                format!(
                    "the {} ran {} {} instead of {} {}{why}; its latencies are not real-time \
                     latencies (run as root, or grant CAP_SYS_NICE or an RLIMIT_RTPRIO)",
                    worker.role.name(),
                    s.policy,
                    s.priority,
                    s.policy_requested,
                    s.priority_requested
                ),
            );
        }
        if let Some(text) = noise_not_as_asked(t) {
            reason(InconclusiveKind::Noise, text);
        }
    }
    out
}

/// No transport has figures: say why for each.
fn nothing_measured(merged: &[TransportRuns<'_>]) -> Inconclusive {
    let why: Vec<String> = merged
        .iter()
        .map(|t| {
            let reason = t.runs.iter().find_map(|r| r.reason.as_deref());
            format!("{}: {}", t.label, reason.unwrap_or("not run"))
        })
        .collect();
    let message = if why.is_empty() {
        "no transport was measured: the result holds no run".to_string()
    } else {
        format!(
            "no transport was measured ({}); choose transports this machine supports (`rtsoak \
             probe` lists them)",
            why.join("; ")
        )
    };
    Inconclusive {
        transport: None,
        ring_setup: None,
        kind: InconclusiveKind::NothingMeasured,
        message,
    }
}

/// A transport that was not measured while others were: inconclusive when a privilege or a
/// limit kept its probe from working (the kernel may well carry it), or when it was named on
/// the command line or in the profile. A transport this kernel lacks, in a comparison of every
/// transport rtsoak knows, is skipped and said so in the table, not held against the verdict.
fn not_measured(doc: &ResultDoc, t: &TransportRuns<'_>) -> Option<Inconclusive> {
    let support = doc
        .support
        .iter()
        .find(|s| s.transport == t.transport)
        .map(|s| &s.support);
    let not_permitted = matches!(support, Some(Support::NotPermitted { .. }));
    if !not_permitted && !doc.plan.transports_named {
        return None;
    }
    let reason = t
        .runs
        .iter()
        .find_map(|r| r.reason.as_deref())
        .unwrap_or("not run");
    Some(Inconclusive {
        transport: Some(t.transport.to_string()),
        ring_setup: t.ring_setup,
        kind: InconclusiveKind::NotMeasured,
        message: format!("{}: not measured: {reason}", t.label),
    })
}

/// More periods missed than `verdict.inconclusive_missed_percent` of those planned.
fn missed_too_many(doc: &ResultDoc, t: &TransportRuns<'_>) -> Option<String> {
    let bound = doc.plan.verdict.inconclusive_missed_percent?;
    let (missed, planned) = (t.integrity.missed_periods, t.integrity.planned_periods);
    // In 128 bits: counts read from a file times 100 must not wrap.
    if planned == 0 || u128::from(missed) * 100 <= u128::from(bound) * u128::from(planned) {
        return None;
    }
    Some(format!(
        "{missed} of {planned} planned periods missed ({:.1} %, over the {bound} % \
         verdict.inconclusive_missed_percent allows): the figures stand for a much shorter run \
         than asked; the timer figures and the intervals show when the RT publisher was held \
         off its CPU",
        missed as f64 * 100.0 / planned as f64
    ))
}

/// Fewer messages sent than `verdict.min_messages`.
fn too_few_messages(doc: &ResultDoc, t: &TransportRuns<'_>) -> Option<String> {
    let min = doc.plan.verdict.min_messages?;
    let sent = t.integrity.sent;
    (sent < min).then(|| {
        format!(
            "{sent} messages sent, verdict.min_messages asks for at least {min} for the figures \
             to count; run longer (--duration) or lower the limit"
        )
    })
}

/// The first RT worker of the transport's runs that did not get the real-time policy and
/// priority it asked for.
pub(crate) fn rt_worker_short_of_its_policy<'a>(t: &TransportRuns<'a>) -> Option<&'a WorkerRecord> {
    t.runs.iter().flat_map(|r| &r.workers).find(|w| {
        let s = &w.setup;
        s.policy_error.is_some()
            || !matches!(s.policy.as_str(), "fifo" | "rr")
            || s.policy != s.policy_requested
            || s.priority != s.priority_requested
    })
}

/// The noise of the transport's runs, where it did not run as the profile asked: noise that
/// did no work, and noise workers that failed or did not get their policy, priority or CPUs.
/// (A noise worker that died fails its run instead: `coordinator` marks it failed.)
fn noise_not_as_asked(t: &TransportRuns<'_>) -> Option<String> {
    let mut problems: Vec<&String> = Vec::new();
    let mut seen: std::collections::HashSet<&String> = std::collections::HashSet::new();
    let mut failures: u64 = 0;
    for run in &t.runs {
        let noise = &run.noise;
        failures = failures.saturating_add(noise.failures);
        for problem in noise.idle.iter().chain(&noise.errors) {
            if seen.insert(problem) {
                problems.push(problem);
            }
        }
    }
    if problems.is_empty() && failures == 0 {
        return None;
    }
    let named = problems.len().min(NOISE_PROBLEMS_NAMED);
    let more = match problems.len() - named {
        0 => String::new(),
        n => format!("; and {n} more"),
    };
    let counted = match failures {
        0 => String::new(),
        1 => " (1 noise failure)".to_string(),
        n => format!(" ({n} noise failures)"),
    };
    Some(format!(
        "the noise did not run as the profile asked{counted}: {}{more}; the figures were \
         measured under less noise than planned",
        problems[..named]
            .iter()
            .map(|p| p.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    ))
}

#[cfg(test)]
#[path = "measured_tests.rs"]
mod tests;
