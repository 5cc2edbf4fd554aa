//! A series' tail estimate as the result records it: the fitted model with every parameter a
//! reader needs to recompute the figures, the checks it passed, or why there is none.

use serde::{Deserialize, Serialize};

/// A span return levels are given for: its id in the result, matched on by value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReturnSpan {
    Hour,
    Day,
    Year,
    /// A span this build does not know (a result from a newer build), kept as written.
    #[serde(untagged)]
    Unknown(String),
}

/// What the tail of one series supports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum TailEstimate {
    /// The fit passed, the run's tail was stable, the held-out check held, and the shape's
    /// interval stays below the heavy-tail bound.
    Estimated(Box<TailModel>),
    /// The fit passed, but the shape's interval reaches the heavy-tail bound: the return levels
    /// are not bounded by the data, so none are claimed (the model is kept for the reader).
    HeavyTail {
        /// One sentence, ending with what to do.
        reason: String,
        /// The fit that was refused.
        model: Box<TailModel>,
    },
    /// No figure: too few clusters, a threshold in the body, a rejected fit, a tail that
    /// changed during the run, or an estimate that failed its held-out check.
    NotEstimable {
        /// One sentence, ending with what to do.
        reason: String,
        /// Why, as an id (absent in results written before it was recorded).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        refusal: Option<TailRefusal>,
        /// The fit that was refused, where there was one, with the checks it failed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<Box<TailModel>>,
    },
}

impl TailEstimate {
    /// A refusal without a fit.
    pub fn refused(refusal: TailRefusal, reason: String) -> Self {
        TailEstimate::NotEstimable {
            reason,
            refusal: Some(refusal),
            model: None,
        }
    }
}

/// Why a tail was not estimated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TailRefusal {
    /// Nothing was measured, or the series' histogram did not decode.
    NoSamples,
    /// More than a tenth of the samples were over the recording threshold: it sits in the
    /// body of the distribution, not in its tail.
    ThresholdInBody,
    /// Fewer than 30 clusters over every candidate threshold.
    TooFewClusters,
    /// The generalized Pareto fit was rejected over every candidate threshold.
    FitRejected,
    /// The tail over the threshold has two separate modes.
    TwoModes,
    /// A trend in how often or how large the clusters were: the tail changed during the run.
    TailChanged,
    /// The clusters came in spells: they are not independent.
    ClustersClumped,
    /// The fit on one half of the run did not predict the other.
    HeldOutFailed,
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
    /// Samples the fit's span held (less than the run's when an outlier list that kept the
    /// run's first samples filled up).
    pub samples: u64,
    /// The span the fit used, ns from the start of the measured phase (several rounds: their
    /// measured time added).
    pub span_ns: u64,
    /// Every sample over this many ns in the span went into the fit's input: the recording
    /// threshold, or the level the outlier list was complete over when it filled.
    #[serde(default)]
    pub complete_over_ns: u64,
    /// The run's period, ns: return periods are counted in samples of it.
    pub period_ns: u64,
    /// Anderson-Darling test of the fit.
    pub fit_test: FitTestRecord,
    /// The tests of a stable tail on the clusters over the threshold (and over the lowest
    /// candidate threshold), each passed or not.
    #[serde(default)]
    pub stationarity: Vec<StationarityTest>,
    /// The fit on each half of the span checked against the other half, the first half's
    /// first (empty in results written before).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held_out: Vec<HeldOutRecord>,
    /// Return levels for an hour, a day and a year of operation.
    pub return_levels: Vec<ReturnLevel>,
    /// How much more the clusters' counts varied than Poisson counts would (the index of
    /// dispersion per degree of freedom, at least 1, the larger of the counts per stretch of
    /// the span and per half of it): the rate's interval,
    /// the held-out prediction and `soak_to_rule_out_s` count `clusters / dispersion` (1 in
    /// results written before).
    #[serde(default = "one")]
    pub dispersion: f64,
    /// The run's own threshold: how likely one cluster over it is in an hour.
    pub over_threshold: OverThreshold,
    /// The cluster maxima the fit used, ns, in time order.
    pub cluster_maxima_ns: Vec<u64>,
}

fn one() -> f64 {
    1.0
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

/// A test of whether the clusters over the threshold kept coming at one rate, with one size
/// distribution, independently, from the start of the span to its end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StationarityTest {
    /// Which.
    pub test: StationarityKind,
    /// The threshold whose clusters it tested, ns: the fit's, and the lowest candidate's (the
    /// most clusters, so the most power to see a change) where that is another.
    pub threshold_ns: u64,
    /// Clusters over it.
    pub clusters: u64,
    /// Its statistic (a standard normal for the trends, the dispersion index for clumping).
    pub statistic: f64,
    /// Its p-value.
    pub p_value: f64,
    /// Whether the p-value is at or above the level the estimate refuses below (0.01).
    pub passed: bool,
}

