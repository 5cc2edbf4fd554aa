//! Every estimate checks itself out of sample, as measurement-based probabilistic timing
//! analysis validates a fitted tail: the tail is fitted again on the run's first half alone
//! (same threshold, same clusters), and that fit predicts the second half: how many clusters
//! it holds, and how large its largest is; then the second half predicts the first. Each
//! prediction is a pair of intervals that hold 99 % together, of a predictive distribution that
//! carries the fit's own uncertainty as well as the chance in the other half itself: the
//! parametric bootstrap predictive distribution (Harris 1989), the mixture over refits of
//! resampled fitted halves of the distribution each gives the other half (Poisson counts,
//! negative binomial where the run's counts were overdispersed; a maximum with
//! `P(max <= x) = exp(-rate * span * S(x))`). A half outside them says the other did not
//! describe it: the tail changed, or the fit does not describe it, and a level extrapolated
//! from the whole run would not hold either.
//!
//! Owns: the prediction of a span's clusters and maximum from a fitted tail, and the check.
//! Never decides what a failed check means for the estimate (the module root refuses).

use statrs::function::beta::beta_reg;
use statrs::function::gamma::gamma_ur;

use super::decluster::{Clusters, Exceedance};
use super::gpd::{self, Gpd};
use super::stationarity::dispersion_factor;
use rtsoak_record::TailModel;

/// A half must hold at least this many clusters to be fitted on its own.
pub const MIN_FIT_CLUSTERS: usize = 8;
/// The check's prediction holds this much (both intervals together): a stationary run's held-out
/// half falls outside about 1 % of the time per direction, which the check adds to the
/// stationarity tests' false alarms.
pub const CHECK_LEVEL: f64 = 0.99;
/// Refits of resampled fitted halves the predictive distribution mixes.
const RESAMPLES: usize = 99;
/// The resamples' seed: the same result re-rendered gives the same prediction.
const SEED: u64 = 0x4e1d_0075;

/// What a fitted tail predicts for a span, at some level.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prediction {
    /// Clusters over the threshold: the interval.
    pub clusters_low: u64,
    /// ...
    pub clusters_high: u64,
    /// The span's largest sample: lower bound of its interval, or `None` when the span may
    /// well hold no cluster over the threshold at all (its largest is then below it).
    pub max_low: Option<f64>,
    /// Upper bound.
    pub max_high: f64,
}

impl Prediction {
    /// Whether a span with `clusters` clusters over the threshold and largest sample `max`
    /// (`None`: no cluster over it) is within the prediction.
    pub fn holds(&self, clusters: u64, max: Option<f64>) -> bool {
        let count = (self.clusters_low..=self.clusters_high).contains(&clusters);
        let largest = match (max, self.max_low) {
            (Some(max), low) => low.is_none_or(|low| max >= low) && max <= self.max_high,
            (None, low) => low.is_none(),
        };
        count && largest
    }
}

/// Which half a check fitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// The first half predicts the second.
    Forward,
    /// The second half predicts the first.
    Backward,
}

/// One half of the run checked against the other's prediction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HeldOut {
    /// Which half was fitted.
    pub direction: Direction,
    /// The sample number the halves split at.
    pub split: u64,
    /// Clusters in the fitted half.
    pub fit_clusters: u64,
    /// Clusters in the held-out half.
    pub rest_clusters: u64,
    /// The held-out half's largest cluster maximum, if it has a cluster.
    pub rest_max: Option<f64>,
    /// What the fitted half predicted for the other; `None` when it holds too few clusters to
    /// fit ([`MIN_FIT_CLUSTERS`]).
    pub prediction: Option<Prediction>,
}

impl HeldOut {
    /// Whether the held-out half is within the fitted half's prediction.
    pub fn passed(&self) -> bool {
        self.prediction
            .is_some_and(|p| p.holds(self.rest_clusters, self.rest_max))
    }
}

