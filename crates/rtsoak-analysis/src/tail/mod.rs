//! Have we soaked long enough? Extreme-value estimates of what lies beyond the samples a run
//! took: a generalized Pareto fit to the cluster maxima over an automatically chosen threshold,
//! tested for fit, extrapolated to the worst latency to expect in an hour, a day and a year,
//! each with a 95 % interval. `docs/tail.md` explains the method and its assumptions.
//!
//! Owns: turning one series' exact outliers (values and times) and histogram into a
//! [`TailEstimate`], deterministically (every random draw is seeded), so re-rendering a saved
//! result gives the same figures. Never reads files, measures, judges or formats; the values it
//! fits come from the exact outlier list, never from histogram buckets.

mod decluster;
mod fit_test;
pub mod gpd;
mod return_level;
pub mod run;
mod threshold;

use hdrhistogram::Histogram;

use crate::stats::clopper_pearson_95;
use decluster::{Exceedance, decluster};
use rtsoak_record::Outlier;
use rtsoak_record::{
    FitTestRecord, OverThreshold, ReturnLevel, TailEstimate, TailModel, ThresholdTried,
};

/// Fewer clusters than this over every candidate and there is nothing to fit: the shape's
/// standard error would be above 0.2 and the fit test blind.
pub(crate) const MIN_CLUSTERS: u64 = 30;
/// Candidates with more clusters than this are skipped: a threshold that low sits in the body,
/// and the fit test's bootstrap (99 refits) grows with the sample, so this bounds the cost with
/// a long outlier list (`run.outliers_max` up to 100 000) to well under a second.
pub(crate) const MAX_CLUSTERS: usize = 1000;
/// A shape interval reaching this far cannot rule out a tail whose mean is infinite: the
/// "worst in a day" is then one event's luck, and no return level is claimed.
pub(crate) const HEAVY_XI: f64 = 1.0;
/// The lowest candidate threshold whose fit test p-value reaches this is chosen.
pub(crate) const THRESHOLD_ACCEPTED_AT: f64 = 0.10;
/// A gap between excesses less likely than this under the fit is a second mode.
pub(crate) const GAP_REJECTED_BELOW: f64 = 1e-3;
/// The fit test's seed: the same result re-rendered gives the same p-value.
const SEED: u64 = 0x7a11_5eed;
/// Estimates beyond this many times the span measured are marked as leaning on the model.
pub const EXTRAPOLATION_MARK: f64 = 100.0;

/// The spans return levels are given for, with their names.
pub const SPANS_S: [(&str, u64); 3] = [("hour", 3600), ("day", 86_400), ("year", 31_536_000)];

/// What one series of one run kept.
#[derive(Debug, Clone, Copy)]
pub struct TailInput<'a> {
    /// The exact over-threshold samples, in time order.
    pub outliers: &'a [Outlier],
    /// Over-threshold samples that did not fit in the list (the list is then a prefix in time).
    pub outliers_dropped: u64,
    /// The series' whole-run histogram.
    pub histogram: &'a Histogram<u64>,
    /// Measured time covered, ns.
    pub measured_ns: u64,
    /// The run's period, ns.
    pub period_ns: u64,
    /// The threshold the outlier list was kept over, ns.
    pub threshold_ns: u64,
}

/// One candidate threshold, fitted.
struct Candidate {
    threshold_ns: u64,
    exceedances: u64,
    clusters: decluster::Clusters,
    excesses: Vec<f64>,
    fit: gpd::Gpd,
    log_likelihood: f64,
}

