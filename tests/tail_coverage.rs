//! The tail estimates are validated, not just implemented: seeded synthetic series with known
//! tails are recorded through the recorder the workers use (so the histogram's quantisation and
//! the bounded outlier list are part of the path), estimated the way a run's series is, and the
//! 95 % interval of the hour's return level must cover the true level in at least 90 % of 200
//! trials per case. Pathological series must be refused. The coverage figures are printed
//! (`cargo test --test tail_coverage -- --nocapture`).

use rtsoak_analysis::stats::{Recorder, new_histogram};
use rtsoak_analysis::tail::{TailInput, estimate};
use rtsoak_record::TailEstimate;

const PERIOD_NS: u64 = 500_000;
/// Samples in an hour at the period: the return period checked.
const HOUR_SAMPLES: f64 = 3600e9 / PERIOD_NS as f64;
const TRIALS: u64 = 200;
/// 20 s of samples per trial: the hour is a 180x extrapolation.
const SAMPLES: u64 = 40_000;

/// A series with a known tail.
struct Case {
    name: &'static str,
    /// The recording threshold, ns.
    threshold_ns: u64,
    /// The true hour return level, ns.
    truth_ns: f64,
    /// Draws the whole series.
    draw: fn(&mut fastrand::Rng) -> Vec<u64>,
}

fn exponential(rng: &mut fastrand::Rng, mean: f64) -> f64 {
    -(1.0 - rng.f64()).ln() * mean
}

fn body(rng: &mut fastrand::Rng) -> u64 {
    (20_000.0 + exponential(rng, 2_000.0)) as u64
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "exponential",
            threshold_ns: 30_597,
            truth_ns: 20_000.0 + 2_000.0 * HOUR_SAMPLES.ln(),
            draw: |rng| (0..SAMPLES).map(|_| body(rng)).collect(),
        },
        Case {
            name: "pareto (xi 0.25)",
            threshold_ns: 75_212,
            truth_ns: 20_000.0 * HOUR_SAMPLES.powf(0.25),
            draw: |rng| {
                (0..SAMPLES)
                    .map(|_| (20_000.0 * (1.0 - rng.f64()).powf(-0.25)) as u64)
                    .collect()
            },
        },
        Case {
            // Lock waits: 0.5 % of samples wait 200 us plus an exponential 20 us.
            name: "body + rare spike mode",
            threshold_ns: 100_000,
            truth_ns: 200_000.0 + 20_000.0 * (0.005 * HOUR_SAMPLES).ln(),
            draw: |rng| {
                (0..SAMPLES)
                    .map(|_| {
                        if rng.f64() < 0.005 {
                            (200_000.0 + exponential(rng, 20_000.0)) as u64
                        } else {
                            body(rng)
                        }
                    })
                    .collect()
            },
        },
        Case {
            // Bursts: 0.5 % of samples start a burst of 1 + geometric (mean 3) samples, led by
            // a peak of 100 us plus an exponential 10 us and trailed by smaller ones (about 200
            // bursts per trial; with 120, coverage measured 87 %: profile intervals are
            // asymptotic). The hour's level is the one the bursts' peaks exceed once an hour;
            // a burst spans 1.01 samples per started one on average.
            name: "clustered bursts",
            threshold_ns: 60_000,
            truth_ns: 100_000.0 + 10_000.0 * (0.005 / 1.01 * HOUR_SAMPLES).ln(),
            draw: |rng| {
                let mut out = Vec::with_capacity(SAMPLES as usize);
                while (out.len() as u64) < SAMPLES {
                    if rng.f64() < 0.005 {
                        let peak = 100_000.0 + exponential(rng, 10_000.0);
                        out.push(peak as u64);
                        while rng.f64() < 2.0 / 3.0 {
                            out.push((peak * (0.6 + 0.39 * rng.f64())) as u64);
                        }
                    } else {
                        out.push(body(rng));
                    }
                }
                out.truncate(SAMPLES as usize);
                out
            },
        },
    ]
}

