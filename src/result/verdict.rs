//! The pass/fail verdict of a result against its plan's `[verdict]` limits: every breach with
//! the figure that broke the limit and the limit, per transport on its merged rounds.
//!
//! Pure: [`verdict`] reads a [`ResultDoc`] and returns a [`Verdict`]; it never prints, reads
//! files or decides exit codes (the soak command maps a verdict to an [`crate::exit::Outcome`]).

use serde::{Deserialize, Serialize};

use super::merge::{TransportRuns, by_transport};
use super::{ResultDoc, RunStatus};
use crate::plan::Limits;

/// The outcome of judging a result: its breaches and, with `--baseline`, its comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// True when nothing was breached and nothing regressed.
    pub pass: bool,
    /// Every limit broken, in transport order, then the system-wide conditions.
    pub breaches: Vec<Breach>,
    /// The comparison against the baseline (`--baseline`), if one was made.
    #[serde(default)]
    pub baseline: Option<super::diff::Diff>,
}

/// Which limit was broken; serialized as the profile key that sets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Limit {
    #[serde(rename = "verdict.max_send_call_us")]
    MaxSendCall,
    #[serde(rename = "verdict.max_delivery_us")]
    MaxDelivery,
    #[serde(rename = "verdict.max_over_threshold")]
    MaxOverThreshold,
    #[serde(rename = "verdict.max_over_threshold_per_million")]
    MaxOverThresholdPerMillion,
    #[serde(rename = "verdict.max_lost")]
    MaxLost,
    #[serde(rename = "verdict.min_messages")]
    MinMessages,
    #[serde(rename = "verdict.require_preempt_rt")]
    RequirePreemptRt,
    #[serde(rename = "verdict.require_rt_priority")]
    RequireRtPriority,
    #[serde(rename = "verdict.require_isolated_cpus")]
    RequireIsolatedCpus,
}

impl Limit {
    /// The profile key, as in the result.
    pub fn key(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    }
}

/// One broken limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Breach {
    /// The transport, or none for a condition of the whole machine.
    pub transport: Option<String>,
    /// The limit (its profile key).
    pub what: Limit,
    /// The series (`send_call`, `delivery`) for per-series limits.
    pub series: Option<String>,
    /// The measured figure, in `unit` (1/0 for a condition met/not met).
    pub figure: f64,
    /// The limit, in `unit`.
    pub limit: f64,
    /// `us`, `samples`, `per million`, `messages`, or empty for a condition.
    pub unit: String,
    /// One sentence: what broke, the figure and the limit.
    pub message: String,
}

/// The series the latency limits judge.
const JUDGED_SERIES: [&str; 2] = ["send_call", "delivery"];

/// Judge `doc` against `doc.plan.verdict`. Unsupported transports are not judged (nothing
/// ran); failed runs are judged on what they measured.
pub fn verdict(doc: &ResultDoc) -> Verdict {
    let limits = &doc.plan.verdict;
    let mut breaches = Vec::new();
    for transport in by_transport(doc) {
        if transport.status != RunStatus::Unsupported {
            judge_transport(&transport, limits, &mut breaches);
            if limits.require_rt_priority {
                judge_rt_priority(&transport, &mut breaches);
            }
        }
    }
    judge_machine(doc, limits, &mut breaches);
    Verdict {
        pass: breaches.is_empty(),
        breaches,
        baseline: None,
    }
}

impl Verdict {
    /// Add the baseline comparison; a regression fails the verdict.
    pub fn with_baseline(mut self, diff: super::diff::Diff) -> Self {
        self.pass = self.pass && !diff.regression;
        self.baseline = Some(diff);
        self
    }

    /// True if a breach is lost messages (exit code 4 rather than 1).
    pub fn lost_messages(&self) -> bool {
        self.breaches.iter().any(|b| b.what == Limit::MaxLost)
    }

