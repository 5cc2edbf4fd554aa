//! The record of a chosen fit: every parameter a reader needs to recompute the figures, the
//! return levels, the rate over the run's own level, and the checks the estimate passed or
//! failed.
//!
//! Owns: turning the module root's pieces into a [`TailModel`]. Never decides whether the
//! estimate stands.

use super::decluster::Clusters;
use super::held_out::{Direction, HeldOut};
use super::stationarity::{self, Outcome};
use super::timeline::Timeline;
use super::{SPANS_S, fit_test, gpd, return_level};
use crate::stats::clopper_pearson_95;
use rtsoak_record::{
    FitTestRecord, Half, HeldOutRecord, OverThreshold, ReturnLevel, StationarityKind,
    StationarityTest, TailModel, ThresholdTried,
};

/// One candidate threshold, declustered and fitted.
pub(super) struct Candidate {
    /// The threshold, ns.
    pub threshold_ns: u64,
    /// Samples over it.
    pub exceedances: u64,
    /// Their clusters.
    pub clusters: Clusters,
    /// The cluster maxima minus the threshold.
    pub excesses: Vec<f64>,
    /// The maximum-likelihood fit and its log-likelihood.
    pub fit: gpd::Gpd,
    /// ...
    pub log_likelihood: f64,
}

impl Candidate {
    /// How it is recorded among the thresholds tried.
    pub(super) fn tried(&self) -> ThresholdTried {
        ThresholdTried {
            threshold_ns: self.threshold_ns,
            exceedances: self.exceedances,
            clusters: self.clusters.maxima.len() as u64,
            xi: self.fit.xi,
        }
    }

    /// The fit in the form the extrapolation needs, its rate per sample of a span of `samples`
    /// (`periods` long).
    pub(super) fn tail_fit(&self, samples: u64, periods: u64) -> return_level::TailFit<'_> {
        let clusters = self.clusters.maxima.len() as u64;
        return_level::TailFit {
            excesses: &self.excesses,
            fit: self.fit,
            log_likelihood: self.log_likelihood,
            threshold: self.threshold_ns as f64,
            cluster_rate: clusters as f64 / samples.max(1) as f64,
            clusters,
            dispersion: stationarity::dispersion_factor(&self.clusters.starts, periods),
        }
    }
}

/// The stationarity tests of `clusters` over `threshold_ns` in a span of `periods`.
pub(super) fn stationarity(
    clusters: &Clusters,
    threshold_ns: u64,
    periods: u64,
) -> Vec<StationarityTest> {
    let record = |test, outcome: Outcome| StationarityTest {
        test,
        threshold_ns,
        clusters: clusters.maxima.len() as u64,
        statistic: outcome.statistic,
        p_value: outcome.p_value,
        passed: outcome.p_value >= stationarity::REJECT_BELOW,
    };
    let mut tests = vec![
        record(
            StationarityKind::RateTrend,
            stationarity::rate_trend(&clusters.starts, periods),
        ),
        record(
            StationarityKind::SizeTrend,
            stationarity::size_trend(&clusters.maxima),
        ),
    ];
    if let Some(outcome) = stationarity::clumping(&clusters.starts, periods) {
        tests.push(record(StationarityKind::Clumping, outcome));
    }
    tests
}

/// The held-out check as recorded, at `period_ns`.
pub(super) fn held_out(check: &HeldOut, period_ns: u64) -> HeldOutRecord {
    let prediction = check.prediction;
    HeldOutRecord {
        fitted_half: match check.direction {
            Direction::Forward => Half::First,
            Direction::Backward => Half::Second,
        },
        split_ns: check.split * period_ns,
        fit_clusters: check.fit_clusters,
        clusters: check.rest_clusters,
        clusters_low: prediction.map_or(0, |p| p.clusters_low),
        clusters_high: prediction.map_or(0, |p| p.clusters_high),
        max_ns: check.rest_max.map(|m| m as u64),
        max_low_ns: prediction.and_then(|p| p.max_low),
        max_high_ns: prediction.map(|p| p.max_high),
        passed: check.passed(),
    }
}

/// Everything a [`TailModel`] is made of.
pub(super) struct Parts<'a> {
    /// The chosen candidate.
    pub candidate: &'a Candidate,
    /// Its fit test.
    pub test: fit_test::FitTest,
    /// Every candidate fitted.
    pub tried: Vec<ThresholdTried>,
    /// The span.
    pub timeline: &'a Timeline,
    /// The clusters over the level the span is complete over.
    pub floor: &'a Clusters,
    /// The run's period, ns.
    pub period_ns: u64,
    /// The stationarity tests.
    pub stationarity: Vec<StationarityTest>,
    /// The held-out checks, the first half's first.
    pub held_out: Vec<HeldOutRecord>,
}

