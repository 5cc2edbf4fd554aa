//! A check on real runs, not a timed test: does every estimate rtsoak prints as a number hold
//! out of sample? For each series of each saved result, the tail is estimated from the run's
//! first half alone, as rtsoak would have printed it had the run stopped there; where that
//! gives a number, the model it printed predicts the second half (95 % intervals of its
//! clusters over the model's threshold and of its largest sample from the bootstrap predictive
//! distribution, which carries the fit's own uncertainty: `rtsoak_analysis::tail::held_out::
//! predict_model`), and the second half is held against them, its clusters cut at the model's
//! own run length (`held_out::observe`). Run it on 2-minute results:
//! `TAIL_RESULTS=a/result.json,b/result.json cargo test --release --test tail_prediction --
//! --ignored --nocapture` (a directory is searched for `result.json` files). It prints one line
//! per series, then a table by run, and fails when fewer than 90 % of the printed estimates
//! held.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rtsoak::store;
use rtsoak_analysis::stats::{decode_histogram, new_histogram};
use rtsoak_analysis::tail::decluster::Exceedance;
use rtsoak_analysis::tail::held_out::{observe, predict_model};
use rtsoak_analysis::tail::run::TAIL_SERIES;
use rtsoak_analysis::tail::{TailInput, estimate};
use rtsoak_record::result::{ResultDoc, RunResult, SeriesResult};
use rtsoak_record::{Outlier, SeriesKey, TailEstimate, TailRefusal};

/// What the first half of one series gave.
enum Check {
    /// A number was printed, and the second half was within its prediction or not.
    Printed { held: bool, line: String },
    /// No number, and why.
    Refused {
        why: Option<TailRefusal>,
        line: String,
    },
    /// The series cannot be split (no interval histograms, a list full in the first half).
    Skipped(String),
}

/// Every `result.json` named by `TAIL_RESULTS` (files, or directories searched one level down).
fn results() -> Vec<PathBuf> {
    let paths = std::env::var("TAIL_RESULTS").expect("TAIL_RESULTS=path[,path...]");
    let mut out = Vec::new();
    for path in paths.split(',').map(PathBuf::from) {
        if path.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(&path)
                .unwrap()
                .filter_map(|e| {
                    let candidate = e.ok()?.path().join("result.json");
                    candidate.is_file().then_some(candidate)
                })
                .collect();
            found.sort();
            out.extend(found);
        } else {
            out.push(path);
        }
    }
    out
}

