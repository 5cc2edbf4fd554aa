//! Have we soaked long enough? Extreme-value estimates of what lies beyond the samples a run
//! took: a generalized Pareto fit to the cluster maxima over an automatically chosen threshold,
//! tested for fit, for a tail that stayed the same through the run, and against the run's own
//! second half, then extrapolated to the worst latency to expect in an hour, a day and a year,
//! each with a 95 % interval. `docs/tail.md` explains the method and its assumptions.
//!
//! Owns: turning one series' exact outliers (values and times) and histogram into a
//! [`TailEstimate`] (or several rounds' into one), deterministically (every random draw is
//! seeded), so re-rendering a saved result gives the same figures. Never reads files,
//! measures, judges or formats; the values it fits come from the exact outlier list, never
//! from histogram buckets.

pub mod decluster;
mod fit_test;
pub mod gpd;
pub mod held_out;
mod model;
mod refusal;
mod return_level;
pub mod run;
mod stationarity;
mod threshold;
mod timeline;

use hdrhistogram::Histogram;

use decluster::{Exceedance, decluster};
use model::Candidate;
use rtsoak_record::Outlier;
use rtsoak_record::{ReturnSpan, TailEstimate, TailModel, TailRefusal};
use timeline::Timeline;

/// Fewer clusters than this over every candidate and there is nothing to fit: the shape's
/// standard error would be above 0.2 and the fit test blind.
pub(crate) const MIN_CLUSTERS: u64 = 30;
/// Candidates with more clusters than this are skipped: a threshold that low sits in the body,
/// and the fit test's bootstrap (99 refits) grows with the sample, so this bounds the cost with
/// a long outlier list (`run.outliers_max` up to 100 000) to well under a second.
pub const MAX_CLUSTERS: usize = 1000;
/// More than this share of the samples over the recording threshold and it sits in the body
/// of the distribution: there, spikes are not rare, runs of samples over it chain separate
/// episodes into one cluster, and the outlier list fills with the body.
pub const BODY_SHARE: f64 = 0.10;
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

/// The spans return levels are given for, with their lengths, s.
pub const SPANS_S: [(ReturnSpan, u64); 3] = [
    (ReturnSpan::Hour, 3600),
    (ReturnSpan::Day, 86_400),
    (ReturnSpan::Year, 31_536_000),
];

/// What one series of one run kept.
#[derive(Debug, Clone, Copy)]
pub struct TailInput<'a> {
    /// The exact over-threshold samples, in time order.
    pub outliers: &'a [Outlier],
    /// Over-threshold samples that did not fit in the list.
    pub outliers_dropped: u64,
    /// Every sample of the run over this many ns is in `outliers`; `None` for a result written
    /// before the list kept the largest samples (its full list is a prefix in time).
    pub outliers_complete_over_ns: Option<u64>,
    /// The series' whole-run histogram.
    pub histogram: &'a Histogram<u64>,
    /// Measured time covered, ns.
    pub measured_ns: u64,
    /// The run's period, ns.
    pub period_ns: u64,
    /// The threshold the outlier list was kept over, ns.
    pub threshold_ns: u64,
}

/// The tail estimate of one series.
pub fn estimate(input: &TailInput) -> TailEstimate {
    match timeline::of_run(input) {
        Ok(timeline) => estimate_over(
            &timeline,
            input.histogram,
            input.period_ns,
            input.threshold_ns,
        ),
        Err(refused) => refused,
    }
}

/// One estimate over several rounds of one series (the same period and threshold), laid end
/// to end in the order given; `histogram` is the sum of theirs. The stationarity tests and the
/// held-out check then compare the rounds as they compare a run's start and end.
pub fn estimate_pooled(rounds: &[TailInput], histogram: &Histogram<u64>) -> TailEstimate {
    let Some(first) = rounds.first() else {
        return TailEstimate::refused(TailRefusal::NoSamples, "no rounds to pool".to_string());
    };
    match timeline::pooled(rounds) {
        Ok(timeline) => estimate_over(&timeline, histogram, first.period_ns, first.threshold_ns),
        Err(refused) => refused,
    }
}

/// The estimate over `timeline`: the applicability checks first, then the fit, then its checks.
fn estimate_over(
    timeline: &Timeline,
    histogram: &Histogram<u64>,
    period_ns: u64,
    threshold_ns: u64,
) -> TailEstimate {
    if let Some(refused) = refusal::threshold_in_body(histogram, threshold_ns) {
        return refused;
    }
    let Chosen {
        candidate,
        test,
        tried,
        lowest,
    } = match choose(timeline, histogram, threshold_ns) {
        Ok(chosen) => chosen,
        Err(refused) => return refused,
    };
    let floor = decluster(&timeline.exceedances);
    let checks = held_out::check(
        &candidate.clusters,
        candidate.threshold_ns as f64,
        timeline.periods,
    );
    let model = model::build(model::Parts {
        candidate: &candidate,
        test,
        tried,
        timeline,
        floor: &floor,
        period_ns,
        stationarity: stationarity(&candidate, lowest.as_ref(), timeline.periods),
        held_out: checks
            .iter()
            .map(|c| model::held_out(c, period_ns))
            .collect(),
    });
    judge(model)
}

