//! From a fitted tail to the figures an RT engineer asks for: the level exceeded on average once
//! in an hour, a day or a year of operation (the "return level"), each with a 95 % interval.
//!
//! Owns: the return level and its profile-likelihood interval. The interval is the range of the
//! return level over every parameter set the data do not reject at 95 % (the log-likelihood
//! within chi^2_1(0.95) / 2 = 1.92 of its maximum), the cluster rate included: so a far
//! extrapolation gets the wide, lopsided interval it deserves, which a symmetric "estimate +-
//! 2 standard errors" does not give. Never chooses the threshold or formats.

use super::gpd::{self, Gpd};

/// Half the 95 % quantile of chi^2 with one degree of freedom.
const CHI2_1_95_HALF: f64 = 1.920_729_4;
/// Shapes beyond this are not followed: the interval is then open above.
pub(crate) const XI_MAX: f64 = 3.0;

/// The fitted tail in the form the extrapolation needs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TailFit<'a> {
    /// Cluster maxima minus the threshold.
    pub excesses: &'a [f64],
    /// The maximum-likelihood fit and its log-likelihood.
    pub fit: Gpd,
    /// Log-likelihood at `fit`.
    pub log_likelihood: f64,
    /// The threshold, in the excesses' unit.
    pub threshold: f64,
    /// Clusters over the threshold per sample.
    pub cluster_rate: f64,
    /// Clusters the rate was counted from.
    pub clusters: u64,
}

/// A figure with its 95 % interval (`high` may be infinite: open above).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Interval {
    /// Point estimate.
    pub estimate: f64,
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
}

/// The level exceeded by one cluster on average in `samples` samples, for given parameters.
fn level(threshold: f64, sigma: f64, xi: f64, clusters_in_span: f64) -> f64 {
    let log_count = clusters_in_span.ln();
    if xi.abs() < 1e-7 {
        threshold + sigma * log_count
    } else {
        threshold + sigma / xi * ((xi * log_count).exp() - 1.0)
    }
}

/// The profile-likelihood region: for each shape the data do not reject, the scales they do
/// not reject, as a set of (sigma, xi, slack) points where slack is how far the log-likelihood
/// is above the cutoff.
struct Region {
    points: Vec<(f64, f64, f64)>,
    xi_low: f64,
    xi_high: f64,
}

impl TailFit<'_> {
    fn log_likelihood_at(&self, sigma: f64, xi: f64) -> f64 {
        gpd::log_likelihood(self.excesses, sigma, xi)
    }

    /// The smallest scale with a finite likelihood for `xi`.
    fn sigma_floor(&self, xi: f64) -> f64 {
        let max = self.excesses.iter().copied().fold(0.0, f64::max);
        if xi < 0.0 {
            -xi * max * (1.0 + 1e-9)
        } else {
            self.fit.sigma * 1e-4
        }
    }

    /// The best scale for `xi` and its log-likelihood.
    fn best_sigma(&self, xi: f64) -> (f64, f64) {
        let lo = self.sigma_floor(xi).max(self.fit.sigma * 1e-3).ln();
        let hi = (self.fit.sigma * 1e3).ln();
        let s = gpd::golden_max(|s| self.log_likelihood_at(s.exp(), xi), lo, hi, 1e-5).exp();
        (s, self.log_likelihood_at(s, xi))
    }

    /// Where the log-likelihood for `xi` crosses `cutoff` between `inside` and `outside`.
    fn crossing(&self, xi: f64, cutoff: f64, inside: f64, outside: f64) -> f64 {
        let (mut a, mut b) = (inside.ln(), outside.ln());
        for _ in 0..20 {
            let mid = 0.5 * (a + b);
            if self.log_likelihood_at(mid.exp(), xi) >= cutoff {
                a = mid;
            } else {
                b = mid;
            }
        }
        a.exp()
    }

    /// The scales not rejected for `xi`, or `None` if the shape itself is rejected.
    fn scales(&self, xi: f64, cutoff: f64) -> Option<(f64, f64)> {
        let (best, best_ll) = self.best_sigma(xi);
        if best_ll < cutoff {
            return None;
        }
        let floor = self.sigma_floor(xi);
        let low = if self.log_likelihood_at(floor, xi) >= cutoff {
            floor
        } else {
            self.crossing(xi, cutoff, best, floor)
        };
        let mut outside = best * 2.0;
        while self.log_likelihood_at(outside, xi) >= cutoff && outside < best * 1e6 {
            outside *= 2.0;
        }
        Some((low, self.crossing(xi, cutoff, best, outside)))
    }

    fn region(&self) -> Region {
        let cutoff = self.log_likelihood - CHI2_1_95_HALF;
        let n = self.excesses.len() as f64;
        // A sixth of the shape's standard error, (1 + xi) / sqrt(n), then halving at the edges,
        // resolves the region to well under the interval's own uncertainty.
        let step = ((1.0 + self.fit.xi).max(0.2) / n.sqrt() / 6.0).max(0.002);
        let mut points = Vec::new();
        let mut push = |xi: f64, (low, high): (f64, f64)| {
            for k in 0..=8 {
                let s = low * (high / low).powf(k as f64 / 8.0);
                let slack = self.log_likelihood_at(s, xi) - cutoff;
                points.push((s, xi, slack.max(0.0)));
            }
        };
        let mut xi_bounds = [self.fit.xi, self.fit.xi];
        for (direction, bound) in [(-1.0, 0), (1.0, 1)] {
            let mut xi = self.fit.xi;
            loop {
                let next = xi + direction * step;
                if !(gpd::XI_MIN..=XI_MAX).contains(&next) {
                    xi_bounds[bound] = if direction < 0.0 {
                        gpd::XI_MIN
                    } else {
                        f64::INFINITY
                    };
                    break;
                }
                match self.scales(next, cutoff) {
                    Some(scales) => {
                        push(next, scales);
                        xi = next;
                    }
                    None => {
                        // Halve towards the edge, so the extremes sit on it.
                        let (mut inside, mut outside) = (xi, next);
                        for _ in 0..5 {
                            let mid = 0.5 * (inside + outside);
                            match self.scales(mid, cutoff) {
                                Some(scales) => {
                                    push(mid, scales);
                                    inside = mid;
                                }
                                None => outside = mid,
                            }
                        }
                        xi_bounds[bound] = inside;
                        break;
                    }
                }
            }
        }
        if let Some(scales) = self.scales(self.fit.xi, cutoff) {
            push(self.fit.xi, scales);
        }
        Region {
            points,
            xi_low: xi_bounds[0],
            xi_high: xi_bounds[1],
        }
    }
}

