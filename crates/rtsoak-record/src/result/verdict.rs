//! The record of a verdict, as a result holds it: the failures no limit can forgive, every
//! broken `[verdict]` limit with its figure, what kept the run from measuring what it was asked
//! (the reasons it is inconclusive), and the baseline comparison.
//! `rtsoak_analysis::judge::verdict` makes it.

use serde::{Deserialize, Serialize};

pub use crate::Status;
use crate::{CaveatKind, RingSetup, Series};

/// The outcome of judging a result: its failures, its breaches, why it is inconclusive and,
/// with `--baseline`, its comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// Fail when anything failed, was breached or regressed; else inconclusive when any reason
    /// in `inconclusive` holds; else pass.
    pub status: Status,
    /// True only when `status` is pass (kept for readers of version 1 results).
    pub pass: bool,
    /// What makes the figures untrustworthy or incomplete, whatever the limits say: a failed,
    /// interrupted or `--break-on`-stopped run, lost messages, a transport failure. Any one
    /// fails the verdict.
    /// (Results written before failures existed have none.)
    #[serde(default)]
    pub failures: Vec<Failure>,
    /// Every limit broken, in transport order, then the system-wide conditions.
    pub breaches: Vec<Breach>,
    /// Why the run could not measure what it was asked, one reason each (none in version 1
    /// results).
    #[serde(default)]
    pub inconclusive: Vec<Inconclusive>,
    /// The comparison against the baseline (`--baseline`), if one was made.
    #[serde(default)]
    pub baseline: Option<super::diff::Diff>,
    /// Conditions that invalidate the figures as real-time figures which the profile accepts
    /// (`verdict.development`): a PASS names them. Absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accepted: Vec<Accepted>,
}

/// A condition the profile accepts although it changes what every figure means.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Accepted {
    /// The caveat's kind (`kernel.preempt-rt`, `layout.noise-shares-rt-cpu`).
    pub condition: CaveatKind,
    /// The caveat's sentence.
    pub message: String,
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
    /// Written by results before too few messages made a verdict inconclusive; read, never
    /// produced.
    #[serde(rename = "verdict.min_messages")]
    MinMessages,
    #[serde(rename = "verdict.max_missed_periods")]
    MaxMissedPeriods,
    #[serde(rename = "verdict.max_expected_per_day_us")]
    MaxExpectedPerDay,
    #[serde(rename = "verdict.require_preempt_rt")]
    RequirePreemptRt,
    #[serde(rename = "verdict.require_rt_priority")]
    RequireRtPriority,
    #[serde(rename = "verdict.require_isolated_cpus")]
    RequireIsolatedCpus,
    #[serde(rename = "verdict.require_noise_apart")]
    RequireNoiseApart,
}

impl Limit {
    /// The profile key, as in the result.
    pub fn key(self) -> String {
        crate::serde_id(self)
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
    /// fallback poll delivered, own wakes that never arrived ([`crate::Integrity::transport_failures`]).
    TransportErrors,
    /// `--break-on` fired: a sample crossed the limit the user set.
    BreakOn,
}

/// Why a run could not measure what it was asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InconclusiveKind {
    /// No transport was measured at all (every one unsupported or not permitted, or no run).
    NothingMeasured,
    /// A transport named on the command line or in the profile was not measured: this kernel
    /// lacks it, or a privilege or limit kept its probe from working.
    NotMeasured,
    /// More periods were missed than `verdict.inconclusive_missed_percent` allows: the
    /// histograms lack too many of the planned samples to stand for the run.
    MissedPeriods,
    /// Fewer messages were sent than `verdict.min_messages` asks for the figures to count.
    TooFewMessages,
    /// An RT worker did not get the real-time policy or priority the profile asked for.
    RtPriority,
    /// Noise did not run as the profile asked: a kind that did no work, or workers that did
    /// not get their policy, priority or CPUs.
    Noise,
    /// `verdict.max_expected_per_day_us` is set, but a run's tail gave no estimate (too few
    /// clusters, a rejected fit, a heavy tail).
    TailNotEstimable,
    /// A condition that changes what every figure means (a caveat marked `invalidates`: a
    /// kernel without PREEMPT_RT, noise on the RT CPUs) held, and the profile neither requires
    /// its absence (that would be a breach) nor accepts it (`verdict.development`).
    Invalidated,
    /// The baseline comparison compared nothing it should have: no pair, a transport on one
    /// side only, or a side whose figures are incomplete (interrupted, failed, lossy, empty).
    Baseline,
}

/// One reason a verdict is inconclusive, named for the transport it concerns (none: the whole
/// invocation).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inconclusive {
    /// The transport (registry name), or none for the invocation as a whole.
    pub transport: Option<String>,
    /// Its ring setup, in a ring-setup comparison.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ring_setup: Option<RingSetup>,
    /// What kept it from measuring.
    pub kind: InconclusiveKind,
    /// One sentence: what was not measured, why, and what to do.
    pub message: String,
}

/// One failure, named for the transport it happened to (none: the whole invocation).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// The transport (registry name), or none for the invocation as a whole.
    pub transport: Option<String>,
    /// Its ring setup, in a ring-setup comparison.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ring_setup: Option<RingSetup>,
    /// What happened.
    pub kind: FailureKind,
    /// One sentence: what happened and why.
    pub message: String,
}

/// One broken limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Breach {
    /// The transport (registry name), or none for a condition of the whole machine.
    pub transport: Option<String>,
    /// Its ring setup, in a ring-setup comparison.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ring_setup: Option<RingSetup>,
    /// The limit (its profile key).
    pub what: Limit,
    /// The series (`send_call`, `delivery`) for per-series limits.
    pub series: Option<Series>,
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
    /// The verdict of these findings: fail if anything failed or was breached, else
    /// inconclusive if anything kept the run from measuring, else pass.
    pub fn of(
        failures: Vec<Failure>,
        breaches: Vec<Breach>,
        inconclusive: Vec<Inconclusive>,
    ) -> Self {
        let mut verdict = Verdict {
            status: Status::Pass,
            pass: true,
            failures,
            breaches,
            inconclusive,
            baseline: None,
            accepted: Vec::new(),
        };
        verdict.settle();
        verdict
    }

    /// Add the baseline comparison: a regression fails the verdict, a comparison that
    /// compared nothing makes it inconclusive.
    pub fn with_baseline(mut self, diff: super::diff::Diff) -> Self {
        for reason in &diff.inconclusive {
            self.inconclusive.push(Inconclusive {
                transport: None,
                ring_setup: None,
                kind: InconclusiveKind::Baseline,
                message: format!("baseline {}: {reason}", diff.baseline),
            });
        }
        self.baseline = Some(diff);
        self.settle();
        self
    }

    /// Decide `status` (and `pass`) from what the verdict holds.
    fn settle(&mut self) {
        self.status = if !self.failures.is_empty() || !self.breaches.is_empty() || self.regression()
        {
            Status::Fail
        } else if !self.inconclusive.is_empty() {
            Status::Inconclusive
        } else {
            Status::Pass
        };
        self.pass = self.status == Status::Pass;
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
