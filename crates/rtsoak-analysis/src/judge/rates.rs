//! Is an over-threshold rate worse than before? Over-threshold samples are rare events, so their
//! counts are compared as Poisson rates with the exact conditional test: given `k_a` events in
//! `n_a` samples and `k_b` in `n_b`, under "same rate" the count `k_b` given the total
//! `k_a + k_b` is Binomial(k_a + k_b, n_b / (n_a + n_b)). The one-sided p-value is the chance
//! of at least `k_b` events in the new run if nothing changed; the two-sided p-value (do two
//! rates differ either way?) is twice the smaller of the two one-sided ones.
//!
//! Pure arithmetic; the binomial tail comes from `statrs`' regularized incomplete beta,
//! P(X ≥ k) = I_p(k, n − k + 1).

use statrs::function::beta::checked_beta_reg;

/// One-sided p-value that the rate `k_b / n_b` exceeds `k_a / n_a`. `1.0` when there is nothing
/// to test (no new events, or no samples on one side).
pub(crate) fn rate_increase_p_value(k_a: u64, n_a: u64, k_b: u64, n_b: u64) -> f64 {
    if k_b == 0 || n_a == 0 || n_b == 0 {
        return 1.0;
    }
    // P(X >= k_b) for X ~ Binomial(k_a + k_b, p) is I_p(k_b, k_a + 1): in floats, so counts
    // read from a file cannot overflow the sum.
    let p = n_b as f64 / (n_a as f64 + n_b as f64);
    checked_beta_reg(k_b as f64, k_a as f64 + 1.0, p).unwrap_or(1.0)
}

/// Two-sided p-value that the rates `k_a / n_a` and `k_b / n_b` differ, either way: twice the
/// smaller one-sided p-value of the same exact conditional test (the "central" two-sided test),
/// capped at 1. `1.0` when there is nothing to test.
pub fn rates_differ_p_value(k_a: u64, n_a: u64, k_b: u64, n_b: u64) -> f64 {
    let b_higher = rate_increase_p_value(k_a, n_a, k_b, n_b);
    let a_higher = rate_increase_p_value(k_b, n_b, k_a, n_a);
    (2.0 * b_higher.min(a_higher)).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Expected values computed independently with SciPy 1.17.1:
    /// `scipy.stats.binomtest(k_b, k_a + k_b, n_b / (n_a + n_b), alternative="greater").pvalue`.
    fn close(actual: f64, expected: f64) -> bool {
        (actual - expected).abs() <= expected * 1e-9
    }

    #[test]
    fn seven_new_events_against_none_in_equal_exposure_is_one_in_two_to_the_seventh() {
        // Every one of the 7 events landed in the new half: 0.5^7.
        let p = rate_increase_p_value(0, 1_000_000, 7, 1_000_000);
        assert!(close(p, 0.0078125), "{p}");
    }

    #[test]
    fn five_new_events_against_none_is_not_significant_at_one_percent() {
        let p = rate_increase_p_value(0, 1_000_000, 5, 1_000_000);
        assert!(close(p, 0.03125), "{p}");
        assert!(p > 0.01);
    }

    #[test]
    fn thirty_against_ten_in_equal_exposure_matches_scipy() {
        let p = rate_increase_p_value(10, 1_000_000, 30, 1_000_000);
        assert!(close(p, 0.001_110_716_886_614_682_2), "{p}");
    }

    #[test]
    fn exposure_matters_the_same_count_in_half_the_samples_is_a_doubled_rate() {
        let p = rate_increase_p_value(10, 2_000_000, 10, 1_000_000);
        assert!(close(p, 0.091_895_774_487_262_33), "{p}");
    }

    #[test]
    fn a_near_equal_count_is_a_coin_flip() {
        let p = rate_increase_p_value(3, 1_200_000, 4, 1_200_000);
        assert!(close(p, 0.5), "{p}");
    }

    #[test]
    fn a_large_increase_has_a_tiny_p_value() {
        let p = rate_increase_p_value(2, 2000, 60, 2000);
        assert!(close(p, 4.237_062_090_073_351_3e-16), "{p}");
        let p = rate_increase_p_value(100, 10_000_000, 150, 10_000_000);
        assert!(close(p, 0.000_941_650_467_538_080_1), "{p}");
    }

    /// Expected two-sided values computed independently with SciPy 1.17.1: with
    /// `t = k_a + k_b` and `p = n_b / (n_a + n_b)`,
    /// `min(1, 2 * min(binom.sf(k_b - 1, t, p), binom.cdf(k_b, t, p)))`.
    #[test]
    fn a_two_sided_difference_is_twice_the_smaller_tail_and_symmetric() {
        let p = rates_differ_p_value(10, 1_000_000, 30, 1_000_000);
        assert!(close(p, 0.002_221_433_773_229_364_3), "{p}");
        let back = rates_differ_p_value(30, 1_000_000, 10, 1_000_000);
        assert!(close(back, p), "either order gives the same p: {back}");
        let p = rates_differ_p_value(0, 1_000_000, 7, 1_000_000);
        assert!(
            close(p, 0.015_625),
            "7 against 0 is not significant two-sided: {p}"
        );
        let p = rates_differ_p_value(10, 2_000_000, 10, 1_000_000);
        assert!(close(p, 0.183_791_548_974_524_65), "{p}");
        let p = rates_differ_p_value(2, 2000, 60, 2000);
        assert!(close(p, 8.474_124_180_146_703e-16), "{p}");
        let p = rates_differ_p_value(5, 1000, 0, 1000);
        assert!(close(p, 0.0625), "{p}");
    }

    #[test]
    fn equal_or_empty_rates_never_differ() {
        assert_eq!(rates_differ_p_value(3, 1_200_000, 4, 1_200_000), 1.0);
        assert_eq!(rates_differ_p_value(0, 1000, 0, 1000), 1.0);
        assert_eq!(rates_differ_p_value(4, 0, 0, 1000), 1.0);
    }

    #[test]
    fn nothing_new_or_nothing_measured_is_never_significant() {
        assert_eq!(rate_increase_p_value(5, 1000, 0, 1000), 1.0);
        assert_eq!(rate_increase_p_value(0, 0, 3, 1000), 1.0);
        assert_eq!(rate_increase_p_value(0, 1000, 3, 0), 1.0);
    }
}
