//! What the tail estimate costs the coordinator for a ten-minute soak's series (1.2 million
//! samples at 500 us, a full outlier list of 1000), measured, not asserted: run it optimised,
//! `cargo test --release --test tail_cost -- --ignored --nocapture`. The goal is at most 1 s of
//! CPU per series; the measuring loops are untouched (the estimate runs after the run).

use std::time::Instant;

use rtsoak_analysis::stats::{Recorder, new_histogram};
use rtsoak_analysis::tail::{TailInput, estimate};

#[test]
#[ignore = "a measurement: run optimised with --ignored"]
fn a_ten_minute_series_costs_under_a_second() {
    const PERIOD_NS: u64 = 500_000;
    const SAMPLES: u64 = 1_200_000;
    let threshold_ns = 50_000;
    let mut rng = fastrand::Rng::with_seed(3);
    let mut recorder = Recorder::new(threshold_ns, 1000);
    for i in 0..SAMPLES {
        // A body around 20 us, and a spike mode at 0.08 % (about 1000 over 50 us).
        let value = if rng.f64() < 0.000_8 {
            50_000.0 + -(1.0 - rng.f64()).ln() * 15_000.0
        } else {
            15_000.0 + -(1.0 - rng.f64()).ln() * 2_000.0
        };
        recorder.record(i * PERIOD_NS, value as u64);
    }
    let mut histogram = new_histogram();
    for bucket in recorder.interval.iter_recorded() {
        let count = u64::from(bucket.count_at_value());
        histogram
            .record_n(bucket.value_iterated_to(), count)
            .unwrap();
    }
    let (outliers, dropped) = recorder.outliers();
    let input = TailInput {
        outliers,
        outliers_dropped: dropped,
        histogram: &histogram,
        measured_ns: SAMPLES * PERIOD_NS,
        period_ns: PERIOD_NS,
        threshold_ns,
    };
    let start = Instant::now();
    let runs = 5;
    for _ in 0..runs {
        std::hint::black_box(estimate(&input));
    }
    let per_series = start.elapsed().as_secs_f64() / runs as f64;
    println!(
        "tail cost: {per_series:.3} s per series ({} outliers, {dropped} dropped, {SAMPLES} samples)",
        outliers.len()
    );
    assert!(per_series < 1.0, "{per_series:.3} s per series");
}
