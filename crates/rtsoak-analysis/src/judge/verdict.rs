//! The verdict of a result, PASS, FAIL or INCONCLUSIVE: first the failures that no limit can
//! forgive (a run that failed, was interrupted, lost a message, had its transport fail or was
//! stopped by `--break-on`), then every breach of the plan's `[verdict]` limits with the figure
//! that broke the limit and the limit, per transport on its merged rounds, then what kept the
//! run from measuring what it was asked ([`super::measured`]), then every condition that
//! invalidates the figures ([`super::validity`]).
//!
//! Pure: [`verdict`] reads a [`ResultDoc`] and returns a [`Verdict`]; it never prints, reads
//! files or decides exit codes (the soak command maps a verdict to an `rtsoak::exit::Outcome`).

use std::borrow::Cow;

use super::measured;
use crate::merge::{TransportRuns, by_transport};
use rtsoak_record::plan::Limits;
use rtsoak_record::result::verdict::{Breach, Failure, FailureKind, Limit, Verdict};
use rtsoak_record::result::{ResultDoc, RunStatus};
use rtsoak_record::{PooledTail, Series};

/// The series the latency limits judge.
const JUDGED_SERIES: [Series; 2] = [Series::SendCall, Series::Delivery];

/// The verdict `doc` holds, or, for a document saved before it was judged (mid-run), its
/// verdict judged now.
pub fn stored_or_judged(doc: &ResultDoc) -> Cow<'_, Verdict> {
    doc.verdict
        .as_ref()
        .map_or_else(|| Cow::Owned(verdict(doc)), Cow::Borrowed)
}

/// Judge `doc`: its failures, then `doc.plan.verdict`, then whether it measured what it was
/// asked. Unsupported transports have no figures to judge (whether that leaves the verdict
/// inconclusive is [`measured`]'s to say); failed runs are judged on what they measured as well.
pub fn verdict(doc: &ResultDoc) -> Verdict {
    let limits = &doc.plan.verdict;
    let mut failures = Vec::new();
    let mut breaches = Vec::new();
    if doc.interrupted {
        failures.push(Failure {
            transport: None,
            ring_setup: None,
            kind: FailureKind::Interrupted,
            message: "the invocation was stopped by a signal before every run was done".into(),
        });
    }
    let merged = by_transport(doc);
    for transport in &merged {
        if transport.status != RunStatus::Unsupported {
            find_failures(transport, &mut failures);
            judge_transport(transport, limits, &doc.tail_pooled, &mut breaches);
            if limits.require_rt_priority {
                judge_rt_priority(transport, &mut breaches);
            }
        }
    }
    judge_machine(doc, limits, &mut breaches);
    let mut inconclusive = measured::shortfalls(doc, &merged);
    let accepted = super::validity::answer(doc, &mut breaches, &mut inconclusive);
    let mut verdict = Verdict::of(failures, breaches, inconclusive);
    verdict.accepted = accepted;
    verdict
}

/// Every run of the transport that failed, was interrupted or broke; its lost messages and
/// transport failures.
fn find_failures(t: &TransportRuns<'_>, out: &mut Vec<Failure>) {
    let name = &t.label;
    let mut fail = |kind, text: String| {
        out.push(Failure {
            transport: Some(t.transport.to_string()),
            ring_setup: t.ring_setup,
            kind,
            message: format!("{name}: {text}"),
        });
    };
    for run in &t.runs {
        let why = run.reason.as_deref().unwrap_or("no reason recorded");
        let round = run.round;
        match run.status {
            RunStatus::Failed => fail(
                FailureKind::RunFailed,
                format!("round {round} failed: {why}"),
            ),
            RunStatus::Interrupted => fail(
                FailureKind::Interrupted,
                format!("round {round} was interrupted: {why}"),
            ),
            RunStatus::Completed | RunStatus::Unsupported => {}
        }
        if let Some(event) = run.break_event {
            fail(
                FailureKind::BreakOn,
                format!(
                    "round {round}: {} {:.1} us > --break-on {:.1} us (seq {})",
                    event.series.name(),
                    us(event.value_ns),
                    us(event.limit_ns),
                    event.seq
                ),
            );
        }
    }
    if let Some(loss) = t.integrity.loss() {
        fail(FailureKind::LostMessages, loss);
    }
    let transport_failures = t.integrity.transport_failures();
    if !transport_failures.is_empty() {
        fail(
            FailureKind::TransportErrors,
            format!("the transport failed: {}", transport_failures.join("; ")),
        );
    }
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1e3
}

fn judge_transport(
    t: &TransportRuns<'_>,
    limits: &Limits,
    pooled: &[PooledTail],
    out: &mut Vec<Breach>,
) {
    let mut breaches = Breaches { t, out };
    judge_missed(&mut breaches, limits);
    if let Some(limit_ns) = limits.max_expected_per_day_ns {
        judge_expected_per_day(&mut breaches, pooled, limit_ns);
    }
    for judged in JUDGED_SERIES {
        judge_series(&mut breaches, limits, judged);
    }
}

/// Where one transport's breaches of the profile's limits go.
struct Breaches<'a, 'r> {
    t: &'a TransportRuns<'r>,
    out: &'a mut Vec<Breach>,
}

/// One figure over its limit: what the figure is, of which series, in which unit.
struct Over {
    what: Limit,
    series: Option<Series>,
    figure: f64,
    limit: f64,
    unit: &'static str,
}

impl Breaches<'_, '_> {
    fn push(&mut self, over: Over, text: String) {
        self.out.push(Breach {
            transport: Some(self.t.transport.to_string()),
            ring_setup: self.t.ring_setup,
            what: over.what,
            series: over.series,
            figure: over.figure,
            limit: over.limit,
            unit: over.unit.to_string(),
            message: format!("{}: {text} ({})", self.t.label, Limit::key(over.what)),
        });
    }
}