/// The model record.
pub(super) fn build(parts: Parts) -> TailModel {
    let Parts {
        candidate,
        timeline,
        period_ns,
        ..
    } = parts;
    let samples = timeline.samples;
    let tail = candidate.tail_fit(samples, timeline.periods);
    let spans: Vec<f64> = SPANS_S
        .iter()
        .map(|&(_, s)| s as f64 * 1e9 / period_ns as f64)
        .collect();
    let extrapolation = return_level::extrapolate(&tail, &spans);
    let return_levels = SPANS_S
        .iter()
        .zip(&spans)
        .zip(&extrapolation.levels)
        .map(|(((name, span_s), &span), level)| ReturnLevel {
            span: name.clone(),
            span_s: *span_s,
            level_ns: level.map(|l| l.level.estimate),
            low_ns: level.map(|l| l.level.low),
            high_ns: level.and_then(|l| l.level.high.is_finite().then_some(l.level.high)),
            exponential_ns: level.map(|l| l.exponential),
            extrapolation: span / samples as f64,
        })
        .collect();
    TailModel {
        threshold_ns: candidate.threshold_ns,
        thresholds_tried: parts.tried,
        xi: candidate.fit.xi,
        xi_low: extrapolation.xi.low,
        xi_high: extrapolation
            .xi
            .high
            .is_finite()
            .then_some(extrapolation.xi.high),
        sigma_ns: candidate.fit.sigma,
        exceedances: candidate.exceedances,
        clusters: tail.clusters,
        extremal_index: candidate.clusters.extremal_index,
        run_length_samples: candidate.clusters.run_length_samples,
        samples,
        span_ns: timeline.span_ns,
        complete_over_ns: timeline.complete_over_ns,
        period_ns,
        fit_test: FitTestRecord {
            anderson_darling: parts.test.statistic,
            p_value: parts.test.p_value,
            resamples: fit_test::RESAMPLES as u32,
        },
        stationarity: parts.stationarity,
        held_out: parts.held_out,
        return_levels,
        dispersion: tail.dispersion,
        over_threshold: over_threshold(parts.floor, timeline, period_ns),
        cluster_maxima_ns: candidate
            .clusters
            .maxima
            .iter()
            .map(|&v| v as u64)
            .collect(),
    }
}

/// The clusters over the level `timeline` is complete over, and the probability of one in an
/// hour.
fn over_threshold(floor: &Clusters, timeline: &Timeline, period_ns: u64) -> OverThreshold {
    let per_hour = 3600e9 / period_ns as f64;
    let probability = |rate: f64| 1.0 - (-rate * per_hour).exp();
    let samples = timeline.samples.max(1);
    let clusters = floor.maxima.len() as u64;
    let rate = clusters as f64 / samples as f64;
    let interval = clopper_pearson_95(clusters, samples).expect("samples > 0");
    let dispersion = stationarity::dispersion_factor(&floor.starts, timeline.periods);
    let rule_out = rate_to_rule_out(clusters, dispersion, samples);
    OverThreshold {
        threshold_ns: timeline.complete_over_ns,
        clusters,
        probability_per_hour: probability(rate),
        low: probability(interval.low),
        high: probability(interval.high),
        soak_to_rule_out_s: 3.0 / rule_out * period_ns as f64 / 1e9,
    }
}

/// The cluster rate per sample a clean soak must rule out. A clean soak of `3 / rate` has a
/// chance of e^-3 = 5 % at that rate, but the run's own rate is an estimate, and where the
/// true one is lower the chance is higher (with the rate itself, a median 8 % of such windows
/// were clean on seeded series). Three things make the count uncertain: Poisson counting, which
/// the exact 95 % interval covers; overdispersion, which makes `clusters` worth `clusters /
/// dispersion` Poisson ones; and declustering, since the number of clusters is the extremal
/// index estimate times the exceedances, an estimate about as uncertain as the count (its
/// standard error is of the order of its square root; Ferro and Segers' estimator also splits
/// a few episodes of several spikes). The rate is the exact interval's lower bound of the
/// effective count less one standard error: the 5 % then held on every seeded case
/// (`docs/tail.md`). Zero clusters: the run's own upper bound.
fn rate_to_rule_out(clusters: u64, dispersion: f64, samples: u64) -> f64 {
    let effective = clusters as f64 / dispersion.max(1.0);
    let exposure = ((samples as f64 / dispersion.max(1.0)).round() as u64).max(1);
    let count = ((effective - effective.sqrt()).floor().max(0.0) as u64).min(exposure);
    match clopper_pearson_95(count, exposure) {
        Some(interval) if interval.low > 0.0 => interval.low,
        _ => clopper_pearson_95(clusters, samples).map_or(1.0, |i| i.high),
    }
}
