//! Why an estimate is refused, in the words an RT engineer acts on: what the run showed, with
//! the figure that showed it, and what to do. A refused estimate prints no number.
//!
//! Owns: the applicability check that comes before any fit (a recording threshold in the
//! body), the reading of a fitted model's checks, and every refusal's sentence. Never fits.

use hdrhistogram::Histogram;

use super::timeline::Timeline;
use super::{BODY_SHARE, MIN_CLUSTERS, fit_test, us};
use rtsoak_record::{Half, StationarityKind, TailEstimate, TailModel, TailRefusal};

/// Refused when more than [`BODY_SHARE`] of the samples are over the recording threshold.
pub(super) fn threshold_in_body(
    histogram: &Histogram<u64>,
    threshold_ns: u64,
) -> Option<TailEstimate> {
    let total = histogram.len();
    let over = histogram.count_between(threshold_ns.saturating_add(1), u64::MAX);
    let share = over as f64 / total.max(1) as f64;
    if share <= BODY_SHARE {
        return None;
    }
    let p99 = histogram.value_at_quantile(0.99);
    Some(TailEstimate::refused(
        TailRefusal::ThresholdInBody,
        format!(
            "{:.0} % of the samples are over the recording threshold ({}): it sits in the body \
             of the distribution, where samples over it are not rare and runs of them chain \
             separate episodes into one; raise run.threshold_us (or --threshold) to at least \
             the 99th percentile, {}",
            share * 100.0,
            us(threshold_ns),
            us(histogram.highest_equivalent(p99)),
        ),
    ))
}

/// Refused with fewer than [`MIN_CLUSTERS`] clusters over every candidate.
pub(super) fn too_few_clusters(timeline: &Timeline, threshold_ns: u64) -> TailEstimate {
    let clusters = super::decluster::decluster(&timeline.exceedances);
    let advice = if timeline.complete_over_ns > threshold_ns {
        "soak longer, or raise run.outliers_max so the list holds more of the tail"
    } else {
        "soak longer, or lower run.threshold_us (keeping under a tenth of the samples over it)"
    };
    TailEstimate::refused(
        TailRefusal::TooFewClusters,
        format!(
            "{} clusters of samples over {} ({} samples); at least {MIN_CLUSTERS} clusters are \
             needed: {advice}",
            clusters.maxima.len(),
            us(timeline.complete_over_ns),
            timeline.exceedances.len(),
        ),
    )
}

/// Refused when the widest gap between excesses over `threshold_ns` is a second mode.
pub(super) fn two_modes(threshold_ns: u64) -> TailEstimate {
    TailEstimate::refused(
        TailRefusal::TwoModes,
        format!(
            "the samples over {} have two separate modes (a gap no single tail explains): the \
             rare mode has too few samples to fit on its own; soak longer, or find its cause",
            us(threshold_ns)
        ),
    )
}

/// Refused when the fit test rejected every candidate; `last` is the highest's test.
pub(super) fn fit_rejected(last: &fit_test::FitTest) -> TailEstimate {
    TailEstimate::refused(
        TailRefusal::FitRejected,
        format!(
            "the generalized Pareto fit is rejected over every threshold tried (Anderson-Darling \
             A^2 {:.2}, p {:.2} at the highest): the tail has more than one mode or changed \
             during the run; look at the spikes' causes, or soak longer",
            last.statistic, last.p_value
        ),
    )
}

/// Refused when a stationarity test or the held-out check failed: the first failure, in the
/// order trend, clumping, held out.
pub(super) fn unstable(model: &TailModel) -> Option<TailEstimate> {
    let failed = model.stationarity.iter().find(|t| !t.passed);
    let (refusal, reason) = match failed {
        Some(test) => {
            let (p, clusters, over) = (test.p_value, test.clusters, us(test.threshold_ns));
            let (refusal, what) = match test.test {
                StationarityKind::RateTrend => (
                    TailRefusal::TailChanged,
                    format!(
                        "the tail changed during the run: the {clusters} clusters over {over} \
                         came {} often towards its end (Laplace trend test, p = {p:.1e})",
                        if test.statistic > 0.0 { "more" } else { "less" }
                    ),
                ),
                StationarityKind::SizeTrend => (
                    TailRefusal::TailChanged,
                    format!(
                        "the tail changed during the run: the {clusters} clusters over {over} \
                         grew {} (Mann-Kendall trend test on their maxima, p = {p:.1e})",
                        if test.statistic > 0.0 {
                            "larger"
                        } else {
                            "smaller"
                        }
                    ),
                ),
                StationarityKind::Clumping => (
                    TailRefusal::ClustersClumped,
                    format!(
                        "the {clusters} clusters over {over} came in spells, not independently \
                         (index of dispersion {:.1}, p = {p:.1e})",
                        test.statistic
                    ),
                ),
            };
            (
                refusal,
                format!(
                    "{what}: an hour or a day would extrapolate a tail the run did not keep; \
                     find what changed (a noise process coming and going, a frequency or \
                     thermal change, a periodic job), or soak until it settles"
                ),
            )
        }
        None => {
            let over = us(model.threshold_ns);
            let held_out = model.held_out.iter().find(|h| !h.passed)?;
            let (fitted, other) = match held_out.fitted_half {
                Half::First => ("first", "second"),
                Half::Second => ("second", "first"),
            };
            (
                TailRefusal::HeldOutFailed,
                format!(
                    "the fit on the run's {fitted} half did not predict its {other}: {}; the \
                     tail changed during the run or the fit does not describe it: soak longer, \
                     and look for what changed",
                    held_out_miss(held_out, &over, other)
                ),
            )
        }
    };
    Some(TailEstimate::NotEstimable {
        reason,
        refusal: Some(refusal),
        model: Some(Box::new(model.clone())),
    })
}

/// What the `other` half showed against the fitted half's prediction.
fn held_out_miss(held_out: &rtsoak_record::HeldOutRecord, over: &str, other: &str) -> String {
    let fmt = |ns: f64| format!("{:.1} us", ns / 1000.0);
    let (low, high) = (held_out.max_low_ns, held_out.max_high_ns);
    if low.is_none() && high.is_none() && held_out.clusters_high == 0 {
        return format!(
            "the fitted half held only {} clusters over {over}, too few to fit",
            held_out.fit_clusters
        );
    }
    let count = (held_out.clusters_low..=held_out.clusters_high).contains(&held_out.clusters);
    if !count {
        return format!(
            "the {other} half held {} clusters over {over} where {} to {} were predicted",
            held_out.clusters, held_out.clusters_low, held_out.clusters_high
        );
    }
    let range = format!(
        "[{}, {}]",
        low.map_or(format!("<= {over}"), fmt),
        high.map_or("open".to_string(), fmt)
    );
    match held_out.max_ns {
        Some(max) => format!(
            "the {other} half's largest, {}, is outside the predicted range {range}",
            fmt(max as f64)
        ),
        None => format!("the {other} half held nothing over {over}, the prediction {range}"),
    }
}