/// Each half of a span of `periods` predicts the other from its clusters over `threshold`:
/// the first the second, as a reader of a run's first minutes would, and the second the first,
/// so that a rare spike or a spell of them in either half alone shows (a two-fold
/// cross-validation of the fit).
pub fn check(clusters: &Clusters, threshold: f64, periods: u64) -> [HeldOut; 2] {
    let split = periods / 2;
    [Direction::Forward, Direction::Backward].map(|direction| {
        let fitted_half = |start: u64| (start < split) == (direction == Direction::Forward);
        let (mut fit, mut rest, mut starts) = (Vec::new(), Vec::new(), Vec::new());
        for (&max, &start) in clusters.maxima.iter().zip(&clusters.starts) {
            if fitted_half(start) {
                fit.push(max - threshold);
                starts.push(start.saturating_sub(if start < split { 0 } else { split }));
            } else {
                rest.push(max);
            }
        }
        let (fit_periods, rest_periods) = match direction {
            Direction::Forward => (split, periods - split),
            Direction::Backward => (periods - split, split),
        };
        let dispersion = dispersion_factor(&starts, fit_periods);
        let prediction = (fit.len() >= MIN_FIT_CLUSTERS)
            .then(|| gpd::fit(&fit))
            .flatten()
            .map(|(gpd, _)| {
                let fitted = Fitted {
                    fit: gpd,
                    clusters: fit.len(),
                    mean_excess: fit.iter().sum::<f64>() / fit.len() as f64,
                    dispersion,
                    threshold,
                    rate: fit.len() as f64 / fit_periods.max(1) as f64,
                };
                predict(&fitted, rest_periods as f64, CHECK_LEVEL)
            });
        HeldOut {
            direction,
            split,
            fit_clusters: fit.len() as u64,
            rest_clusters: rest.len() as u64,
            rest_max: rest.iter().copied().reduce(f64::max),
            prediction,
        }
    })
}

/// A tail fitted on some span, as the prediction needs it.
#[derive(Debug, Clone, Copy)]
pub struct Fitted {
    /// The fit of the cluster maxima's excesses.
    pub fit: Gpd,
    /// Clusters it was fitted on.
    pub clusters: usize,
    /// The mean excess (the exponential tail's scale).
    pub mean_excess: f64,
    /// How overdispersed the clusters' counts were (1: Poisson).
    pub dispersion: f64,
    /// The threshold, in the excesses' unit.
    pub threshold: f64,
    /// Clusters per period.
    pub rate: f64,
}

/// The prediction, at `level` (0.95: both hold together with 95 %), of the clusters over the
/// threshold in `span` periods and of the span's largest sample: central intervals of the
/// bootstrap predictive distribution, each at half the miss (Bonferroni: 97.5 % each for 95 %
/// together). Each resample draws a number of clusters (the rate's own uncertainty) of excesses
/// from the fit and refits them; the refits' shapes are moved by twice the bootstrap's bias
/// (`2 xi - mean(xi*)`, the bootstrap bias correction), since a shape fitted to a hundred
/// maxima comes out low, and a predictive distribution centred on it was too narrow above
/// for heavy tails.
pub fn predict(fitted: &Fitted, span: f64, level: f64) -> Prediction {
    let tail_probability = (1.0 - level) / 4.0;
    let mut rng = fastrand::Rng::with_seed(SEED);
    let mut gpd = vec![Component {
        fit: fitted.fit,
        expected: fitted.rate * span,
    }];
    let exponential_fit = Gpd {
        sigma: fitted.mean_excess,
        xi: 0.0,
    };
    let mut exponential = vec![Component {
        fit: exponential_fit,
        expected: fitted.rate * span,
    }];
    for _ in 0..RESAMPLES {
        let n = count_draw(fitted.clusters as f64, fitted.dispersion, &mut rng);
        let expected = n as f64 / fitted.clusters as f64 * fitted.rate * span;
        let resample = gpd::sample(&fitted.fit, n as usize, &mut rng);
        if let Some((refit, _)) = gpd::fit(&resample) {
            gpd.push(Component {
                fit: refit,
                expected,
            });
        }
        let resample = gpd::sample(&exponential_fit, n as usize, &mut rng);
        let sigma = resample.iter().sum::<f64>() / resample.len() as f64;
        exponential.push(Component {
            fit: Gpd { sigma, xi: 0.0 },
            expected,
        });
    }
    let refits = &mut gpd[1..];
    if !refits.is_empty() {
        let bias =
            refits.iter().map(|c| c.fit.xi).sum::<f64>() / refits.len() as f64 - fitted.fit.xi;
        for component in refits {
            component.fit.xi = (component.fit.xi - 2.0 * bias).max(gpd::XI_MIN);
        }
    }
    let (low, high) = (tail_probability, 1.0 - tail_probability);
    // As the return levels: the exponential tail's prediction widens a bounded-looking one.
    let max_low = max_quantile(&gpd, fitted.threshold, low)
        .zip(max_quantile(&exponential, fitted.threshold, low))
        .map(|(a, b)| a.min(b));
    let max_high = [&gpd, &exponential]
        .map(|mixture| max_quantile(mixture, fitted.threshold, high).unwrap_or(fitted.threshold));
    Prediction {
        clusters_low: count_quantile(&gpd, fitted.dispersion, low),
        clusters_high: count_quantile(&gpd, fitted.dispersion, high),
        max_low,
        max_high: max_high[0].max(max_high[1]),
    }
}

