//! From a fitted tail to the figures an RT engineer asks for: the level exceeded on average once
//! in an hour, a day or a year of operation (the "return level"), each with a 95 % interval.
//!
//! Owns: the return level and its profile-likelihood interval. The interval is the range of the
//! return level over every parameter set the data do not reject at 95 % (the log-likelihood
//! within chi^2_1(0.95) / 2 = 1.92 of its maximum), the cluster rate included: so a far
//! extrapolation gets the wide, lopsided interval it deserves, which a symmetric "estimate +-
//! 2 standard errors" does not give.
//!
//! Where the data cannot tell a bounded tail from an exponential one, the figure is never the
//! bounded one's: beside the generalized Pareto level an exponential tail's (shape 0, the
//! Gumbel domain most latency tails belong to) is worked out the same way, and the level and
//! the upper bound are the larger of the two. A fitted negative shape puts an end to the tail
//! just past the largest excess seen; on real runs a larger spike often came soon after (a
//! second cause, rarer than the run). Never chooses the threshold or formats.

use super::gpd::{self, Gpd};

/// Half the 95 % quantile of chi^2 with one degree of freedom.
pub(super) const CHI2_1_95_HALF: f64 = 1.920_729_4;
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
    /// How overdispersed their counts are ([`super::stationarity::dispersion_factor`], 1 for
    /// Poisson): the rate is as uncertain as from `clusters / dispersion` Poisson clusters.
    pub dispersion: f64,
}

impl TailFit<'_> {
    /// The clusters the rate's uncertainty is worth.
    pub(super) fn effective_clusters(&self) -> f64 {
        (self.clusters.max(1) as f64 / self.dispersion.max(1.0)).max(1.0)
    }
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

/// One parameter set the data do not reject.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Point {
    /// Scale.
    pub sigma: f64,
    /// Shape.
    pub xi: f64,
    /// How far its log-likelihood is above the cutoff: the room left for the cluster rate.
    pub slack: f64,
}

/// The profile-likelihood region: for each shape the data do not reject, the scales they do
/// not reject, as a set of points.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Region {
    /// The points, the maximum-likelihood one among them.
    pub points: Vec<Point>,
    /// The smallest shape not rejected.
    pub xi_low: f64,
    /// The largest (infinite: beyond [`XI_MAX`], so open above).
    pub xi_high: f64,
}

impl Region {
    /// The rate factors `exp(-spread)` and `exp(spread)` the cluster rate may move by at
    /// `point`, from `clusters` counted (effectively): its Poisson log-likelihood, in log rate,
    /// takes up the slack the shape and scale left.
    pub(super) fn rate_spread(point: &Point, clusters: f64) -> f64 {
        (2.0 * point.slack / clusters.max(1.0)).sqrt()
    }
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

    /// The region of (sigma, xi) the excesses do not reject at 95 %.
    pub(super) fn region(&self) -> Region {
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
                points.push(Point {
                    sigma: s,
                    xi,
                    slack: slack.max(0.0),
                });
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

impl TailFit<'_> {
    /// The region of an exponential tail's scale (shape fixed at 0) the excesses do not reject
    /// at 95 %: its log-likelihood, `-n ln sigma - sum(y) / sigma`, is maximal at the mean
    /// excess and falls by `n (ln r + 1 / r - 1)` at `sigma = r * mean`.
    fn exponential_region(&self) -> Vec<Point> {
        let n = self.excesses.len() as f64;
        let mean = self.excesses.iter().sum::<f64>() / n;
        let drop = |r: f64| n * (r.ln() + 1.0 / r - 1.0);
        // The drop rises monotonically away from r = 1 on either side: bisect each edge.
        let edge = |mut inside: f64, mut outside: f64| {
            for _ in 0..60 {
                let mid = (inside * outside).sqrt();
                if drop(mid) <= CHI2_1_95_HALF {
                    inside = mid;
                } else {
                    outside = mid;
                }
            }
            inside
        };
        let (low, high) = (edge(1.0, 1e-3), edge(1.0, 1e3));
        (0..=16)
            .map(|k| {
                let r = low * (high / low).powf(k as f64 / 16.0);
                Point {
                    sigma: r * mean,
                    xi: 0.0,
                    slack: (CHI2_1_95_HALF - drop(r)).max(0.0),
                }
            })
            .chain(std::iter::once(Point {
                sigma: mean,
                xi: 0.0,
                slack: CHI2_1_95_HALF,
            }))
            .collect()
    }

    /// The return level for `span` samples at the fit, and its range over `points` (each with
    /// the rate moved as far as its slack allows); `None` where fewer than one cluster over the
    /// threshold is expected in the span.
    fn level_over(&self, fit: (f64, f64), points: &[Point], span: f64) -> Option<Interval> {
        let expected = span * self.cluster_rate;
        if expected <= 1.0 {
            return None;
        }
        let estimate = level(self.threshold, fit.0, fit.1, expected);
        let (mut low, mut high) = (estimate, estimate);
        for point in points {
            let spread = Region::rate_spread(point, self.effective_clusters());
            let at = |factor: f64| level(self.threshold, point.sigma, point.xi, expected * factor);
            low = low.min(at((-spread).exp()));
            high = high.max(at(spread.exp()));
        }
        Some(Interval {
            estimate,
            low: low.max(self.threshold),
            high,
        })
    }
}

/// One span's figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct SpanLevel {
    /// The level with its 95 % interval: the generalized Pareto fit's, with the level and the
    /// upper bound raised to the exponential tail's where that is larger.
    pub level: Interval,
    /// The exponential tail's level.
    pub exponential: f64,
}

/// The fitted tail's figures: the shape's interval and each span's return level with its own.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Extrapolation {
    /// The shape with its 95 % profile-likelihood interval.
    pub xi: Interval,
    /// Per requested span (in samples), the return level with its interval.
    pub levels: Vec<Option<SpanLevel>>,
}

/// The return levels for spans of `spans_samples` samples each. A span in which fewer than one
/// cluster over the threshold is expected has no return level above the threshold: `None`.
pub(crate) fn extrapolate(tail: &TailFit, spans_samples: &[f64]) -> Extrapolation {
    let region = tail.region();
    let exponential = tail.exponential_region();
    let mean = tail.excesses.iter().sum::<f64>() / tail.excesses.len() as f64;
    let levels = spans_samples
        .iter()
        .map(|&span| {
            let gpd = tail.level_over((tail.fit.sigma, tail.fit.xi), &region.points, span)?;
            let exp = tail.level_over((mean, 0.0), &exponential, span)?;
            let high = if region.xi_high.is_infinite() {
                f64::INFINITY
            } else {
                gpd.high.max(exp.high)
            };
            Some(SpanLevel {
                level: Interval {
                    estimate: gpd.estimate.max(exp.estimate),
                    low: gpd.low,
                    high,
                },
                exponential: exp.estimate,
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
            dispersion: 1.0,
        };
        let result = extrapolate(&tail, &[1e6, 10.0]);
        let level = result.levels[0].unwrap().level;
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