/// Estimate `series` of `run` from its first half and check the second half.
fn check(doc: &ResultDoc, run: &RunResult, key: SeriesKey, series: &SeriesResult) -> Check {
    let period_ns = doc.plan.period_ns;
    // Split at the interval boundary nearest the middle, so the first half's histogram is a
    // sum of whole intervals.
    let Some(split_ns) = run
        .intervals
        .iter()
        .map(|i| i.start_ns)
        .filter(|&s| s > 0)
        .min_by_key(|&s| s.abs_diff(run.measured_ns / 2))
    else {
        return Check::Skipped("no intervals".into());
    };
    let complete_over_ns = series.outliers_complete_over_ns;
    if complete_over_ns.is_none()
        && series.outliers_dropped > 0
        && series
            .outliers
            .last()
            .is_none_or(|o| o.at_ns < run.measured_ns)
    {
        return Check::Skipped("a list of the run's first samples filled up".into());
    }
    let mut histogram = new_histogram();
    for interval in run.intervals.iter().filter(|i| i.start_ns < split_ns) {
        let Some(h) = interval
            .series
            .get(&key)
            .and_then(|s| s.histogram.as_deref())
        else {
            return Check::Skipped("an interval without its histogram".into());
        };
        histogram.add(decode_histogram(h).unwrap()).unwrap();
    }
    let (first, rest): (Vec<Outlier>, Vec<Outlier>) =
        series.outliers.iter().partition(|o| o.at_ns < split_ns);
    let rest: Vec<Outlier> = rest
        .iter()
        .map(|o| Outlier {
            at_ns: o.at_ns - split_ns,
            value_ns: o.value_ns,
        })
        .collect();
    let fit = estimate(&TailInput {
        outliers: &first,
        outliers_dropped: 0,
        outliers_complete_over_ns: complete_over_ns,
        histogram: &histogram,
        measured_ns: split_ns,
        period_ns,
        threshold_ns: doc.plan.threshold_ns,
    });
    let model = match &fit {
        TailEstimate::Estimated(model) => model,
        TailEstimate::HeavyTail { reason, .. } => {
            return Check::Refused {
                why: None,
                line: format!("heavy tail: {reason}"),
            };
        }
        TailEstimate::NotEstimable {
            reason, refusal, ..
        } => {
            return Check::Refused {
                why: *refusal,
                line: reason.clone(),
            };
        }
    };
    let rest_ns = run.measured_ns - split_ns;
    let Some(prediction) = predict_model(model, rest_ns, 0.95) else {
        return Check::Skipped("the model's maxima do not refit".into());
    };
    let later: Vec<Exceedance> = rest
        .iter()
        .map(|o| Exceedance {
            index: o.at_ns / period_ns,
            value: o.value_ns as f64,
        })
        .collect();
    let (clusters, max) = observe(model, &later);
    let held = prediction.holds(clusters, max);
    let us = |ns: f64| format!("{:.1}", ns / 1e3);
    let hour = &model.return_levels[0];
    let line = format!(
        "over {} us: hour {} [{}, {}] us; second half {clusters} clusters [{}, {}], largest {} \
         us [{}, {}]: {}",
        us(model.threshold_ns as f64),
        hour.level_ns.map_or("-".into(), us),
        hour.low_ns.map_or("-".into(), us),
        hour.high_ns.map_or("open".into(), us),
        prediction.clusters_low,
        prediction.clusters_high,
        max.map_or("-".into(), us),
        prediction.max_low.map_or("-".into(), us),
        us(prediction.max_high),
        if held { "held" } else { "MISSED" },
    );
    Check::Printed { held, line }
}

#[test]
#[ignore = "a check on saved real runs: set TAIL_RESULTS and run with --ignored"]
fn what_rtsoak_prints_from_a_first_half_holds_in_the_second() {
    let (mut printed, mut held) = (0, 0);
    let mut refused: BTreeMap<String, u32> = BTreeMap::new();
    let mut rows = Vec::new();
    for path in results() {
        let doc = store::load(Path::new(&path)).unwrap();
        for run in &doc.runs {
            let name = path.parent().and_then(|p| p.file_name()).map_or_else(
                || run.transport.clone(),
                |n| n.to_string_lossy().into_owned(),
            );
            let mut row = (0, 0, 0);
            for (key, series) in &run.series {
                if !TAIL_SERIES.map(SeriesKey::Rt).contains(key) {
                    continue;
                }
                match check(&doc, run, *key, series) {
                    Check::Printed { held: ok, line } => {
                        printed += 1;
                        held += u32::from(ok);
                        row.0 += 1;
                        row.1 += u32::from(ok);
                        println!("{name} {key}: {line}");
                    }
                    Check::Refused { why, line } => {
                        row.2 += 1;
                        let why = why.map_or("heavy_tail".to_string(), |w| {
                            serde_json::to_string(&w)
                                .unwrap()
                                .trim_matches('"')
                                .to_string()
                        });
                        *refused.entry(why).or_default() += 1;
                        println!("{name} {key}: refused: {line}");
                    }
                    Check::Skipped(why) => println!("{name} {key}: skipped: {why}"),
                }
            }
            rows.push(format!("| {name} | {} | {} | {} |", row.0, row.1, row.2));
        }
    }
    println!("\n| run | printed | held | refused |\n| --- | --- | --- | --- |");
    for row in &rows {
        println!("{row}");
    }
    println!("\ntail prediction: {held} of {printed} printed estimates held; refused: {refused:?}");
    assert!(
        printed == 0 || f64::from(held) >= 0.9 * f64::from(printed),
        "{held} of {printed} held"
    );
}
