//! A check on real runs, not a timed test: from the first 20 % of each series of a saved result,
//! fit the tail and predict how many clusters of samples will go over the worst sample of that
//! first 20 % in the remaining 80 %; then count them. Run it on long results (a minute or more,
//! a low `run.threshold_us` and a large `run.outliers_max` so the outlier list holds the tail):
//! `TAIL_RESULTS=a/result.json,b/result.json cargo test --test tail_prediction -- --ignored
//! --nocapture`. The prediction interval is the Poisson 95 % interval of the predicted count (the
//! fit's own uncertainty is not in it, so it is a strict check).

use rtsoak::store;
use rtsoak_analysis::stats::{decode_histogram, new_histogram};
use rtsoak_analysis::tail::{TailInput, estimate};
use rtsoak_record::Outlier;
use rtsoak_record::{TailEstimate, TailModel};

/// The smallest `k` with P(X <= k) >= `p` for X ~ Poisson(`mean`).
fn poisson_quantile(mean: f64, p: f64) -> u64 {
    let (mut k, mut term) = (0u64, (-mean).exp());
    let mut cumulative = term;
    while cumulative < p && k < 1_000_000 {
        k += 1;
        term *= mean / k as f64;
        cumulative += term;
    }
    k
}

/// Expected clusters over `level_ns` in `samples` samples under `model`.
fn expected_over(model: &TailModel, level_ns: f64, samples: f64) -> f64 {
    let rate = model.clusters as f64 / model.samples as f64;
    let y = level_ns - model.threshold_ns as f64;
    let survival = if model.xi.abs() < 1e-7 {
        (-y / model.sigma_ns).exp()
    } else {
        (1.0 + model.xi * y / model.sigma_ns)
            .max(0.0)
            .powf(-1.0 / model.xi)
    };
    samples * rate * survival
}

/// Clusters of `outliers` over `level_ns`, apart when at least `run_length` samples separate them.
fn clusters_over(outliers: &[Outlier], level_ns: u64, period_ns: u64, run_length: u64) -> u64 {
    let mut count = 0;
    let mut last: Option<u64> = None;
    for o in outliers.iter().filter(|o| o.value_ns > level_ns) {
        let index = o.at_ns / period_ns;
        if last.is_none_or(|l| index - l >= run_length.max(4)) {
            count += 1;
        }
        last = Some(index);
    }
    count
}

#[test]
#[ignore = "a check on saved real runs: set TAIL_RESULTS and run with --ignored"]
fn the_first_fifth_predicts_the_rest() {
    let paths = std::env::var("TAIL_RESULTS").expect("TAIL_RESULTS=path[,path...]");
    let (mut held, mut checked, mut refused) = (0, 0, 0);
    for path in paths.split(',') {
        let doc = store::load(std::path::Path::new(path)).unwrap();
        let (period_ns, threshold_ns) = (doc.plan.period_ns, doc.plan.threshold_ns);
        for run in &doc.runs {
            // What the coordinator spent on this run's tails, re-measured on the same input.
            let start = std::time::Instant::now();
            let tails = rtsoak_analysis::tail::run::estimate_run(run, period_ns, threshold_ns);
            let outliers: usize = run.series.values().map(|s| s.outliers.len()).sum();
            println!(
                "{}: {} tail estimates in {:.3} s ({outliers} outliers in all series)",
                run.transport,
                tails.len(),
                start.elapsed().as_secs_f64()
            );
            let split_ns = run.measured_ns / 5;
            for (name, series) in &run.series {
                if !run.tail.contains_key(name) {
                    continue;
                }
                // The list is complete up to its last sample when it filled up.
                let complete_ns = match (series.outliers_dropped, series.outliers.last()) {
                    (0, _) | (_, None) => run.measured_ns,
                    (_, Some(last)) => last.at_ns,
                };
                if complete_ns <= split_ns {
                    println!(
                        "{} {name}: the outlier list filled within the first fifth",
                        run.transport
                    );
                    continue;
                }
                let first: Vec<Outlier> = series
                    .outliers
                    .iter()
                    .copied()
                    .filter(|o| o.at_ns < split_ns)
                    .collect();
                let rest: Vec<Outlier> = series
                    .outliers
                    .iter()
                    .copied()
                    .filter(|o| o.at_ns >= split_ns && o.at_ns < complete_ns)
                    .collect();
                let mut histogram = new_histogram();
                for interval in run.intervals.iter().filter(|i| i.start_ns < split_ns) {
                    if let Some(s) = interval.series.get(name) {
                        histogram
                            .add(
                                decode_histogram(
                                    s.histogram.as_deref().expect("a headline series' interval"),
                                )
                                .unwrap(),
                            )
                            .unwrap();
                    }
                }
                let fit = estimate(&TailInput {
                    outliers: &first,
                    outliers_dropped: 0,
                    histogram: &histogram,
                    measured_ns: split_ns,
                    period_ns,
                    threshold_ns,
                });
                let model = match &fit {
                    TailEstimate::Estimated(model) => model.as_ref(),
                    TailEstimate::HeavyTail { reason, .. }
                    | TailEstimate::NotEstimable { reason } => {
                        refused += 1;
                        println!("{} {name}: refused: {reason}", run.transport);
                        continue;
                    }
                };
                let level_ns = first.iter().map(|o| o.value_ns).max().unwrap_or(0);
                let rest_samples = (complete_ns - split_ns) as f64 / period_ns as f64;
                let predicted = expected_over(model, level_ns as f64, rest_samples);
                let (low, high) = (
                    poisson_quantile(predicted, 0.025),
                    poisson_quantile(predicted, 0.975),
                );
                let seen = clusters_over(&rest, level_ns, period_ns, model.run_length_samples);
                let ok = (low..=high).contains(&seen);
                checked += 1;
                held += u32::from(ok);
                println!(
                    "{} {name}: over {:.1} us (worst of the first fifth) predicted {predicted:.1} \
                     clusters [{low}, {high}] in {:.0} s, seen {seen}: {}",
                    run.transport,
                    level_ns as f64 / 1000.0,
                    rest_samples * period_ns as f64 / 1e9,
                    if ok { "held" } else { "MISSED" }
                );
            }
        }
    }
    println!("tail prediction: held {held} of {checked} checked, {refused} refused");
}