/// The tail estimate of one series.
pub fn estimate(input: &TailInput) -> TailEstimate {
    let not = |reason: String| TailEstimate::NotEstimable { reason };
    let samples_run = input.histogram.len();
    if samples_run == 0 || input.period_ns == 0 || input.measured_ns == 0 {
        return not("no samples were measured".to_string());
    }
    // A full outlier list is complete up to its last sample: fit that span, not the run's.
    let (span_ns, samples) = match (input.outliers_dropped, input.outliers.last()) {
        (0, _) | (_, None) => (input.measured_ns, samples_run),
        (_, Some(last)) => {
            let span = last.at_ns.clamp(1, input.measured_ns);
            let share = span as f64 / input.measured_ns as f64;
            (span, ((samples_run as f64 * share).round() as u64).max(1))
        }
    };
    let exceedances: Vec<Exceedance> = input
        .outliers
        .iter()
        .map(|o| Exceedance {
            index: o.at_ns / input.period_ns,
            value: o.value_ns as f64,
        })
        .collect();
    let clusters = decluster(&exceedances);
    let over_threshold = over_threshold(clusters.maxima.len() as u64, samples, input);
    let mut fitted = Vec::new();
    for threshold_ns in threshold::candidates(input.histogram, input.threshold_ns, MIN_CLUSTERS) {
        let over = clusters
            .maxima
            .iter()
            .filter(|&&v| v > threshold_ns as f64)
            .count();
        if over > MAX_CLUSTERS {
            continue;
        }
        match fit_over(&exceedances, &clusters, threshold_ns) {
            Some(candidate) => fitted.push(candidate),
            None => break,
        }
    }
    if fitted.is_empty() {
        return not(format!(
            "{} clusters of samples over {} ({} samples); at least {MIN_CLUSTERS} clusters are \
             needed: soak longer or lower run.threshold_us",
            clusters.maxima.len(),
            us(input.threshold_ns),
            exceedances.len(),
        ));
    }
    let tried: Vec<ThresholdTried> = fitted
        .iter()
        .map(|c| ThresholdTried {
            threshold_ns: c.threshold_ns,
            exceedances: c.exceedances,
            clusters: c.clusters.maxima.len() as u64,
            xi: c.fit.xi,
        })
        .collect();
    // The stability of the shape is recorded; the choice is the lowest candidate the fit test
    // accepts (Choulakian and Stephens' sequential procedure): a stable-looking shape over 30
    // clusters is too noisy to choose by, and a threshold under a spike mode's lower edge
    // (where the excesses are a shifted, not a Pareto, distribution) fails the test.
    let mut last_test = None;
    for candidate in &fitted {
        let test = fit_test::test(&candidate.excesses, &candidate.fit, SEED);
        if test.p_value < THRESHOLD_ACCEPTED_AT {
            last_test = Some(test);
            continue;
        }
        // Anderson-Darling, dominated by the many samples of a first mode, can accept a tail
        // with a second, rare mode far out: the gap between them gives it away.
        if fit_test::widest_gap_p(&candidate.excesses, &candidate.fit) < GAP_REJECTED_BELOW {
            return not(format!(
                "the samples over {} have two separate modes (a gap no single tail explains): \
                 the rare mode has too few samples to fit on its own; soak longer, or find its \
                 cause",
                us(candidate.threshold_ns)
            ));
        }
        let model = model(
            candidate,
            test,
            &tried,
            samples,
            span_ns,
            input,
            over_threshold,
        );
        return classify(model);
    }
    let test = last_test.expect("at least one candidate was tested");
    not(format!(
        "the generalized Pareto fit is rejected over every threshold tried (Anderson-Darling \
         A^2 {:.2}, p {:.2} at the highest): the tail has more than one mode or changed during \
         the run; look at the spikes' causes, or soak longer",
        test.statistic, test.p_value
    ))
}

/// Fit the clusters over `threshold_ns`; `None` with fewer than [`MIN_CLUSTERS`].
///
/// Clusters are formed once, over the recording threshold, where the most exceedances make the
/// extremal index (and so the run length) best estimated; a cluster is over a higher candidate
/// when its maximum is. Declustering anew at each candidate, from fewer exceedances, merged
/// separate bursts whenever the estimate came out low.
fn fit_over(
    exceedances: &[Exceedance],
    clusters: &decluster::Clusters,
    threshold_ns: u64,
) -> Option<Candidate> {
    let u = threshold_ns as f64;
    let over = exceedances.iter().filter(|e| e.value > u).count() as u64;
    let maxima: Vec<f64> = clusters.maxima.iter().copied().filter(|&v| v > u).collect();
    if (maxima.len() as u64) < MIN_CLUSTERS {
        return None;
    }
    let excesses: Vec<f64> = maxima.iter().map(|v| v - u).collect();
    let (fit, log_likelihood) = gpd::fit(&excesses)?;
    Some(Candidate {
        threshold_ns,
        exceedances: over,
        clusters: decluster::Clusters {
            maxima,
            extremal_index: clusters.extremal_index,
            run_length_samples: clusters.run_length_samples,
        },
        excesses,
        fit,
        log_likelihood,
    })
}

