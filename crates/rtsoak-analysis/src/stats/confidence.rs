//! How sure a figure is: the exact (Clopper–Pearson) interval of a rate of rare events, and
//! whether a percentile rests on enough samples beyond it to mean more than "the n-th largest
//! sample".
//!
//! Pure arithmetic over counts, for the exporters; never reads a histogram or formats text.

use statrs::function::beta::beta_reg;

/// Fewer samples than this beyond a percentile and the percentile is marked as resting on too
/// few: it is then one of the last few samples, not a property of the distribution.
pub(crate) const MIN_SAMPLES_BEYOND: u64 = 10;

/// A two-sided 95 % confidence interval of a proportion, as fractions in `0..=1`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateInterval {
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
}

/// The exact Clopper–Pearson 95 % interval of `events` in `samples`: the bounds are the 2.5 %
/// and 97.5 % quantiles of Beta(k, n − k + 1) and Beta(k + 1, n − k). Exact means it never
/// covers less than 95 %, however few the events, which is what over-threshold counts (often
/// 0, 1 or 2) need. `None` without samples (nothing to estimate).
pub fn clopper_pearson_95(events: u64, samples: u64) -> Option<RateInterval> {
    if samples == 0 || events > samples {
        return None;
    }
    let (k, n) = (events as f64, samples as f64);
    let low = if events == 0 {
        0.0
    } else {
        beta_quantile(k, n - k + 1.0, 0.025)
    };
    let high = if events == samples {
        1.0
    } else {
        beta_quantile(k + 1.0, n - k, 0.975)
    };
    Some(RateInterval { low, high })
}

/// The `p` quantile of Beta(a, b): the x with I_x(a, b) = p, found by bisection on the
/// regularized incomplete beta. statrs' own inverse (`inv_beta_reg`, AS 109) is off by about
/// 1e-3 relative when b is in the millions (one event in a nightly run), which shows in the
/// interval's third digit; bisection on `beta_reg`, which is accurate there, is not.
fn beta_quantile(a: f64, b: f64, p: f64) -> f64 {
    let (mut low, mut high) = (0.0_f64, 1.0_f64);
    // Each step halves the bracket; 1100 steps reach any f64 (bounds go down to ~1e-300), and
    // the loop stops as soon as the bracket is as narrow as f64 can tell.
    for _ in 0..1100 {
        let mid = low + (high - low) / 2.0;
        if mid <= low || mid >= high || high - low <= high * 1e-15 {
            break;
        }
        if beta_reg(a, b, mid) < p {
            low = mid;
        } else {
            high = mid;
        }
    }
    low + (high - low) / 2.0
}

/// Samples above the `quantile` (0..=1) of `count` samples: `count − ⌈count × quantile⌉`,
/// computed on parts per million so that p99.99 of 100,000 samples is exactly 10 beyond.
pub(crate) fn samples_beyond(count: u64, quantile: f64) -> u64 {
    const PARTS: u128 = 1_000_000;
    let above_parts = PARTS - (quantile.clamp(0.0, 1.0) * PARTS as f64).round() as u128;
    // count − ⌈count × q⌉ = ⌊count × (1 − q)⌋, since count is whole.
    (u128::from(count) * above_parts / PARTS) as u64
}

/// True when the `quantile` of `count` samples has fewer than [`MIN_SAMPLES_BEYOND`] samples
/// above it (at 20,000 samples p99.99 has two).
pub fn rests_on_few_samples(count: u64, quantile: f64) -> bool {
    samples_beyond(count, quantile) < MIN_SAMPLES_BEYOND
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Expected bounds computed independently with SciPy 1.17.1:
    /// `scipy.stats.beta.ppf(0.025, k, n - k + 1)` and `scipy.stats.beta.ppf(0.975, k + 1, n - k)`,
    /// matched within 1e-8 relative (the table shows three digits).
    fn assert_interval(events: u64, samples: u64, low: f64, high: f64) {
        let interval = clopper_pearson_95(events, samples).unwrap();
        let close = |actual: f64, expected: f64| (actual - expected).abs() <= expected * 1e-8;
        assert!(
            close(interval.low, low) && close(interval.high, high),
            "{events} in {samples}: {interval:?}, SciPy says [{low}, {high}]"
        );
    }

    #[test]
    fn no_event_in_two_thousand_samples_still_allows_up_to_one_in_543() {
        assert_interval(0, 2001, 0.0, 0.001_841_819_732_559_822_9);
    }

    #[test]
    fn a_few_events_match_scipy() {
        assert_interval(
            2,
            2001,
            0.000_121_067_045_559_998_86,
            0.003_605_828_010_740_237_4,
        );
        assert_interval(
            4,
            4002,
            0.000_272_395_196_018_755_3,
            0.002_557_122_579_802_991,
        );
        assert_interval(1, 10, 0.002_528_578_544_461_784_8, 0.445_016_117_028_195_4);
        assert_interval(5, 10, 0.187_086_028_447_398_55, 0.812_913_971_552_601_5);
    }

    #[test]
    fn one_event_in_a_nightly_run_of_seven_million_matches_scipy() {
        assert_interval(
            1,
            7_200_000,
            3.516_362_213_857_859e-9,
            7.738_391_141_139_383e-7,
        );
        assert_interval(0, 7_200_000, 0.0, 5.123_442_373_785_818e-7);
    }

    #[test]
    fn many_events_give_a_narrow_interval_around_the_rate() {
        assert_interval(
            30,
            1_000_000,
            2.024_096_266_855_41e-5,
            4.282_659_072_668_67e-5,
        );
        assert_interval(
            1000,
            1_000_000,
            0.000_939_001_207_950_096_5,
            0.001_063_918_107_315_228,
        );
    }

    #[test]
    fn every_sample_an_event_reaches_one() {
        assert_interval(10, 10, 0.691_502_892_181_239_2, 1.0);
        assert_interval(1, 1, 0.025, 1.0);
        assert_interval(0, 1, 0.0, 0.975);
    }

    #[test]
    fn no_samples_have_no_interval() {
        assert_eq!(clopper_pearson_95(0, 0), None);
        assert_eq!(clopper_pearson_95(3, 2), None);
    }

    #[test]
    fn samples_beyond_a_percentile_are_counted_exactly() {
        assert_eq!(samples_beyond(20_000, 0.9999), 2);
        assert_eq!(samples_beyond(100_000, 0.9999), 10);
        assert_eq!(samples_beyond(99_999, 0.9999), 9);
        assert_eq!(samples_beyond(4002, 0.999), 4);
        assert_eq!(samples_beyond(4002, 0.99), 40);
        assert_eq!(samples_beyond(7, 0.5), 3);
        assert_eq!(samples_beyond(0, 0.99), 0);
    }

    #[test]
    fn a_percentile_with_fewer_than_ten_samples_beyond_it_rests_on_few() {
        assert!(rests_on_few_samples(20_000, 0.9999));
        assert!(rests_on_few_samples(99_999, 0.9999));
        assert!(!rests_on_few_samples(100_000, 0.9999));
        assert!(rests_on_few_samples(9_999, 0.999));
        assert!(!rests_on_few_samples(10_000, 0.999));
        assert!(!rests_on_few_samples(2001, 0.99));
        assert!(rests_on_few_samples(19, 0.5));
    }
}