/// The fitted tail's figures: the shape's interval and each span's return level with its own.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Extrapolation {
    /// The shape with its 95 % profile-likelihood interval.
    pub xi: Interval,
    /// Per requested span (in samples), the return level with its interval.
    pub levels: Vec<Option<Interval>>,
}

/// The return levels for spans of `spans_samples` samples each. A span in which fewer than one
/// cluster over the threshold is expected has no return level above the threshold: `None`.
pub(crate) fn extrapolate(tail: &TailFit, spans_samples: &[f64]) -> Extrapolation {
    let region = tail.region();
    let levels = spans_samples
        .iter()
        .map(|&span| {
            let expected = span * tail.cluster_rate;
            if expected <= 1.0 {
                return None;
            }
            let estimate = level(tail.threshold, tail.fit.sigma, tail.fit.xi, expected);
            let (mut low, mut high) = (estimate, estimate);
            // The rate may move with the slack its own likelihood (Poisson, in log rate) has left:
            // ln(rate) within sqrt(2 slack / clusters) of the estimate.
            let clusters = tail.clusters.max(1) as f64;
            for &(sigma, xi, slack) in &region.points {
                let spread = (2.0 * slack / clusters).sqrt();
                low = low.min(level(tail.threshold, sigma, xi, expected * (-spread).exp()));
                high = high.max(level(tail.threshold, sigma, xi, expected * spread.exp()));
            }
            if region.xi_high.is_infinite() {
                high = f64::INFINITY;
            }
            Some(Interval {
                estimate,
                low: low.max(tail.threshold),
                high,
            })
        })
        .collect();
    Extrapolation {
        xi: Interval {
            estimate: tail.fit.xi,
            low: region.xi_low,
            high: region.xi_high,
        },
        levels,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exponential_tail_extrapolates_logarithmically() {
        let truth = Gpd {
            sigma: 1.0,
            xi: 0.0,
        };
        let excesses = gpd::sample(&truth, 400, &mut fastrand::Rng::with_seed(21));
        let (fit, log_likelihood) = gpd::fit(&excesses).unwrap();
        let tail = TailFit {
            excesses: &excesses,
            fit,
            log_likelihood,
            threshold: 10.0,
            cluster_rate: 0.01,
            clusters: 400,
        };
        let result = extrapolate(&tail, &[1e6, 10.0]);
        let level = result.levels[0].unwrap();
        // True level: 10 + ln(1e6 * 0.01) = 19.2.
        assert!(level.low < 19.2 && 19.2 < level.high, "{level:?}");
        assert!(level.low < level.estimate && level.estimate < level.high);
        assert_eq!(
            result.levels[1], None,
            "0.1 clusters expected: below the threshold"
        );
        assert!(
            result.xi.low < 0.0 && 0.0 < result.xi.high,
            "{:?}",
            result.xi
        );
    }
}