/// Record `samples` the way a worker does and estimate the tail the way the result does.
fn estimate_recorded(samples: &[u64], threshold_ns: u64) -> TailEstimate {
    let mut recorder = Recorder::new(threshold_ns, 5_000);
    for (i, &value) in samples.iter().enumerate() {
        recorder.record(i as u64 * PERIOD_NS, value);
    }
    let mut histogram = new_histogram();
    // The worker's 32-bit interval histogram, into the 64-bit one a result holds.
    for bucket in recorder.interval.iter_recorded() {
        let count = u64::from(bucket.count_at_value());
        histogram
            .record_n(bucket.value_iterated_to(), count)
            .unwrap();
    }
    let (outliers, dropped) = recorder.outliers();
    estimate(&TailInput {
        outliers,
        outliers_dropped: dropped,
        histogram: &histogram,
        measured_ns: samples.len() as u64 * PERIOD_NS,
        period_ns: PERIOD_NS,
        threshold_ns,
    })
}

/// Trials covered, refused, and run, in parallel on two threads.
fn coverage(case: &Case) -> (u64, u64) {
    let outcomes: Vec<(bool, bool)> = std::thread::scope(|scope| {
        let halves: Vec<_> = (0..2u64)
            .map(|half| {
                scope.spawn(move || {
                    (0..TRIALS)
                        .filter(|t| t % 2 == half)
                        .map(|trial| {
                            let mut rng = fastrand::Rng::with_seed(1000 + trial);
                            let samples = (case.draw)(&mut rng);
                            match estimate_recorded(&samples, case.threshold_ns) {
                                TailEstimate::Estimated(model) => {
                                    let hour = &model.return_levels[0];
                                    let low = hour.low_ns.unwrap_or(f64::INFINITY);
                                    let high = hour.high_ns.unwrap_or(f64::INFINITY);
                                    (low <= case.truth_ns && case.truth_ns <= high, false)
                                }
                                _ => (false, true),
                            }
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        halves.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let covered = outcomes.iter().filter(|o| o.0).count() as u64;
    let refused = outcomes.iter().filter(|o| o.1).count() as u64;
    (covered, refused)
}

#[test]
fn the_hours_interval_covers_the_true_level_in_at_least_90_percent_of_trials() {
    let mut failures = Vec::new();
    let only = std::env::var("TAIL_CASE").ok();
    for case in cases() {
        if only.as_deref().is_some_and(|o| !case.name.contains(o)) {
            continue;
        }
        let (covered, refused) = coverage(&case);
        let share = covered as f64 / TRIALS as f64;
        println!(
            "tail coverage: {:<24} {covered}/{TRIALS} = {:.1} % covered, {refused} refused \
             (true hour level {:.1} us)",
            case.name,
            share * 100.0,
            case.truth_ns / 1000.0
        );
        if share < 0.9 {
            failures.push(format!("{}: {:.1} %", case.name, share * 100.0));
        }
    }
    assert!(failures.is_empty(), "under-covered: {failures:?}");
}

#[test]
fn too_few_exceedances_are_not_estimable() {
    let mut rng = fastrand::Rng::with_seed(5);
    let samples: Vec<u64> = (0..SAMPLES).map(|_| body(&mut rng)).collect();
    // About 10 samples over the threshold.
    let estimate = estimate_recorded(&samples, 20_000 + (2_000.0 * 4_000f64.ln()) as u64);
    let TailEstimate::NotEstimable { reason } = estimate else {
        panic!("estimated from ten samples: {estimate:?}");
    };
    assert!(reason.contains("at least 30 clusters"), "{reason}");
}

#[test]
fn a_bimodal_tail_is_refused() {
    let mut refused = 0;
    for seed in 0..20 {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut samples: Vec<u64> = (0..SAMPLES).map(|_| body(&mut rng)).collect();
        // A second, far mode: 25 samples near 500 us, as from a rare long lock hold.
        for _ in 0..25 {
            let at = rng.usize(0..samples.len());
            samples[at] = 500_000 + rng.u64(0..2_000);
        }
        let estimate = estimate_recorded(&samples, 29_210);
        if !matches!(estimate, TailEstimate::Estimated(_)) {
            refused += 1;
        }
    }
    println!("tail coverage: bimodal tail refused in {refused}/20 trials");
    assert!(
        refused >= 19,
        "a bimodal tail was estimated in {} of 20",
        20 - refused
    );
}