    /// True if the baseline comparison found a regression.
    pub fn regression(&self) -> bool {
        self.baseline.as_ref().is_some_and(|d| d.regression)
    }
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1e3
}

fn judge_transport(t: &TransportRuns<'_>, limits: &Limits, out: &mut Vec<Breach>) {
    let name = t.transport;
    let mut breach = |what, series: Option<&str>, figure: f64, limit: f64, unit: &str, text| {
        out.push(Breach {
            transport: Some(name.to_string()),
            what,
            series: series.map(str::to_string),
            figure,
            limit,
            unit: unit.to_string(),
            message: format!("{name}: {text} ({})", Limit::key(what)),
        });
    };
    if t.integrity.lost > limits.max_lost {
        let (lost, max) = (t.integrity.lost, limits.max_lost);
        let text = format!("{lost} messages lost, at most {max} allowed");
        breach(
            Limit::MaxLost,
            None,
            lost as f64,
            max as f64,
            "messages",
            text,
        );
    }
    if let Some(min) = limits.min_messages.filter(|min| t.integrity.sent < *min) {
        let sent = t.integrity.sent;
        let text = format!("{sent} messages sent, at least {min} required");
        breach(
            Limit::MinMessages,
            None,
            sent as f64,
            min as f64,
            "messages",
            text,
        );
    }
    for series in JUDGED_SERIES {
        let s = t.summary(series);
        let (max_key, max_limit) = match series {
            "send_call" => (Limit::MaxSendCall, limits.max_send_call_ns),
            _ => (Limit::MaxDelivery, limits.max_delivery_ns),
        };
        if let Some(limit_ns) = max_limit.filter(|limit| s.max_ns > *limit) {
            let (max, limit) = (us(s.max_ns), us(limit_ns));
            let text = format!("longest {series} {max:.1} us > {limit} us allowed");
            breach(max_key, Some(series), max, limit, "us", text);
        }
        if let Some(limit) = limits
            .max_over_threshold
            .filter(|limit| s.over_threshold > *limit)
        {
            let over = s.over_threshold;
            let text = format!("{over} {series} samples over threshold > {limit} allowed");
            let (figure, limit) = (over as f64, limit as f64);
            breach(
                Limit::MaxOverThreshold,
                Some(series),
                figure,
                limit,
                "samples",
                text,
            );
        }
        if let Some(limit) = limits.max_over_threshold_per_million
            && s.count > 0
        {
            let rate = s.over_threshold as f64 * 1e6 / s.count as f64;
            if rate > limit as f64 {
                let text = format!(
                    "{rate:.2} {series} samples per million over threshold ({} of {}) > {limit} \
                     allowed",
                    s.over_threshold, s.count
                );
                let what = Limit::MaxOverThresholdPerMillion;
                breach(what, Some(series), rate, limit as f64, "per million", text);
            }
        }
    }
}

/// `require_rt_priority`: every RT worker of every run of the transport got the real-time policy
/// and priority it asked for.
fn judge_rt_priority(t: &TransportRuns<'_>, out: &mut Vec<Breach>) {
    let missed = t.runs.iter().flat_map(|r| &r.workers).find(|w| {
        let s = &w.setup;
        s.policy_error.is_some()
            || !matches!(s.policy.as_str(), "fifo" | "rr")
            || s.policy != s.policy_requested
            || s.priority != s.priority_requested
    });
    if let Some(worker) = missed {
        let s = &worker.setup;
        out.push(Breach {
            transport: Some(t.transport.to_string()),
            what: Limit::RequireRtPriority,
            series: None,
            figure: 0.0,
            limit: 1.0,
            unit: String::new(),
            message: format!(
                "{}: an RT worker ran {} {} instead of {} {} ({})",
                t.transport,
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
                crate::cpulist::format(&not_isolated)
            ),
        );
    }
}

#[cfg(test)]
#[path = "verdict_tests.rs"]
mod tests;
