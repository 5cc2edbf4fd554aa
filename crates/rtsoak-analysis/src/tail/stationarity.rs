//! Is the tail the same from the start of the run to its end? A return level extrapolates the
//! run's episodes to an hour or a day on the assumption that they keep coming at the same rate
//! with the same sizes, independently of each other. Three tests on the cluster maxima and
//! their times, each a standard one, say when the run itself contradicts that:
//!
//! - **a trend in how often**: Laplace's test for a trend in the rate of a point process (Cox
//!   and Lewis, *The Statistical Analysis of Series of Events*, 1966, section 3.3): under a
//!   constant rate the cluster times are uniform over the run, so their mean is normal around
//!   the run's middle with variance `span^2 / (12 n)`. A rate that rose or fell during the run,
//!   or stepped at a regime change, moves the mean.
//! - **a trend in how large**: Mann and Kendall's test (Kendall's tau of the maxima against
//!   their order in time, normal approximation with the tie correction): sizes that grew or
//!   shrank, gradually or in a step.
//! - **clumping**: the index of dispersion of the clusters counted per stretch of the run
//!   (Cox and Lewis, section 6.2): independent clusters give Poisson counts, whose variance is
//!   their mean, and `sum (n_i - mean)^2 / mean` is chi-squared with `k - 1` degrees of freedom.
//!   Clusters that come in spells (a noise process that lives a few seconds, a periodic storm)
//!   make it too large: the clusters are not independent, and the rate and its interval mean
//!   less than they say.
//!
//! Owns: the tests' statistics and p-values. Never decides what a failed test means for the
//! estimate (the module root does: it refuses).

use statrs::function::erf::erfc;
use statrs::function::gamma::gamma_ur;

/// Each test rejects below this p-value. Three tests at 1 % give at most about 3 % false
/// alarms on a stationary tail (fewer: two of them look at related things).
pub(super) const REJECT_BELOW: f64 = 0.01;
/// The dispersion test wants about this many clusters per stretch (a chi-squared
/// approximation holds with expected counts of five or more).
const CLUSTERS_PER_STRETCH: usize = 5;
/// At most this many stretches: more add degrees of freedom, not power against spells.
const MAX_STRETCHES: usize = 20;
/// Fewer stretches than this and the dispersion test is not run.
const MIN_STRETCHES: usize = 4;

/// One test's outcome.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Outcome {
    /// The statistic (a standard normal for the trend tests, the dispersion index for clumping).
    pub statistic: f64,
    /// Its p-value.
    pub p_value: f64,
}

/// Laplace's test for a trend in the rate of events at `times` (sample numbers) over a run of
/// `span` samples; two-sided.
pub(super) fn rate_trend(times: &[u64], span: u64) -> Outcome {
    let n = times.len() as f64;
    let span = span.max(1) as f64;
    // Sample i stands for the stretch [i, i + 1): its middle is the event's time.
    let mean = times.iter().map(|&t| t as f64 + 0.5).sum::<f64>() / n;
    let statistic = (mean - span / 2.0) / (span * (1.0 / (12.0 * n)).sqrt());
    Outcome {
        statistic,
        p_value: two_sided_normal(statistic),
    }
}

/// Mann and Kendall's test for a monotone trend in `values` (in time order); two-sided.
pub(super) fn size_trend(values: &[f64]) -> Outcome {
    let n = values.len();
    let mut s: i64 = 0;
    for i in 0..n {
        for j in i + 1..n {
            s += match values[j].partial_cmp(&values[i]) {
                Some(std::cmp::Ordering::Greater) => 1,
                Some(std::cmp::Ordering::Less) => -1,
                _ => 0,
            };
        }
    }
    let mut sorted = values.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    let ties: f64 = sorted
        .chunk_by(|a, b| a == b)
        .map(|group| {
            let t = group.len() as f64;
            t * (t - 1.0) * (2.0 * t + 5.0)
        })
        .sum();
    let n = n as f64;
    let variance = (n * (n - 1.0) * (2.0 * n + 5.0) - ties) / 18.0;
    // The continuity correction moves S one step towards 0.
    let statistic = if variance > 0.0 {
        (s as f64 - (s.signum() as f64)) / variance.sqrt()
    } else {
        0.0
    };
    Outcome {
        statistic,
        p_value: two_sided_normal(statistic),
    }
}

