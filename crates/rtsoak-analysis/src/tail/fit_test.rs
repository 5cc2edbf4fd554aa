//! Does the generalized Pareto distribution describe these excesses? The Anderson-Darling
//! statistic weighs the far tail, which is where the extrapolation lives. Its null distribution
//! depends on the fitted shape, so the p-value comes from a parametric bootstrap: samples of the
//! same size drawn from the fit, each refitted and tested the same way. A fixed seed makes the
//! p-value the same on every re-rendering.
//!
//! Owns: the statistic and its p-value. Never decides what a p-value means for the estimate.

use super::gpd::{self, Gpd};

/// Resamples of the bootstrap: p-values resolve to 1 / (RESAMPLES + 1) = 0.01.
pub(crate) const RESAMPLES: usize = 99;

/// The test's outcome.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct FitTest {
    /// Anderson-Darling A^2 of the excesses against the fit.
    pub statistic: f64,
    /// Share of bootstrap resamples at least as far from their own fit (with the sample itself
    /// counted, so never 0).
    pub p_value: f64,
}

/// How likely the widest gap between neighbouring excesses is under `fit`: the excesses mapped
/// through the fitted distribution function are uniform, and `n` uniforms leave a gap of `d`
/// with probability at most `n (1 - d)^(n - 1)`. A second, separate mode (a rare long lock hold
/// beside the usual spikes) leaves a gap no single-mode tail explains, which the
/// Anderson-Darling statistic, dominated by the many samples of the first mode, can miss.
pub(crate) fn widest_gap_p(excesses: &[f64], fit: &Gpd) -> f64 {
    let mut uniforms: Vec<f64> = excesses.iter().map(|&y| fit.cdf(y)).collect();
    uniforms.sort_unstable_by(f64::total_cmp);
    let n = uniforms.len() as f64;
    let widest = uniforms.windows(2).map(|w| w[1] - w[0]).fold(0.0, f64::max);
    (n * (1.0 - widest).powf(n - 1.0)).min(1.0)
}

/// A^2 of `excesses` against `fit`.
pub(super) fn anderson_darling(excesses: &[f64], fit: &Gpd) -> f64 {
    let mut sorted = excesses.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    let n = sorted.len();
    let clamp = |p: f64| p.clamp(1e-300, 1.0 - 1e-16);
    let cdf: Vec<f64> = sorted.iter().map(|&y| clamp(fit.cdf(y))).collect();
    let mut sum = 0.0;
    for i in 0..n {
        let weight = (2 * i + 1) as f64;
        sum += weight * (cdf[i].ln() + (1.0 - cdf[n - 1 - i]).ln());
    }
    -(n as f64) - sum / n as f64
}

/// A^2 and its bootstrap p-value, reproducible from `seed`.
pub(super) fn test(excesses: &[f64], fit: &Gpd, seed: u64) -> FitTest {
    let statistic = anderson_darling(excesses, fit);
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut at_least = 1;
    for _ in 0..RESAMPLES {
        let resample = gpd::sample(fit, excesses.len(), &mut rng);
        let Some((refit, _)) = gpd::fit(&resample) else {
            continue;
        };
        if anderson_darling(&resample, &refit) >= statistic {
            at_least += 1;
        }
    }
    FitTest {
        statistic,
        p_value: at_least as f64 / (RESAMPLES + 1) as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_from_the_fit_pass() {
        let truth = Gpd {
            sigma: 2.0,
            xi: 0.1,
        };
        let y = gpd::sample(&truth, 150, &mut fastrand::Rng::with_seed(11));
        let (fit, _) = gpd::fit(&y).unwrap();
        assert!(test(&y, &fit, 1).p_value > 0.05);
    }

    #[test]
    fn a_far_second_mode_leaves_an_implausible_gap() {
        let mut rng = fastrand::Rng::with_seed(13);
        let mut y: Vec<f64> = (0..400).map(|_| -rng.f64().ln()).collect();
        let (fit, _) = gpd::fit(&y).unwrap();
        assert!(widest_gap_p(&y, &fit) > 0.01);
        y.extend((0..25).map(|_| 200.0 + rng.f64()));
        let (fit, _) = gpd::fit(&y).unwrap();
        assert!(widest_gap_p(&y, &fit) < 1e-3, "{fit:?}");
    }

    #[test]
    fn two_separate_modes_fail() {
        let mut rng = fastrand::Rng::with_seed(12);
        let mut y: Vec<f64> = (0..150).map(|_| -rng.f64().ln()).collect();
        y.extend((0..50).map(|_| 8.0 + 0.5 * rng.f64()));
        let (fit, _) = gpd::fit(&y).unwrap();
        let outcome = test(&y, &fit, 1);
        assert!(outcome.p_value <= 0.01, "{fit:?} {outcome:?}");
    }
}
