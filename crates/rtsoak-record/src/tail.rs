//! A series' tail estimate as the result records it: the fitted model with every parameter a
//! reader needs to recompute the figures, or why there is none.

use serde::{Deserialize, Serialize};

/// What the tail of one series supports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum TailEstimate {
    /// The fit passed and its shape interval stays below the heavy-tail bound.
    Estimated(Box<TailModel>),
    /// The fit passed, but the shape's interval reaches the heavy-tail bound: the return levels
    /// are not bounded by the data, so none are claimed (the model is kept for the reader).
    HeavyTail {
        /// One sentence, ending with what to do.
        reason: String,
        /// The fit that was refused.
        model: Box<TailModel>,
    },
    /// Too few clusters, or the fit was rejected at every threshold tried.
    NotEstimable {
        /// One sentence, ending with what to do.
        reason: String,
    },
}

/// A peaks-over-threshold fit: a generalized Pareto distribution of cluster maxima over
/// `threshold_ns`. Return level for `m` samples: `threshold + sigma / xi * ((m *
/// clusters / samples)^xi - 1)` (`threshold + sigma * ln(...)` at `xi` = 0).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TailModel {
    /// The threshold chosen, ns (strictly above it is an exceedance).
    pub threshold_ns: u64,
    /// Every candidate threshold considered, lowest first.
    pub thresholds_tried: Vec<ThresholdTried>,
    /// Shape, with its 95 % profile-likelihood interval (`xi_high` absent: open above).
    pub xi: f64,
    /// Lower bound of the shape's interval.
    pub xi_low: f64,
    /// Upper bound of the shape's interval.
    pub xi_high: Option<f64>,
    /// Scale, ns.
    pub sigma_ns: f64,
    /// Samples over the threshold.
    pub exceedances: u64,
    /// Clusters they form (the fit's sample size).
    pub clusters: u64,
    /// Ferro-Segers estimate of the extremal index (1: independent; 1/k: bursts of k).
    pub extremal_index: f64,
    /// A gap of at least this many samples between exceedances separates clusters.
    pub run_length_samples: u64,
    /// Samples the fit's span held (less than the run's when the outlier list filled up).
    pub samples: u64,
    /// The span the fit used, ns from the start of the measured phase.
    pub span_ns: u64,
    /// The run's period, ns: return periods are counted in samples of it.
    pub period_ns: u64,
    /// Anderson-Darling test of the fit.
    pub fit_test: FitTestRecord,
    /// Return levels for an hour, a day and a year of operation.
    pub return_levels: Vec<ReturnLevel>,
    /// The run's own threshold: how likely one cluster over it is in an hour.
    pub over_threshold: OverThreshold,
    /// The cluster maxima the fit used, ns, in time order.
    pub cluster_maxima_ns: Vec<u64>,
}

/// A candidate threshold and the fit over it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThresholdTried {
    /// The candidate, ns.
    pub threshold_ns: u64,
    /// Samples over it.
    pub exceedances: u64,
    /// Clusters they form.
    pub clusters: u64,
    /// Fitted shape.
    pub xi: f64,
}

/// Goodness of fit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FitTestRecord {
    /// Anderson-Darling A^2 of the cluster maxima against the fit.
    pub anderson_darling: f64,
    /// Its p-value from a seeded parametric bootstrap.
    pub p_value: f64,
    /// Bootstrap resamples.
    pub resamples: u32,
}

/// The level one cluster exceeds on average once per span.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReturnLevel {
    /// `hour`, `day` or `year`.
    pub span: String,
    /// The span, s.
    pub span_s: u64,
    /// The level, ns (absent: fewer than one cluster over the threshold is expected per span,
    /// so the level is below the threshold and the model says nothing about it).
    pub level_ns: Option<f64>,
    /// Lower bound of the 95 % interval, ns.
    pub low_ns: Option<f64>,
    /// Upper bound, ns (absent with `level_ns` present: open above).
    pub high_ns: Option<f64>,
    /// The span over the span measured: above 100 the figure leans on the model, not the data.
    pub extrapolation: f64,
}

/// Clusters over the run's threshold and what they say about an hour.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverThreshold {
    /// The run's threshold, ns.
    pub threshold_ns: u64,
    /// Clusters over it in the span.
    pub clusters: u64,
    /// Probability of at least one in an hour, with its exact 95 % interval.
    pub probability_per_hour: f64,
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
    /// A soak this long with none over the threshold rules out (at 95 %) the rate this run saw:
    /// 3 / rate, s.
    pub soak_to_rule_out_s: f64,
}
