//! The record of a verdict, as a result holds it: the failures no limit can forgive, every
//! broken `[verdict]` limit with its figure, and the baseline comparison.
//! [`crate::judge::verdict`] makes it.

use serde::{Deserialize, Serialize};

/// The outcome of judging a result: its failures, its breaches and, with `--baseline`, its
/// comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// True when nothing failed, nothing was breached and nothing regressed.
    pub pass: bool,
    /// What makes the figures untrustworthy or incomplete, whatever the limits say: a failed,
    /// interrupted or `--break-on`-stopped run, lost messages, a transport failure. Any one
    /// fails the verdict.
    /// (Results written before failures existed have none.)
    #[serde(default)]
    pub failures: Vec<Failure>,
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
    /// Written by results before lost messages became a [`Failure`]; read, never produced.
    #[serde(rename = "verdict.max_lost")]
    MaxLost,
    #[serde(rename = "verdict.min_messages")]
    MinMessages,
    #[serde(rename = "verdict.max_missed_periods")]
    MaxMissedPeriods,
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

/// What kind of failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureKind {
    /// A worker died, hung or reported an error: the run's figures are incomplete.
    RunFailed,
    /// A signal (or the invocation's end) stopped the run before its planned end.
    Interrupted,
    /// Messages the RT publisher sent never reached the RT subscriber in time.
    LostMessages,
    /// The transport failed: wake calls that failed, error completions, messages only the
    /// fallback poll delivered, own wakes that never arrived ([`crate::stats::Integrity::transport_failures`]).
    TransportErrors,
    /// `--break-on` fired: a sample crossed the limit the user set.
    BreakOn,
}

/// One failure, named for the transport it happened to (none: the whole invocation).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// The transport, or none for the invocation as a whole.
    pub transport: Option<String>,
    /// What happened.
    pub kind: FailureKind,
    /// One sentence: what happened and why.
    pub message: String,
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
    /// `us`, `samples`, `per million`, `messages`, `periods`, or empty for a condition.
    pub unit: String,
    /// One sentence: what broke, the figure and the limit.
    pub message: String,
}

impl Verdict {
    /// Add the baseline comparison; a regression fails the verdict.
    pub fn with_baseline(mut self, diff: super::diff::Diff) -> Self {
        self.pass = self.pass && !diff.regression;
        self.baseline = Some(diff);
        self
    }

    /// True if a failure is of this kind.
    pub fn failed(&self, kind: FailureKind) -> bool {
        self.failures.iter().any(|f| f.kind == kind)
    }

    /// True if the baseline comparison found a regression.
    pub fn regression(&self) -> bool {
        self.baseline.as_ref().is_some_and(|d| d.regression)
    }
}