fn model(
    candidate: &Candidate,
    test: fit_test::FitTest,
    tried: &[ThresholdTried],
    samples: u64,
    span_ns: u64,
    input: &TailInput,
    over_threshold: OverThreshold,
) -> TailModel {
    let clusters = candidate.clusters.maxima.len() as u64;
    let tail = return_level::TailFit {
        excesses: &candidate.excesses,
        fit: candidate.fit,
        log_likelihood: candidate.log_likelihood,
        threshold: candidate.threshold_ns as f64,
        cluster_rate: clusters as f64 / samples as f64,
        clusters,
    };
    let spans: Vec<f64> = SPANS_S
        .iter()
        .map(|&(_, s)| s as f64 * 1e9 / input.period_ns as f64)
        .collect();
    let extrapolation = return_level::extrapolate(&tail, &spans);
    let return_levels = SPANS_S
        .iter()
        .zip(&spans)
        .zip(&extrapolation.levels)
        .map(|((&(name, span_s), &span), level)| ReturnLevel {
            span: name.to_string(),
            span_s,
            level_ns: level.map(|l| l.estimate),
            low_ns: level.map(|l| l.low),
            high_ns: level.and_then(|l| l.high.is_finite().then_some(l.high)),
            extrapolation: span / samples as f64,
        })
        .collect();
    TailModel {
        threshold_ns: candidate.threshold_ns,
        thresholds_tried: tried.to_vec(),
        xi: candidate.fit.xi,
        xi_low: extrapolation.xi.low,
        xi_high: extrapolation
            .xi
            .high
            .is_finite()
            .then_some(extrapolation.xi.high),
        sigma_ns: candidate.fit.sigma,
        exceedances: candidate.exceedances,
        clusters,
        extremal_index: candidate.clusters.extremal_index,
        run_length_samples: candidate.clusters.run_length_samples,
        samples,
        span_ns,
        period_ns: input.period_ns,
        fit_test: FitTestRecord {
            anderson_darling: test.statistic,
            p_value: test.p_value,
            resamples: fit_test::RESAMPLES as u32,
        },
        return_levels,
        over_threshold,
        cluster_maxima_ns: candidate
            .clusters
            .maxima
            .iter()
            .map(|&v| v as u64)
            .collect(),
    }
}

fn classify(model: TailModel) -> TailEstimate {
    match model.xi_high {
        Some(high) if high < HEAVY_XI => TailEstimate::Estimated(Box::new(model)),
        high => TailEstimate::HeavyTail {
            reason: format!(
                "the shape's 95 % interval reaches {} (xi {:.2}, bound {HEAVY_XI}): a tail this \
                 heavy has no bounded worst case the data can show; find and remove the cause of \
                 the largest spikes",
                high.map_or("beyond 3".to_string(), |h| format!("{h:.2}")),
                model.xi,
            ),
            model: Box::new(model),
        },
    }
}

/// Clusters over the recording threshold, and the probability of one in an hour.
fn over_threshold(clusters: u64, samples: u64, input: &TailInput) -> OverThreshold {
    let per_hour = 3600e9 / input.period_ns as f64;
    let probability = |rate: f64| 1.0 - (-rate * per_hour).exp();
    let rate = clusters as f64 / samples as f64;
    let interval = clopper_pearson_95(clusters, samples).expect("samples > 0");
    // Zero clusters: the rate to rule out is the run's own 95 % upper bound.
    let ruled_out = if clusters == 0 { interval.high } else { rate };
    OverThreshold {
        threshold_ns: input.threshold_ns,
        clusters,
        probability_per_hour: probability(rate),
        low: probability(interval.low),
        high: probability(interval.high),
        soak_to_rule_out_s: 3.0 / ruled_out * input.period_ns as f64 / 1e9,
    }
}

fn us(ns: u64) -> String {
    format!("{} us", ns as f64 / 1000.0)
}
