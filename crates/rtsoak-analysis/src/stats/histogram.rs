//! One latency series as a worker records it: the current interval's HDR histogram, exact
//! counters for that interval, and the run's bounded list of over-threshold samples.
//!
//! A worker's interval histogram counts in 32 bits (half the memory of 64): no bucket can fill
//! in one interval under any plan rtsoak accepts (see [`new_interval_histogram`]). Everything
//! after the worker (coordinator, result, merges) counts in 64 bits.

use hdrhistogram::Histogram;
use rtsoak_record::{Outlier, SampleStats};

/// Highest value a histogram tracks exactly: 10 s. Larger samples are clamped to it (and still
/// counted exactly in [`SampleStats::max_ns`]).
pub const HIGHEST_NS: u64 = 10_000_000_000;
/// Three significant digits: a 100 us sample is resolved to within 0.1 %.
pub(crate) const SIGNIFICANT_DIGITS: u8 = 3;

/// A histogram of nanosecond samples, 1 ns to [`HIGHEST_NS`], never resizing.
pub fn new_histogram() -> Histogram<u64> {
    fixed(SIGNIFICANT_DIGITS)
}

/// A worker's histogram of one interval: the buckets of [`new_histogram`], 32-bit counts.
///
/// The most samples one series can take in one interval is the RT subscriber's count of noise
/// messages: 16 noise publishers, each sending every 50 us, for a 3600 s interval, about 1.2e9,
/// below `u32::MAX` (4.3e9); the plan's limits are checked against this in the profile tests.
/// Were a bucket ever to fill, it would stop counting while the exact counters go on, and the
/// coordinator, which compares the two for every frame, reports the difference.
pub fn new_interval_histogram() -> Histogram<u32> {
    fixed(SIGNIFICANT_DIGITS)
}

/// Two significant digits: an interval's histogram in the result resolves a 100 us sample to
/// within 1 %.
pub(crate) const INTERVAL_SIGNIFICANT_DIGITS: u8 = 2;

/// A histogram of one interval as the result keeps it: the run's span at
/// [`INTERVAL_SIGNIFICANT_DIGITS`]. The run-wide histograms, whose percentiles are the figures,
/// keep [`SIGNIFICANT_DIGITS`]; the interval list is the run's time line (a percentile per
/// interval, to see drift), for which 1 % is enough. On a busy 2-CPU machine one 10 s interval
/// of every series took 27 KB at three digits, so an eight-hour nightly's intervals alone would
/// have been tens of megabytes.
pub(crate) fn new_coarse_histogram() -> Histogram<u64> {
    fixed(INTERVAL_SIGNIFICANT_DIGITS)
}

/// A histogram of 1 ns to [`HIGHEST_NS`] at `digits` significant digits, never resizing: every
/// kind above is one of these.
fn fixed<T: hdrhistogram::Counter>(digits: u8) -> Histogram<T> {
    let mut histogram = Histogram::new_with_bounds(1, HIGHEST_NS, digits)
        .expect("constant histogram bounds are valid");
    histogram.auto(false);
    histogram
}

/// `histogram` at [`INTERVAL_SIGNIFICANT_DIGITS`]. Every bucket of the finer histogram lies
/// inside one bucket of the coarser (both split each power of two into a power-of-two number of
/// sub-buckets), so each count moves whole into the bucket that holds its values.
pub fn coarse_copy<T: hdrhistogram::Counter>(histogram: &Histogram<T>) -> Histogram<u64> {
    let mut coarse = new_coarse_histogram();
    for bucket in histogram.iter_recorded() {
        coarse.saturating_record_n(bucket.value_iterated_to(), bucket.count_at_value().as_u64());
    }
    coarse
}

/// Records one latency series. Construct before the measured loop; `record` never allocates.
pub struct Recorder {
    threshold_ns: u64,
    /// Histogram of the interval in progress.
    pub interval: Histogram<u32>,
    /// Exact counters of the interval in progress.
    pub interval_stats: SampleStats,
    /// Exact counters of the whole measured phase.
    pub total_stats: SampleStats,
    outliers: Vec<Outlier>,
    outliers_dropped: u64,
}

impl Recorder {
    /// A recorder whose outlier list holds at most `outliers_max` samples.
    pub fn new(threshold_ns: u64, outliers_max: usize) -> Self {
        let mut recorder = Recorder {
            threshold_ns,
            interval: new_interval_histogram(),
            interval_stats: SampleStats::default(),
            total_stats: SampleStats::default(),
            outliers: Vec::with_capacity(outliers_max),
            outliers_dropped: 0,
        };
        recorder.prefault();
        recorder
    }

    /// Write every page the recorder will touch, so that recording never page-faults.
    fn prefault(&mut self) {
        self.interval.saturating_record(HIGHEST_NS);
        self.interval.reset();
        let capacity = self.outliers.capacity();
        self.outliers.resize(
            capacity,
            Outlier {
                at_ns: 0,
                value_ns: 0,
            },
        );
        self.outliers.clear();
    }