/// The index of dispersion of the events at `times` counted in equal stretches of a run of
/// `span` samples; one-sided (too clumped). `None` with too few events to form
/// [`MIN_STRETCHES`] stretches of [`CLUSTERS_PER_STRETCH`].
pub(super) fn clumping(times: &[u64], span: u64) -> Option<Outcome> {
    let stretches = (times.len() / CLUSTERS_PER_STRETCH).min(MAX_STRETCHES);
    if stretches < MIN_STRETCHES || span == 0 {
        return None;
    }
    let mut counts = vec![0u64; stretches];
    for &t in times {
        let stretch = (t.min(span - 1) as u128 * stretches as u128 / span as u128) as usize;
        counts[stretch] += 1;
    }
    let mean = times.len() as f64 / stretches as f64;
    let statistic = counts
        .iter()
        .map(|&c| (c as f64 - mean).powi(2))
        .sum::<f64>()
        / mean;
    let degrees = (stretches - 1) as f64;
    // Counts exactly equal in every stretch (a perfectly regular spike) are not clumped.
    let p_value = if statistic > 0.0 {
        gamma_ur(degrees / 2.0, statistic / 2.0)
    } else {
        1.0
    };
    Some(Outcome { statistic, p_value })
}

/// How much more the clusters' counts vary than Poisson counts would: the index of dispersion
/// per degree of freedom, at least 1 (1 with too few clusters to tell). An overdispersed count
/// of `C` clusters tells the rate as well as `C / factor` Poisson ones (the quasi-Poisson
/// scale, McCullagh and Nelder, section 6.2): every rate interval and prediction uses that
/// many. Below the clumping test's level the spells are not proof of dependence, but they
/// still widen what the run can say.
///
/// Two scales, the larger taken: the clumping test's stretches (seconds, in a soak of minutes),
/// and the run's two halves. A machine whose background drifts from one half-minute to the next
/// (a VM's host, a thermal cycle) leaves stretches that look Poisson while the halves differ,
/// and a prediction for the next run's worth of clusters must allow for that drift. One degree
/// of freedom makes the halves' index noisy, so it only ever widens: on a steady tail it
/// exceeds 1 about a third of the time, by a chi-squared variable's excess.
pub(super) fn dispersion_factor(times: &[u64], span: u64) -> f64 {
    let stretches = (times.len() / CLUSTERS_PER_STRETCH).min(MAX_STRETCHES);
    match clumping(times, span) {
        Some(outcome) => (outcome.statistic / (stretches - 1) as f64)
            .max(halves_dispersion(times, span))
            .max(1.0),
        None => 1.0,
    }
}

/// The index of dispersion of the counts of events at `times` in the two halves of a run of
/// `span` samples: `(a - b)^2 / (a + b)`, chi-squared with one degree of freedom for a
/// constant rate.
fn halves_dispersion(times: &[u64], span: u64) -> f64 {
    let first = times.iter().filter(|&&t| t < span / 2).count() as f64;
    let second = times.len() as f64 - first;
    if first + second == 0.0 {
        return 1.0;
    }
    (first - second).powi(2) / (first + second)
}

