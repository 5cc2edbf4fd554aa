//! The record of a comparison with a baseline, as a result's verdict holds it: the rules
//! applied and one finding per transport, series and figure. [`crate::judge::diff`] makes it.

use serde::{Deserialize, Serialize};

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
    /// One finding per transport, series and figure compared (and per transport not compared).
    pub findings: Vec<Finding>,
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
    /// The transport.
    pub transport: String,
    /// `send_call` or `delivery` (none for a transport-level finding).
    pub series: Option<String>,
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

    /// The one-line verdict: `no regression` or `regression: ...` naming each.
    pub fn summary_line(&self) -> String {
        let names: Vec<String> = self.regressions().map(Finding::label).collect();
        if names.is_empty() {
            format!("no regression against the baseline {}", self.baseline)
        } else {
            format!(
                "regression against the baseline {}: {}",
                self.baseline,
                names.join(", ")
            )
        }
    }
}

impl Finding {
    /// `futex delivery over_threshold_rate`.
    pub fn label(&self) -> String {
        let figure = serde_json::to_value(self.figure)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        match &self.series {
            Some(series) => format!("{} {series} {figure}", self.transport),
            None => format!("{} {figure}", self.transport),
        }
    }
}