/// `max_missed_periods`.
fn judge_missed(breaches: &mut Breaches<'_, '_>, limits: &Limits) {
    let integrity = &breaches.t.integrity;
    let (missed, planned) = (integrity.missed_periods, integrity.planned_periods);
    let Some(limit) = limits.max_missed_periods.filter(|limit| missed > *limit) else {
        return;
    };
    let text = if planned > 0 {
        format!(
            "{missed} of {planned} planned periods missed ({:.3} %) > {limit} allowed",
            missed as f64 * 100.0 / planned as f64
        )
    } else {
        format!("{missed} periods missed > {limit} allowed")
    };
    let over = Over {
        what: Limit::MaxMissedPeriods,
        series: None,
        figure: missed as f64,
        limit: limit as f64,
        unit: "periods",
    };
    breaches.push(over, text);
}

/// `max_expected_per_day`: the upper bound of the tail estimate's interval, per judged series.
fn judge_expected_per_day(breaches: &mut Breaches<'_, '_>, pooled: &[PooledTail], limit_ns: u64) {
    for judged in super::tail_limit::SERIES {
        let Some(day) = super::tail_limit::breach(breaches.t, pooled, judged, limit_ns) else {
            continue;
        };
        let (high, limit) = (day.high / 1e3, us(limit_ns));
        let series = judged.name();
        let text = format!(
            "{series} expected once a day up to {high:.1} us (upper bound of the tail \
             estimate's 95 % interval; estimate {:.1} us) > {limit} us allowed",
            day.estimate / 1e3
        );
        let what = Limit::MaxExpectedPerDay;
        let over = Over {
            what,
            series: Some(judged),
            figure: high,
            limit,
            unit: "us",
        };
        breaches.push(over, text);
    }
}

/// The longest sample and the over-threshold count and rate of one judged series.
fn judge_series(breaches: &mut Breaches<'_, '_>, limits: &Limits, judged: Series) {
    let series = judged.name();
    let s = breaches.t.summary(judged);
    let (max_key, max_limit) = match judged {
        Series::SendCall => (Limit::MaxSendCall, limits.max_send_call_ns),
        _ => (Limit::MaxDelivery, limits.max_delivery_ns),
    };
    let over = |what, figure, limit, unit| Over {
        what,
        series: Some(judged),
        figure,
        limit,
        unit,
    };
    if let Some(limit_ns) = max_limit.filter(|limit| s.max_ns > *limit) {
        let (max, limit) = (us(s.max_ns), us(limit_ns));
        let text = format!("longest {series} {max:.1} us > {limit} us allowed");
        breaches.push(over(max_key, max, limit, "us"), text);
    }
    if let Some(limit) = limits
        .max_over_threshold
        .filter(|limit| s.over_threshold > *limit)
    {
        let count = s.over_threshold;
        let text = format!("{count} {series} samples over threshold > {limit} allowed");
        let what = Limit::MaxOverThreshold;
        breaches.push(over(what, count as f64, limit as f64, "samples"), text);
    }
    if let Some(limit) = limits.max_over_threshold_per_million
        && s.count > 0
    {
        let rate = s.over_threshold_per_million();
        if rate > limit as f64 {
            let text = format!(
                "{rate:.2} {series} samples per million over threshold ({} of {}) > {limit} \
                 allowed",
                s.over_threshold, s.count
            );
            let what = Limit::MaxOverThresholdPerMillion;
            breaches.push(over(what, rate, limit as f64, "per million"), text);
        }
    }
}

/// `require_rt_priority`: every RT worker of every run of the transport got the real-time policy
/// and priority it asked for.
fn judge_rt_priority(t: &TransportRuns<'_>, out: &mut Vec<Breach>) {
    if let Some(worker) = measured::rt_worker_short_of_its_policy(t) {
        let s = &worker.setup;
        out.push(Breach {
            transport: Some(t.transport.to_string()),
            ring_setup: t.ring_setup,
            what: Limit::RequireRtPriority,
            series: None,
            figure: 0.0,
            limit: 1.0,
            unit: String::new(),
            message: format!(
                "{}: an RT worker ran {} {} instead of {} {} ({})",
                t.label,
                s.policy,
                s.priority,
                s.policy_requested,
                s.priority_requested,
                Limit::RequireRtPriority.key()
            ),
        });
    }
}

fn judge_machine(doc: &ResultDoc, limits: &Limits, out: &mut Vec<Breach>) {
    let mut condition = |what: Limit, text: String| {
        out.push(Breach {
            transport: None,
            ring_setup: None,
            what,
            series: None,
            figure: 0.0,
            limit: 1.0,
            unit: String::new(),
            message: format!("{text} ({})", what.key()),
        });
    };
    if limits.require_preempt_rt && !doc.host.preempt_rt {
        let release = doc
            .host
            .kernel_release
            .as_deref()
            .unwrap_or("(unknown release)");
        condition(
            Limit::RequirePreemptRt,
            format!("the kernel {release} is not PREEMPT_RT"),
        );
    }
    let rt = &doc.plan.rt;
    let not_isolated: Vec<usize> = [rt.publisher_cpu, rt.subscriber_cpu]
        .into_iter()
        .filter(|cpu| !doc.host.isolated.contains(cpu))
        .collect();
    if limits.require_isolated_cpus && !not_isolated.is_empty() {
        condition(
            Limit::RequireIsolatedCpus,
            format!(
                "RT CPU{} {} not isolated",
                if not_isolated.len() == 1 { "" } else { "s" },
                rtsoak_record::cpulist::format(&not_isolated)
            ),
        );
    }
}

#[cfg(test)]
#[path = "verdict_tests.rs"]
mod tests;