/// P(|Z| >= |z|) for a standard normal Z.
fn two_sided_normal(z: f64) -> f64 {
    erfc(z.abs() / std::f64::consts::SQRT_2).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Event times of a Poisson process of `n` events over `span`, with the rate rising
    /// linearly by `rise` (0: constant) from start to end.
    fn times(n: usize, span: u64, rise: f64, seed: u64) -> Vec<u64> {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut out: Vec<u64> = (0..n)
            .map(|_| {
                loop {
                    let t = rng.f64();
                    // Thinning: accept with probability proportional to the rate at t.
                    if rng.f64() * (1.0 + rise) <= 1.0 + rise * t {
                        break (t * span as f64) as u64;
                    }
                }
            })
            .collect();
        out.sort_unstable();
        out
    }

    #[test]
    fn a_constant_rate_shows_no_trend_and_a_rising_one_does() {
        let calm = rate_trend(&times(200, 1_000_000, 0.0, 1), 1_000_000);
        assert!(calm.p_value >= REJECT_BELOW, "{calm:?}");
        let rising = rate_trend(&times(200, 1_000_000, 3.0, 1), 1_000_000);
        assert!(
            rising.p_value < 0.001 && rising.statistic > 0.0,
            "{rising:?}"
        );
    }

    #[test]
    fn laplace_statistic_is_the_standardised_mean_time() {
        // Two events at the ends of a 100-sample run: mean 50, exactly the middle.
        assert_eq!(rate_trend(&[0, 99], 100).statistic, 0.0);
        // One event at the very end: (99.5 - 50) / (100 / sqrt(12)) = 1.7147.
        let late = rate_trend(&[99], 100);
        assert!((late.statistic - 1.714_73).abs() < 1e-4, "{late:?}");
    }

    #[test]
    fn mann_kendall_sees_sizes_that_step_up_and_not_shuffled_ones() {
        let mut rng = fastrand::Rng::with_seed(3);
        let shuffled: Vec<f64> = (0..150).map(|_| rng.f64()).collect();
        assert!(size_trend(&shuffled).p_value > 0.05);
        let stepped: Vec<f64> = (0..150)
            .map(|i| rng.f64() + if i >= 75 { 0.5 } else { 0.0 })
            .collect();
        let outcome = size_trend(&stepped);
        assert!(
            outcome.p_value < 1e-6 && outcome.statistic > 0.0,
            "{outcome:?}"
        );
    }

    #[test]
    fn mann_kendall_matches_a_hand_count() {
        // 1, 3, 2: pairs (1,3) +1, (1,2) +1, (3,2) -1: S = 1; variance 3 * 2 * 11 / 18 = 11/3;
        // Z = (1 - 1) / sqrt(11/3) = 0.
        assert_eq!(size_trend(&[1.0, 3.0, 2.0]).statistic, 0.0);
        // 1, 2, 3: S = 3, Z = 2 / sqrt(11/3) = 1.0445.
        let rising = size_trend(&[1.0, 2.0, 3.0]);
        assert!((rising.statistic - 1.044_46).abs() < 1e-4, "{rising:?}");
    }

    #[test]
    fn clusters_in_spells_are_clumped_and_scattered_ones_are_not() {
        let scattered = times(200, 1_000_000, 0.0, 5);
        let calm = clumping(&scattered, 1_000_000).unwrap();
        assert!(calm.p_value > 0.05, "{calm:?}");
        // The same number of clusters, all in four spells of a twentieth of the run each.
        let mut rng = fastrand::Rng::with_seed(6);
        let spells: Vec<u64> = {
            let mut t: Vec<u64> = (0..200)
                .map(|i| (i % 4) as u64 * 250_000 + rng.u64(0..50_000))
                .collect();
            t.sort_unstable();
            t
        };
        let clumped = clumping(&spells, 1_000_000).unwrap();
        assert!(clumped.p_value < 1e-6, "{clumped:?}");
        assert_eq!(clumping(&spells[..15], 1_000_000), None, "too few to test");
        // One cluster in each of 20 equal stretches: as regular as can be.
        let regular: Vec<u64> = (0..100).map(|i| i * 10_000 + 5_000).collect();
        assert_eq!(clumping(&regular, 1_000_000).unwrap().p_value, 1.0);
    }

    #[test]
    fn a_rate_that_differs_between_the_halves_widens_what_the_stretches_alone_would() {
        // Seen on a real run's timer: clusters Poisson within each half, 53 in the first
        // half-minute and 72 in the second; the stretches' index was 1.26, the halves' 2.9.
        let span = 1_200_000;
        let mut rng = fastrand::Rng::with_seed(7);
        let mut drifting: Vec<u64> = (0..125)
            .map(|i| {
                if i < 53 {
                    rng.u64(0..span / 2)
                } else {
                    rng.u64(span / 2..span)
                }
            })
            .collect();
        drifting.sort_unstable();
        let halves = (72.0f64 - 53.0).powi(2) / 125.0;
        assert_eq!(halves_dispersion(&drifting, span), halves);
        let stretches = (125 / CLUSTERS_PER_STRETCH).min(MAX_STRETCHES);
        let fine = clumping(&drifting, span).unwrap().statistic / (stretches - 1) as f64;
        assert!(fine < halves, "the stretches alone: {fine}");
        assert_eq!(dispersion_factor(&drifting, span), halves);
        // Equal halves add nothing: the factor is the stretches' (at least 1).
        let even: Vec<u64> = (0..100).map(|i| i * 12_000 + rng.u64(0..12_000)).collect();
        assert_eq!(halves_dispersion(&even, span), 0.0);
        let fine = clumping(&even, span).unwrap().statistic / 19.0;
        assert_eq!(dispersion_factor(&even, span), fine.max(1.0));
    }
}