/// One fit of the predictive mixture and the clusters it expects in the span.
#[derive(Debug, Clone, Copy)]
struct Component {
    fit: Gpd,
    expected: f64,
}

/// The `p` quantile of the mixture's clusters in the span: Poisson each, or where the run's
/// counts were overdispersed, negative binomial with the variance `dispersion` times the mean
/// (P(N <= k) = I_{1/dispersion}(mean / (dispersion - 1), k + 1)).
fn count_quantile(mixture: &[Component], dispersion: f64, p: f64) -> u64 {
    let one = |k: u64, expected: f64| {
        if expected <= 0.0 {
            1.0
        } else if dispersion > 1.0 + 1e-9 {
            beta_reg(
                expected / (dispersion - 1.0),
                k as f64 + 1.0,
                1.0 / dispersion,
            )
        } else {
            gamma_ur(k as f64 + 1.0, expected)
        }
    };
    let cdf =
        |k: u64| mixture.iter().map(|c| one(k, c.expected)).sum::<f64>() / mixture.len() as f64;
    let mut k = 0;
    while cdf(k) < p {
        k += 1;
    }
    k
}

/// The `p` quantile of the mixture's largest sample in the span, each component's with
/// P(max <= x) = exp(-expected * S(x - threshold)); `None` when the span holds no cluster at
/// all with probability `p` or more (the quantile is below the threshold).
fn max_quantile(mixture: &[Component], threshold: f64, p: f64) -> Option<f64> {
    let cdf = |x: f64| {
        mixture
            .iter()
            .map(|c| (-c.expected * (1.0 - c.fit.cdf(x - threshold))).exp())
            .sum::<f64>()
            / mixture.len() as f64
    };
    if cdf(threshold) >= p {
        return None;
    }
    // The mixture's quantile lies between its components' quantiles.
    let (mut low, mut high) = mixture
        .iter()
        .filter_map(|c| component_max_quantile(c, threshold, p))
        .fold((f64::INFINITY, threshold), |(l, h), q| (l.min(q), h.max(q)));
    low = low.min(high);
    for _ in 0..100 {
        let mid = 0.5 * (low + high);
        if cdf(mid) < p {
            low = mid;
        } else {
            high = mid;
        }
    }
    Some(high)
}

/// What a recorded model predicts, at `level`, for a span of `span_ns` that follows the one it
/// was fitted on (its clusters at its rate per period, its maxima refitted): the check a reader
/// makes of a printed estimate against what came after. `None` where the maxima do not refit.
pub fn predict_model(model: &TailModel, span_ns: u64, level: f64) -> Option<Prediction> {
    let threshold = model.threshold_ns as f64;
    let excesses: Vec<f64> = model
        .cluster_maxima_ns
        .iter()
        .map(|&v| v as f64 - threshold)
        .collect();
    let (fit, _) = gpd::fit(&excesses)?;
    let periods = model.span_ns as f64 / model.period_ns.max(1) as f64;
    let fitted = Fitted {
        fit,
        clusters: excesses.len(),
        mean_excess: excesses.iter().sum::<f64>() / excesses.len() as f64,
        dispersion: model.dispersion,
        threshold,
        rate: excesses.len() as f64 / periods.max(1.0),
    };
    Some(predict(
        &fitted,
        span_ns as f64 / model.period_ns.max(1) as f64,
        level,
    ))
}

/// What the span after a recorded model showed, as [`predict_model`] predicts it: of the samples
/// at `later` (in time order, any values), how many clusters those over the model's threshold
/// form and the largest of them. The clusters are cut as the model cut its own: a gap of its
/// run length or more separates two. Declustering the later span afresh would count with that
/// span's own extremal index, another unit than the prediction's, so a count could miss or
/// hold by the change of unit alone.
pub fn observe(model: &TailModel, later: &[Exceedance]) -> (u64, Option<f64>) {
    let over: Vec<&Exceedance> = later
        .iter()
        .filter(|e| e.value > model.threshold_ns as f64)
        .collect();
    let indices: Vec<u64> = over.iter().map(|e| e.index).collect();
    let max = over.iter().map(|e| e.value).reduce(f64::max);
    (clusters_at(&indices, model.run_length_samples), max)
}

