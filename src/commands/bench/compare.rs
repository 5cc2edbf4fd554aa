//! `rtsoak bench compare`: load two or three saved bench results, refuse mismatched benches or
//! flags, compute each series' comparison and print the verdict with its gates.

use std::path::PathBuf;

use crate::bench::UsageError;
use crate::bench::compare::{self, Comparison, Gates, Point, Verdict};
use crate::bench::doc;
use crate::bench::{BenchConfig, BenchDoc};
use crate::exit::Outcome;
use crate::export::bench as report;

/// Compare the results at `paths` (A CHILD B, or A B) against `gates`.
pub fn compare_results(paths: &[PathBuf], gates: &Gates, json: bool) -> anyhow::Result<Outcome> {
    let docs = paths
        .iter()
        .map(|p| doc::load(p).map_err(|e| UsageError(format!("{e:#}")).into()))
        .collect::<anyhow::Result<Vec<BenchDoc>>>()?;
    check_comparable(&docs, paths)?;
    let mut rows: Vec<(String, Comparison)> = Vec::new();
    for series in &docs[0].series {
        let points: Vec<Point> = docs
            .iter()
            .map(|d| point(d, &series.name))
            .collect::<Option<_>>()
            .ok_or_else(|| {
                UsageError(format!(
                    "series {} is missing from some results: compare results of the same bench \
                     with the same flags",
                    series.name
                ))
            })?;
        let comparison = match points.as_slice() {
            [a, child, b] => compare::three_way(a, child, b, gates),
            [a, b] => compare::two_way(a, b, gates),
            _ => unreachable!("clap accepts two or three results"),
        };
        rows.push((series.name.clone(), comparison));
    }
    let verdict = overall(&rows);
    if json {
        let value = serde_json::json!({
            "bench": docs[0].bench,
            "results": paths,
            "kernels": docs.iter().map(|d| d.host.kernel_release.clone()).collect::<Vec<_>>(),
            "gates": gates,
            "series": rows.iter().map(|(name, c)| serde_json::json!({"series": name, "comparison": c})).collect::<Vec<_>>(),
            "verdict": verdict,
        });
        println!(
            "{}",
            crate::export::escape::json(serde_json::to_string_pretty(&value)?)
        );
    } else {
        let labels: Vec<String> = docs
            .iter()
            .zip(paths)
            .map(|(d, p)| {
                format!(
                    "{} [{}]",
                    p.display(),
                    d.host.kernel_release.as_deref().unwrap_or("unknown kernel")
                )
            })
            .collect();
        print!(
            "{}",
            report::render_comparison(&docs[0].bench, &labels, &rows, gates, verdict.name())
        );
    }
    Ok(match verdict {
        Verdict::Regression => Outcome::Regression,
        Verdict::Inconclusive => Outcome::ThresholdBreach,
        Verdict::Improvement | Verdict::NoChange => Outcome::Pass,
    })
}

/// The measured rounds of series `name` in `doc`.
fn point(doc: &BenchDoc, name: &str) -> Option<Point> {
    let series = doc.series.iter().find(|s| s.name == name)?;
    Some(Point {
        rounds_ns_per_op: series.measured_ns_per_op(),
        invalid_rounds: series
            .rounds
            .iter()
            .filter(|r| !r.warmup && !r.valid)
            .count(),
    })
}

/// The worst verdict of any series: a regression anywhere is a regression.
fn overall(rows: &[(String, Comparison)]) -> Verdict {
    let verdicts: Vec<Verdict> = rows.iter().map(|(_, c)| c.verdict).collect();
    [
        Verdict::Regression,
        Verdict::Inconclusive,
        Verdict::Improvement,
    ]
    .into_iter()
    .find(|v| verdicts.contains(v))
    .unwrap_or(Verdict::NoChange)
}

/// Refuse to compare different benches or configs (the CPU may differ: a warning).
fn check_comparable(docs: &[BenchDoc], paths: &[PathBuf]) -> anyhow::Result<()> {
    let reference = &docs[0];
    for (doc, path) in docs.iter().zip(paths).skip(1) {
        if doc.bench != reference.bench {
            return Err(UsageError(format!(
                "{} is a {} result but {} is a {} result: compare results of one bench",
                paths[0].display(),
                reference.bench,
                path.display(),
                doc.bench
            ))
            .into());
        }
        let a = config_without_cpu(&reference.config);
        let b = config_without_cpu(&doc.config);
        if let Some(key) = a.keys().find(|key| a.get(*key) != b.get(*key)) {
            return Err(UsageError(format!(
                "{} has {key}={} but {} has {key}={}: run every point with the same flags",
                paths[0].display(),
                a[key],
                path.display(),
                b[key]
            ))
            .into());
        }
        if doc.config.cpu != reference.config.cpu {
            eprintln!(
                "Warning: {} ran on CPU {} and {} on CPU {}",
                paths[0].display(),
                reference.config.cpu,
                path.display(),
                doc.config.cpu
            );
        }
    }
    Ok(())
}

fn config_without_cpu(config: &BenchConfig) -> serde_json::Map<String, serde_json::Value> {
    let mut map = match serde_json::to_value(config) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    map.remove("cpu");
    map
}
