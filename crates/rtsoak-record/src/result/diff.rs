//! The record of a comparison with a baseline, as a result's verdict holds it: the rules
//! applied and one finding per transport, series and figure. `rtsoak_analysis::judge::diff`
//! makes it.

use serde::{Deserialize, Serialize};

use super::cause::Cause;
use crate::{RingSetup, Series, Status};

/// When a difference counts as a regression. Every rule needs both statistical evidence (or a
/// tolerance) and a minimum size, so run-to-run noise passes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DiffRules {
    /// Significance level of the over-threshold rate test (one-sided).
    pub alpha: f64,
    /// The new rate must be at least this many times the baseline's.
    pub min_rate_ratio: f64,
    /// ... and at least this much higher, per million samples.
    pub min_rate_increase_per_million: f64,
    /// A tail percentile regresses when it grows by more than this fraction ...
    pub percentile_tolerance: f64,
    /// ... and by more than this many ns.
    pub percentile_floor_ns: u64,
    /// The maximum regresses when it grows by more than this fraction ...
    pub max_tolerance: f64,
    /// ... and by more than this many ns.
    pub max_floor_ns: u64,
    /// A percentile q is judged only with at least this many samples beyond it on both sides
    /// (count × (1 − q)).
    pub min_tail_samples: f64,
}

impl Default for DiffRules {
    fn default() -> Self {
        DiffRules {
            alpha: 0.01,
            min_rate_ratio: 2.0,
            min_rate_increase_per_million: 1.0,
            percentile_tolerance: 0.5,
            percentile_floor_ns: 10_000,
            max_tolerance: 1.0,
            max_floor_ns: 50_000,
            min_tail_samples: 10.0,
        }
    }
}

/// The comparison of a result with its baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diff {
    /// Where the baseline came from (its path) and when it was measured.
    pub baseline: String,
    /// The baseline's `started_at`.
    pub baseline_started_at: String,
    /// The rules applied.
    pub rules: DiffRules,
    /// True if any finding is a regression.
    pub regression: bool,
    /// Why the comparison cannot say "no regression", one sentence each: nothing paired, a
    /// transport measured on one side only, a side whose figures are incomplete (interrupted,
    /// failed, lossy or empty), figures that could not be read. Empty in version 1 results.
    #[serde(default)]
    pub inconclusive: Vec<String>,
    /// One finding per transport, series and figure compared (and per transport not compared).
    pub findings: Vec<Finding>,
    /// Why the spikes changed: per paired transport and series whose runs were explained on
    /// both sides, the change in spikes over the threshold and in each cause, largest first
    /// (absent in older results and where either side was not explained).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub causes: Vec<CauseChanges>,
}

/// How one transport's spikes of one series changed, cause by cause.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CauseChanges {
    /// The transport (registry name).
    pub transport: String,
    /// Its ring setup, where either result compared several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ring_setup: Option<RingSetup>,
    /// `send_call` or `delivery`.
    pub series: Series,
    /// Spikes over the threshold, baseline and new (every one, kept or not).
    pub baseline_over_threshold: u64,
    /// ...
    pub new_over_threshold: u64,
    /// Every cause on either side (and the unexplained spikes), the largest change in count
    /// first, then the causes that could not be paired.
    pub changes: Vec<CauseChange>,
}

/// One cause's share of a series' spikes, baseline and new. A cause's count is its share of
/// the kept spikes scaled to all spikes over the threshold (the explainer reads the kept ones,
/// at most `plan.outliers_max` per run), so the counts of two runs of different lengths and
/// spike rates compare.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CauseChange {
    /// The cause; none for the spikes no wait explained.
    pub cause: Option<Cause>,
    /// A cause an older rtsoak stored in words this one does not recognise, found on one side
    /// only: it may be one of the other side's causes under other words, so its change is not
    /// known (its count on the other side is 0 because nothing there could be paired with it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unpaired: bool,
    /// Spikes of this cause, estimated over all spikes (share of the kept ones x all).
    pub baseline_count: f64,
    /// ...
    pub new_count: f64,
    /// Its share of the kept spikes, percent.
    pub baseline_share_percent: f64,
    /// ...
    pub new_share_percent: f64,
}

/// What a finding compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Figure {
    /// Over-threshold samples per million samples.
    OverThresholdRate,
    /// 99.9th percentile, ns.
    P99_9,
    /// 99.99th percentile, ns.
    P99_99,
    /// Longest sample, ns.
    Max,
    /// The transport as a whole (not measured on one side).
    Transport,
}

/// One figure of one transport and series, baseline against new.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// The transport (registry name; `*` for a finding about the whole comparison).
    pub transport: String,
    /// Its ring setup, where either result compared several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ring_setup: Option<RingSetup>,
    /// `send_call` or `delivery` (none for a transport-level finding).
    pub series: Option<Series>,
    /// What is compared.
    pub figure: Figure,
    /// Baseline figure (per million, or ns).
    pub baseline: f64,
    /// New figure, same unit.
    pub new: f64,
    /// One-sided p-value of the rate test (rates only).
    pub p_value: Option<f64>,
    /// True if this figure regressed.
    pub regression: bool,
    /// Why, in one sentence.
    pub reason: String,
}

impl Diff {
    /// The findings that regressed.
    pub fn regressions(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.regression)
    }

    /// The comparison's own verdict: a regression fails; otherwise a comparison that could
    /// not compare what it should is inconclusive; only then is it a pass ("no regression").
    pub fn status(&self) -> Status {
        if self.regression {
            Status::Fail
        } else if !self.inconclusive.is_empty() {
            Status::Inconclusive
        } else {
            Status::Pass
        }
    }

    /// The one-line verdict: `regression: ...` naming each, `inconclusive: ...` with the first
    /// reason, or `no regression`.
    pub fn summary_line(&self) -> String {
        let names: Vec<String> = self.regressions().map(Finding::label).collect();
        if !names.is_empty() {
            format!(
                "regression against the baseline {}: {}",
                self.baseline,
                names.join(", ")
            )
        } else if let Some(first) = self.inconclusive.first() {
            let more = match self.inconclusive.len() - 1 {
                0 => String::new(),
                n => format!(" (and {n} more)"),
            };
            format!(
                "inconclusive against the baseline {}: {first}{more}",
                self.baseline
            )
        } else {
            format!("no regression against the baseline {}", self.baseline)
        }
    }
}

impl Finding {
    /// `futex delivery over_threshold_rate` (`futex (none) delivery ...` with a ring setup).
    pub fn label(&self) -> String {
        let figure = crate::serde_id(self.figure);
        let row = self.row();
        match &self.series {
            Some(series) => format!("{row} {series} {figure}"),
            None => format!("{row} {figure}"),
        }
    }

    /// The row this finding is about, as tables name it.
    pub fn row(&self) -> String {
        super::RunKey {
            transport: &self.transport,
            ring_setup: self.ring_setup,
        }
        .label()
    }
}