/// The chosen candidate, its fit test, every candidate fitted, and the lowest of them where it
/// is not the chosen one.
struct Chosen {
    candidate: Candidate,
    test: fit_test::FitTest,
    tried: Vec<rtsoak_record::ThresholdTried>,
    lowest: Option<Candidate>,
}

/// The stationarity tests over the chosen threshold and over the lowest candidate: a change in
/// the run shows best where the most clusters are, and a tail whose lower part changed during
/// the run is no safer to extrapolate from its upper part, which holds too few clusters to
/// show the change.
fn stationarity(
    chosen: &Candidate,
    lowest: Option<&Candidate>,
    periods: u64,
) -> Vec<rtsoak_record::StationarityTest> {
    let mut tests = model::stationarity(&chosen.clusters, chosen.threshold_ns, periods);
    if let Some(lowest) = lowest {
        tests.extend(model::stationarity(
            &lowest.clusters,
            lowest.threshold_ns,
            periods,
        ));
    }
    tests
}

/// Decluster and fit at every candidate threshold; choose the lowest the fit test accepts
/// (Choulakian and Stephens' sequential procedure): a stable-looking shape over 30 clusters is
/// too noisy to choose by, and a threshold under a spike mode's lower edge (where the excesses
/// are a shifted, not a Pareto, distribution) fails the test. Every candidate's shape is
/// recorded, so a reader can see how stable it was.
fn choose(
    timeline: &Timeline,
    histogram: &Histogram<u64>,
    threshold_ns: u64,
) -> Result<Chosen, TailEstimate> {
    let mut fitted = Vec::new();
    for threshold in threshold::candidates(histogram, timeline.complete_over_ns, MIN_CLUSTERS) {
        let Some(candidate) = fit_at(&timeline.exceedances, threshold) else {
            break;
        };
        if candidate.clusters.maxima.len() <= MAX_CLUSTERS {
            fitted.push(candidate);
        }
    }
    if fitted.is_empty() {
        return Err(refusal::too_few_clusters(timeline, threshold_ns));
    }
    let tried: Vec<_> = fitted.iter().map(Candidate::tried).collect();
    let mut last_test = None;
    let mut lowest = None;
    for (rank, candidate) in fitted.into_iter().enumerate() {
        let test = fit_test::test(&candidate.excesses, &candidate.fit, SEED);
        if test.p_value < THRESHOLD_ACCEPTED_AT {
            last_test = Some(test);
            if rank == 0 {
                lowest = Some(candidate);
            }
            continue;
        }
        // Anderson-Darling, dominated by the many samples of a first mode, can accept a tail
        // with a second, rare mode far out: the gap between them gives it away.
        if fit_test::widest_gap_p(&candidate.excesses, &candidate.fit) < GAP_REJECTED_BELOW {
            return Err(refusal::two_modes(candidate.threshold_ns));
        }
        return Ok(Chosen {
            candidate,
            test,
            tried,
            lowest,
        });
    }
    Err(refusal::fit_rejected(
        &last_test.expect("at least one candidate was tested"),
    ))
}

/// Decluster the samples over `threshold_ns` anew and fit their cluster maxima; `None` with
/// fewer than [`MIN_CLUSTERS`].
fn fit_at(exceedances: &[Exceedance], threshold_ns: u64) -> Option<Candidate> {
    let u = threshold_ns as f64;
    let over: Vec<Exceedance> = exceedances
        .iter()
        .filter(|e| e.value > u)
        .copied()
        .collect();
    let clusters = decluster(&over);
    if (clusters.maxima.len() as u64) < MIN_CLUSTERS {
        return None;
    }
    let excesses: Vec<f64> = clusters.maxima.iter().map(|v| v - u).collect();
    let (fit, log_likelihood) = gpd::fit(&excesses)?;
    Some(Candidate {
        threshold_ns,
        exceedances: over.len() as u64,
        clusters,
        excesses,
        fit,
        log_likelihood,
    })
}

/// The estimate a checked model stands as: refused where the tail changed during the run or
/// the held-out check failed, heavy where the shape's interval reaches [`HEAVY_XI`].
fn judge(model: TailModel) -> TailEstimate {
    if let Some(refused) = refusal::unstable(&model) {
        return refused;
    }
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

fn us(ns: u64) -> String {
    format!("{} us", ns as f64 / 1000.0)
}