/// How many clusters exceedances at sample numbers `indices` (in time order) form where every
/// gap of `run_length` samples or more separates two.
fn clusters_at(indices: &[u64], run_length: u64) -> u64 {
    let breaks = indices
        .windows(2)
        .filter(|w| w[1].saturating_sub(w[0]) >= run_length)
        .count();
    if indices.is_empty() {
        0
    } else {
        breaks as u64 + 1
    }
}

/// The `p` quantile of one component's largest sample; `None` below the threshold.
fn component_max_quantile(c: &Component, threshold: f64, p: f64) -> Option<f64> {
    if c.expected <= 0.0 || p <= (-c.expected).exp() {
        return None;
    }
    let survival = -p.ln() / c.expected;
    Some(threshold + c.fit.quantile(1.0 - survival))
}

/// A count with mean `mean` and variance `dispersion` times it: Poisson where `dispersion` is
/// 1, a normal approximation above a mean of 50 or where it is not (close enough for a count
/// the bootstrap only needs the spread of), never under 2 (a fit needs two).
fn count_draw(mean: f64, dispersion: f64, rng: &mut fastrand::Rng) -> u64 {
    if mean > 50.0 || dispersion > 1.0 + 1e-9 {
        // Box-Muller.
        let z = (-2.0 * (1.0 - rng.f64()).ln()).sqrt() * (std::f64::consts::TAU * rng.f64()).cos();
        return (mean + z * (dispersion * mean).sqrt()).round().max(2.0) as u64;
    }
    // Knuth's product of uniforms.
    let limit = (-mean).exp();
    let (mut k, mut product) = (0u64, rng.f64());
    while product > limit {
        k += 1;
        product *= rng.f64();
    }
    k.max(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Clusters of `n` exponential excesses (scale 10) over 100, one every `gap` samples,
    /// the second half's scaled by `second_scale`.
    fn clusters(n: usize, gap: u64, second_scale: f64, seed: u64) -> Clusters {
        let mut rng = fastrand::Rng::with_seed(seed);
        let maxima = (0..n)
            .map(|i| {
                let scale = if i >= n / 2 { second_scale } else { 1.0 };
                100.0 - 10.0 * scale * (1.0 - rng.f64()).ln()
            })
            .collect();
        Clusters {
            maxima,
            starts: (0..n as u64).map(|i| i * gap + gap / 2).collect(),
            extremal_index: 1.0,
            run_length_samples: 4,
        }
    }

    #[test]
    fn later_clusters_are_cut_at_the_models_run_length() {
        // Bursts 3 samples apart inside, 50 apart between: a run length of 10 sees 3 clusters,
        // one of 60 sees them all as one, one of 2 splits every sample.
        let indices = [100, 103, 106, 156, 159, 209];
        assert_eq!(clusters_at(&indices, 10), 3);
        assert_eq!(clusters_at(&indices, 60), 1);
        assert_eq!(clusters_at(&indices, 2), 6);
        assert_eq!(clusters_at(&[], 10), 0);
        assert_eq!(clusters_at(&[7], 10), 1);
    }

    #[test]
    fn a_stationary_run_passes_its_check() {
        let mut passed = 0;
        for seed in 0..20 {
            let [forward, backward] = check(&clusters(200, 1000, 1.0, seed), 100.0, 200_000);
            assert_eq!((forward.fit_clusters, backward.fit_clusters), (100, 100));
            passed += u32::from(forward.passed() && backward.passed());
        }
        assert!(passed >= 19, "{passed} of 20 passed");
    }

    #[test]
    fn a_second_half_with_larger_spikes_fails_it() {
        let mut failed = 0;
        for seed in 0..20 {
            let [forward, backward] = check(&clusters(200, 1000, 4.0, seed), 100.0, 200_000);
            failed += u32::from(!(forward.passed() && backward.passed()));
        }
        assert!(failed >= 18, "{failed} of 20 failed");
    }

    #[test]
    fn too_few_clusters_in_the_first_half_cannot_pass() {
        let [forward, _] = check(&clusters(10, 1000, 1.0, 1), 100.0, 10_000);
        assert_eq!(forward.prediction, None);
        assert!(!forward.passed());
    }
}
