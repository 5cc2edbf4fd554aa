//! What a fit can use of a run: the samples over one level, with their sample numbers, over a
//! span in which *every* sample over that level was kept. A run's outlier list keeps the
//! largest samples once it is full and says over which level it is complete, so that span is
//! the whole run; a result written before kept the first samples, so its full list covers the
//! run only up to its last one, and the fit covers that prefix (the model's `span_ns` says so).
//! Several rounds of one series are laid end to end, each complete over the highest level any
//! of them is.
//!
//! Owns: turning outlier lists into that timeline. Never declusters or fits.

use super::TailInput;
use super::decluster::Exceedance;
use rtsoak_record::{TailEstimate, TailRefusal};

/// The samples over `complete_over_ns` in a span.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Timeline {
    /// Every sample over `complete_over_ns` in the span, in time order; `index` is its period
    /// number from the span's start.
    pub exceedances: Vec<Exceedance>,
    /// Samples the span held (the denominator of every rate).
    pub samples: u64,
    /// Periods the span covered (the clock the cluster times are on).
    pub periods: u64,
    /// The span, ns.
    pub span_ns: u64,
    /// The level over which every sample is in `exceedances`, ns.
    pub complete_over_ns: u64,
}

/// The timeline of one run's series.
pub(super) fn of_run(input: &TailInput) -> Result<Timeline, TailEstimate> {
    let samples_run = input.histogram.len();
    if samples_run == 0 || input.period_ns == 0 || input.measured_ns == 0 {
        return Err(TailEstimate::refused(
            TailRefusal::NoSamples,
            "no samples were measured".to_string(),
        ));
    }
    let (span_ns, samples, complete_over_ns) = match (
        input.outliers_complete_over_ns,
        input.outliers_dropped,
        input.outliers.last(),
    ) {
        (Some(level), _, _) => (
            input.measured_ns,
            samples_run,
            level.max(input.threshold_ns),
        ),
        (None, 0, _) | (None, _, None) => (input.measured_ns, samples_run, input.threshold_ns),
        // A list that kept the run's first samples: complete up to its last one.
        (None, _, Some(last)) => {
            let span = last.at_ns.clamp(1, input.measured_ns);
            let share = span as f64 / input.measured_ns as f64;
            let samples = ((samples_run as f64 * share).round() as u64).max(1);
            (span, samples, input.threshold_ns)
        }
    };
    let exceedances = input
        .outliers
        .iter()
        .filter(|o| o.value_ns > complete_over_ns)
        .map(|o| Exceedance {
            index: o.at_ns / input.period_ns,
            value: o.value_ns as f64,
        })
        .collect();
    Ok(Timeline {
        exceedances,
        samples,
        periods: span_ns.div_ceil(input.period_ns),
        span_ns,
        complete_over_ns,
    })
}

/// The timelines of several runs of one series laid end to end, in the order given, each cut
/// to the highest level any of them is complete over. (An episode that ran across the end of
/// one round into the next would join the two rounds' clusters; rounds are separated by
/// seconds of setup, so none does.)
pub(super) fn pooled(runs: &[TailInput]) -> Result<Timeline, TailEstimate> {
    let timelines = runs.iter().map(of_run).collect::<Result<Vec<_>, _>>()?;
    let complete_over_ns = timelines
        .iter()
        .map(|t| t.complete_over_ns)
        .max()
        .unwrap_or(0);
    let mut pooled = Timeline {
        exceedances: Vec::new(),
        samples: 0,
        periods: 0,
        span_ns: 0,
        complete_over_ns,
    };
    for timeline in timelines {
        let offset = pooled.periods;
        pooled.exceedances.extend(
            timeline
                .exceedances
                .iter()
                .filter(|e| e.value > complete_over_ns as f64)
                .map(|e| Exceedance {
                    index: e.index + offset,
                    value: e.value,
                }),
        );
        pooled.samples += timeline.samples;
        // The next round starts after the last period this one could hold a sample in.
        let last = timeline.exceedances.last().map_or(0, |e| e.index + 1);
        pooled.periods += timeline.periods.max(last);
        pooled.span_ns += timeline.span_ns;
    }
    Ok(pooled)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::new_histogram;
    use rtsoak_record::Outlier;

    fn input<'a>(
        outliers: &'a [Outlier],
        histogram: &'a hdrhistogram::Histogram<u64>,
        complete_over_ns: Option<u64>,
        dropped: u64,
    ) -> TailInput<'a> {
        TailInput {
            outliers,
            outliers_dropped: dropped,
            outliers_complete_over_ns: complete_over_ns,
            histogram,
            measured_ns: 1_000_000,
            period_ns: 1_000,
            threshold_ns: 100,
        }
    }

    fn at(at_ns: u64, value_ns: u64) -> Outlier {
        Outlier { at_ns, value_ns }
    }

    #[test]
    fn a_list_of_the_largest_covers_the_whole_run_over_its_level() {
        let mut histogram = new_histogram();
        histogram.record_n(50, 1_000).unwrap();
        let outliers = [at(5_000, 150), at(900_000, 400), at(990_000, 120)];
        let t = of_run(&input(&outliers, &histogram, Some(130), 7)).unwrap();
        assert_eq!((t.span_ns, t.samples, t.periods), (1_000_000, 1_000, 1_000));
        assert_eq!(t.complete_over_ns, 130);
        let kept: Vec<u64> = t.exceedances.iter().map(|e| e.index).collect();
        assert_eq!(
            kept,
            [5, 900],
            "120 is under the level the list is complete over"
        );
    }

    #[test]
    fn a_full_list_of_the_first_samples_covers_the_run_up_to_its_last() {
        let mut histogram = new_histogram();
        histogram.record_n(50, 1_000).unwrap();
        let outliers = [at(5_000, 150), at(250_000, 400)];
        let t = of_run(&input(&outliers, &histogram, None, 7)).unwrap();
        assert_eq!(
            (t.span_ns, t.samples, t.complete_over_ns),
            (250_000, 250, 100)
        );
    }

    #[test]
    fn rounds_are_laid_end_to_end_at_the_highest_complete_level() {
        let mut histogram = new_histogram();
        histogram.record_n(50, 1_000).unwrap();
        let first = [at(5_000, 150), at(7_000, 300)];
        let second = [at(2_000, 500), at(3_000, 180)];
        let runs = [
            input(&first, &histogram, Some(100), 0),
            input(&second, &histogram, Some(160), 3),
        ];
        let t = pooled(&runs).unwrap();
        assert_eq!(t.complete_over_ns, 160);
        let kept: Vec<(u64, f64)> = t.exceedances.iter().map(|e| (e.index, e.value)).collect();
        assert_eq!(kept, [(7, 300.0), (1_002, 500.0), (1_003, 180.0)]);
        assert_eq!((t.samples, t.periods, t.span_ns), (2_000, 2_000, 2_000_000));
    }
}