    /// Record one sample taken `at_ns` after the start of the measured phase.
    #[inline]
    pub fn record(&mut self, at_ns: u64, value_ns: u64) {
        self.interval.saturating_record(value_ns.max(1));
        self.interval_stats.add(value_ns, self.threshold_ns);
        self.total_stats.add(value_ns, self.threshold_ns);
        if value_ns > self.threshold_ns {
            if self.outliers.len() < self.outliers.capacity() {
                self.outliers.push(Outlier { at_ns, value_ns });
            } else {
                self.outliers_dropped += 1;
            }
        }
    }

    /// Start a new interval (after the finished one has been shipped).
    pub fn reset_interval(&mut self) {
        self.interval.reset();
        self.interval_stats = SampleStats::default();
    }

    /// The bounded outlier list and how many did not fit.
    pub fn outliers(&self) -> (&[Outlier], u64) {
        (&self.outliers, self.outliers_dropped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An interval as a busy machine fills it: 20,000 samples spread from 2 us to 2 ms. (On a
    /// real one, a default comparison's intervals took 155 KB at three digits, 51 KB at two.)
    fn spread_interval() -> Histogram<u64> {
        let mut histogram = new_histogram();
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            // xorshift: a fixed, spread sequence.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let exponent = (state % 1_000) as f64 / 1_000.0 * 3.0;
            histogram
                .record((2_000.0 * 10f64.powf(exponent)) as u64)
                .unwrap();
        }
        histogram
    }

    #[test]
    fn a_coarse_copy_keeps_every_count_within_one_percent_of_its_value() {
        let fine = spread_interval();
        let coarse = coarse_copy(&fine);
        assert_eq!(coarse.len(), fine.len());
        assert!(coarse.max() >= fine.max() && coarse.min() <= fine.min());
        for quantile in [0.5, 0.9, 0.99, 0.999, 1.0] {
            let (f, c) = (
                fine.value_at_quantile(quantile),
                coarse.value_at_quantile(quantile),
            );
            assert!(c.abs_diff(f) * 100 <= f, "q{quantile}: {c} against {f}");
        }
        for bucket in fine.iter_recorded() {
            let value = bucket.value_iterated_to();
            assert!(coarse.count_at(value) >= bucket.count_at_value());
        }
    }

    #[test]
    fn a_coarse_interval_encodes_in_a_fraction_of_the_bytes() {
        let fine = spread_interval();
        let (fine_bytes, coarse_bytes) = (
            crate::stats::encode_histogram(&fine).len(),
            crate::stats::encode_histogram(&coarse_copy(&fine)).len(),
        );
        eprintln!("one spread interval: {fine_bytes} bytes at 3 digits, {coarse_bytes} at 2");
        assert!(
            coarse_bytes * 4 < fine_bytes * 3,
            "{coarse_bytes} against {fine_bytes}"
        );
    }

    #[test]
    fn exact_counters_keep_the_true_maximum_and_threshold_count() {
        let mut recorder = Recorder::new(100_000, 2);
        for (at, value) in [
            (1, 5_000),
            (2, 100_000),
            (3, 100_001),
            (4, 123_457),
            (5, 200_000),
        ] {
            recorder.record(at, value);
        }
        assert_eq!(recorder.total_stats.count, 5);
        assert_eq!(recorder.total_stats.min_ns, 5_000);
        assert_eq!(recorder.total_stats.max_ns, 200_000);
        assert_eq!(
            recorder.total_stats.over_threshold, 3,
            "100 us itself is not over"
        );
        let (kept, dropped) = recorder.outliers();
        assert_eq!(kept.len(), 2);
        assert_eq!(
            kept[0],
            Outlier {
                at_ns: 3,
                value_ns: 100_001
            }
        );
        assert_eq!(dropped, 1, "the third outlier did not fit and was counted");
    }

    #[test]
    fn samples_beyond_the_range_are_clamped_not_lost() {
        let mut recorder = Recorder::new(1, 0);
        recorder.record(0, HIGHEST_NS * 3);
        assert_eq!(recorder.interval.len(), 1);
        assert_eq!(recorder.total_stats.max_ns, HIGHEST_NS * 3);
    }

    #[test]
    fn resetting_an_interval_keeps_the_run_totals() {
        let mut recorder = Recorder::new(10, 4);
        recorder.record(0, 20);
        recorder.reset_interval();
        recorder.record(1, 5);
        assert_eq!(recorder.interval.len(), 1);
        assert_eq!(recorder.interval_stats.count, 1);
        assert_eq!(recorder.total_stats.count, 2);
        assert_eq!(recorder.total_stats.over_threshold, 1);
    }

    #[test]
    fn merging_stats_takes_min_max_and_sums() {
        let mut a = SampleStats::default();
        a.add(50, 10);
        let mut b = SampleStats::default();
        b.add(5, 10);
        b.add(500, 10);
        a.merge(&b);
        assert_eq!(
            a,
            SampleStats {
                count: 3,
                min_ns: 5,
                max_ns: 500,
                over_threshold: 2
            }
        );
        a.merge(&SampleStats::default());
        assert_eq!(a.count, 3);
    }
}