/// The stationarity tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StationarityKind {
    /// Laplace's test for a trend in the clusters' rate (their times).
    RateTrend,
    /// Mann and Kendall's test for a trend in the clusters' maxima.
    SizeTrend,
    /// The index of dispersion of the clusters counted per stretch of the span.
    Clumping,
}

/// The fit on one half of the span, checked against the other half.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeldOutRecord {
    /// The half fitted: `first` (it predicts the second) or `second` (it predicts the first).
    pub fitted_half: Half,
    /// Where the halves split, ns from the start of the span.
    pub split_ns: u64,
    /// Clusters over the threshold in the fitted half.
    pub fit_clusters: u64,
    /// Clusters over the threshold in the other half.
    pub clusters: u64,
    /// Interval of the other half's clusters predicted by the fit (the bootstrap predictive
    /// distribution: the fit's uncertainty and the other half's chance; with the largest
    /// sample's, 99 % together).
    pub clusters_low: u64,
    /// ...
    pub clusters_high: u64,
    /// The other half's largest sample over the threshold, ns (absent: none was over it).
    pub max_ns: Option<u64>,
    /// Interval of the other half's largest sample predicted by the fit, ns (`max_low_ns`
    /// absent: the prediction allows no cluster at all). Absent both, with `passed` false,
    /// when the fitted half held too few clusters to fit.
    pub max_low_ns: Option<f64>,
    /// ...
    pub max_high_ns: Option<f64>,
    /// Whether the other half's clusters and largest sample are both within the prediction.
    pub passed: bool,
}

/// A half of a span.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Half {
    /// From the start to the middle.
    First,
    /// From the middle to the end.
    Second,
}

/// The level one cluster exceeds on average once per span.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReturnLevel {
    /// Which span.
    pub span: ReturnSpan,
    /// The span, s.
    pub span_s: u64,
    /// The level, ns (absent: fewer than one cluster over the threshold is expected per span,
    /// so the level is below the threshold and the model says nothing about it).
    pub level_ns: Option<f64>,
    /// Lower bound of the 95 % interval, ns.
    pub low_ns: Option<f64>,
    /// Upper bound, ns (absent with `level_ns` present: open above).
    pub high_ns: Option<f64>,
    /// The level an exponential tail (shape 0) fitted to the same cluster maxima gives, ns.
    /// `level_ns` and `high_ns` are never below it or its upper bound: a tail the data cannot
    /// tell from an exponential one is not extrapolated as bounded. Absent in results written
    /// before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exponential_ns: Option<f64>,
    /// The span over the span measured: above 100 the figure leans on the model, not the data.
    pub extrapolation: f64,
}

/// Clusters over the lowest level the run's outlier list is complete over (the run's
/// threshold unless the list filled) and what they say about an hour.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverThreshold {
    /// The level, ns.
    pub threshold_ns: u64,
    /// Clusters over it in the span.
    pub clusters: u64,
    /// Probability of at least one in an hour, with its exact 95 % interval.
    pub probability_per_hour: f64,
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
    /// A soak this long with none over the level rules out, at 95 %, the rate this run saw:
    /// `3 / rate_low`, s, with `rate_low` the lower bound of the rate's exact 95 % interval. If
    /// nothing changed, the chance of a clean soak this long is then at most `e^-3` (5 %)
    /// unless the true rate is under that bound, itself a 2.5 % chance.
    pub soak_to_rule_out_s: f64,
}

/// One transport's tail estimates over all its rounds at once: the rounds' cluster maxima
/// pooled into one fit (the rounds laid end to end, in round order), for the verdict to judge
/// where a plan runs several.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PooledTail {
    /// The transport's registry name.
    pub transport: String,
    /// The ring setup its runs asked for, in a ring-setup comparison.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ring_setup: Option<super::RingSetup>,
    /// The rounds pooled.
    pub rounds: u32,
    /// Per series, as a run's `tail`.
    pub tail: std::collections::BTreeMap<super::SeriesKey, TailEstimate>,
}

#[cfg(test)]
mod tests {
    use super::ReturnSpan;

    #[test]
    fn a_span_is_written_as_results_have_always_had_it_and_an_unknown_one_is_kept() {
        for (span, id) in [
            (ReturnSpan::Hour, "hour"),
            (ReturnSpan::Day, "day"),
            (ReturnSpan::Year, "year"),
            (ReturnSpan::Unknown("week".into()), "week"),
        ] {
            let written = serde_json::to_string(&span).unwrap();
            assert_eq!(written, format!("\"{id}\""));
            assert_eq!(serde_json::from_str::<ReturnSpan>(&written).unwrap(), span);
        }
    }
}
