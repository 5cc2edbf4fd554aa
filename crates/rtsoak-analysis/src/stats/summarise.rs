//! The figures reported for one latency series, derived in one place from its histogram
//! (percentiles) and its exact counters (count, min, max, over threshold).

use hdrhistogram::Histogram;
use rtsoak_record::{SampleStats, Summary};

/// Summarise a series from its histogram and exact counters.
pub fn summarise(histogram: &Histogram<u64>, stats: &SampleStats) -> Summary {
    if stats.count == 0 {
        return Summary::default();
    }
    let q = |quantile: f64| histogram.value_at_quantile(quantile).min(stats.max_ns);
    Summary {
        count: stats.count,
        min_ns: stats.min_ns,
        p50_ns: q(0.50),
        p90_ns: q(0.90),
        p99_ns: q(0.99),
        p99_9_ns: q(0.999),
        p99_99_ns: q(0.9999),
        max_ns: stats.max_ns,
        over_threshold: stats.over_threshold,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::new_histogram;

    #[test]
    fn percentiles_come_from_the_histogram_and_extremes_are_exact() {
        let mut histogram = new_histogram();
        let mut stats = SampleStats::default();
        for value in 1..=10_000u64 {
            histogram.record(value * 10).unwrap();
            stats.add(value * 10, 99_000);
        }
        let summary = summarise(&histogram, &stats);
        assert_eq!(summary.count, 10_000);
        assert_eq!(summary.min_ns, 10);
        assert_eq!(summary.max_ns, 100_000);
        assert_eq!(summary.over_threshold, 100);
        assert!(
            (49_950..=50_050).contains(&summary.p50_ns),
            "{}",
            summary.p50_ns
        );
        assert!(
            (98_900..=99_100).contains(&summary.p99_ns),
            "{}",
            summary.p99_ns
        );
        assert!(
            summary.p99_99_ns <= summary.max_ns,
            "a percentile never exceeds the exact max"
        );
    }

    #[test]
    fn an_empty_series_summarises_to_zeros() {
        assert_eq!(
            summarise(&new_histogram(), &SampleStats::default()),
            Summary::default()
        );
    }
}
