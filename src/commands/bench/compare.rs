//! `rtsoak bench compare`: load two or three saved bench results, refuse mismatched benches or
//! flags, compute each series' comparison and print the verdict with its gates.

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::exit::Outcome;
use rtsoak_analysis::bench::compare::{self, Comparison, Gates, Point, Verdict};
use rtsoak_measure::bench::UsageError;
use rtsoak_record::bench::{
    BENCH_COMMAND, BENCH_FILE, BENCH_SCHEMA_VERSION, BenchConfig, BenchDoc,
};
use rtsoak_report::bench as report;

/// Compare the results at `paths` (A CHILD B, or A B) against `gates`.
pub(crate) fn compare_results(
    paths: &[PathBuf],
    gates: &Gates,
    json: bool,
) -> anyhow::Result<Outcome> {
    let docs = paths
        .iter()
        .map(|p| load(p).map_err(|e| UsageError(format!("{e:#}")).into()))
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
        println!("{}", rtsoak_report::escape::pretty_json(&value)?);
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
            report::render_comparison(docs[0].bench.name(), &labels, &rows, gates, verdict.name())
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
                reference.bench.name(),
                path.display(),
                doc.bench.name()
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

/// Load a bench result (a `bench.json`, or a directory holding one). Refuses soak results and
/// other schema versions with a message saying what was found.
fn load(path: &Path) -> anyhow::Result<BenchDoc> {
    // Read once, bounded, never through another user's symlink as root (`sys::input`).
    let input = rtsoak_sys::input::read_file_or_in_dir(
        path,
        Some(std::ffi::OsStr::new(BENCH_FILE)),
        crate::store::MAX_RESULT_BYTES,
    )
    .context(
        "reading a bench result: give the bench.json (or its directory) that `rtsoak bench` \
         wrote",
    )?;
    let file = input.path;
    let value: serde_json::Value = serde_json::from_slice(&input.bytes)
        .with_context(|| format!("{} is not JSON", file.display()))?;
    anyhow::ensure!(
        value.get("command").and_then(|v| v.as_str()) == Some(BENCH_COMMAND),
        "{} is not an rtsoak bench result (soak results are compared with `rtsoak compare`)",
        file.display()
    );
    let version = value.get("schema_version").and_then(|v| v.as_u64());
    anyhow::ensure!(
        version == Some(u64::from(BENCH_SCHEMA_VERSION)),
        "{} has bench schema version {version:?}; this rtsoak reads version \
         {BENCH_SCHEMA_VERSION}",
        file.display()
    );
    let doc: BenchDoc = serde_json::from_value(value)
        .with_context(|| format!("{} is not a valid rtsoak bench result", file.display()))?;
    times_measured(&doc)
        .with_context(|| format!("{} is not a valid rtsoak bench result", file.display()))?;
    Ok(doc)
}

/// Every round took a time: a positive, finite ns per operation. A comparison divides by the
/// parents' means, so a zero or a negative one read from a file would make any change look
/// like none (or like infinity).
fn times_measured(doc: &BenchDoc) -> anyhow::Result<()> {
    for series in &doc.series {
        for round in &series.rounds {
            anyhow::ensure!(
                round.ns_per_op.is_finite() && round.ns_per_op > 0.0,
                "round {} of series {} has ns_per_op {}, which no operation takes; give the \
                 bench.json `rtsoak bench` wrote",
                round.index,
                rtsoak_record::text::quote(&series.name),
                round.ns_per_op
            );
        }
    }
    Ok(())
}
