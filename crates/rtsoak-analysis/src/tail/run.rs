//! Each run's tail estimates: the series an RT engineer gates on, estimated from what the run
//! kept (the exact outlier list and the merged histogram), once, after the run; and, where a
//! plan ran several rounds, each transport's rounds pooled into one estimate at the end.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use crate::merge::{TransportRuns, by_transport};
use crate::stats::{decode_histogram, new_histogram};
use crate::tail::{TailInput, estimate, estimate_pooled};
use rtsoak_record::result::{ResultDoc, RunResult, RunStatus, SeriesResult};
use rtsoak_record::{PooledTail, Series, SeriesKey, TailEstimate, TailRefusal};

/// The series given a tail estimate, in the order tables show them.
pub const TAIL_SERIES: [Series; 4] = [
    Series::SendCall,
    Series::Delivery,
    Series::OwnWake,
    Series::Timer,
];

/// The tail estimate of every [`TAIL_SERIES`] series `run` holds, at the run's `period_ns`
/// with outliers kept over `threshold_ns`.
pub fn estimate_run(
    run: &RunResult,
    period_ns: u64,
    threshold_ns: u64,
) -> BTreeMap<SeriesKey, TailEstimate> {
    let mut out = BTreeMap::new();
    for series in TAIL_SERIES.map(SeriesKey::Rt) {
        let Some(kept) = run.series.get(&series) else {
            continue;
        };
        let estimate = match decode_histogram(&kept.histogram) {
            Ok(histogram) => estimate(&input(run, kept, &histogram, period_ns, threshold_ns)),
            Err(error) => undecodable(&error.to_string()),
        };
        out.insert(series, estimate);
    }
    out
}

/// Every transport's tail estimates pooled over its rounds, for each transport (and ring
/// setup) with more than one measured round.
pub fn pool(doc: &ResultDoc) -> Vec<PooledTail> {
    let (period_ns, threshold_ns) = (doc.plan.period_ns, doc.plan.threshold_ns);
    by_transport(doc)
        .iter()
        .filter_map(|t| {
            let rounds = measured_rounds(t);
            (rounds.len() > 1).then(|| PooledTail {
                transport: t.transport.to_string(),
                ring_setup: t.ring_setup,
                rounds: rounds.len() as u32,
                tail: TAIL_SERIES
                    .map(SeriesKey::Rt)
                    .into_iter()
                    .filter(|key| rounds.iter().all(|run| run.series.contains_key(key)))
                    .map(|key| (key, pooled(&rounds, key, period_ns, threshold_ns)))
                    .collect(),
            })
        })
        .collect()
}

/// The rounds of `t` that measured something, in round order.
fn measured_rounds<'a>(t: &TransportRuns<'a>) -> Vec<&'a RunResult> {
    let mut rounds: Vec<&RunResult> = t
        .runs
        .iter()
        .copied()
        .filter(|run| run.status != RunStatus::Unsupported && run.measured_ns > 0)
        .collect();
    rounds.sort_by_key(|run| run.round);
    rounds
}

/// The estimate of series `key` over `rounds` laid end to end.
fn pooled(
    rounds: &[&RunResult],
    key: SeriesKey,
    period_ns: u64,
    threshold_ns: u64,
) -> TailEstimate {
    let mut histograms = Vec::with_capacity(rounds.len());
    for run in rounds {
        match decode_histogram(&run.series[&key].histogram) {
            Ok(histogram) => histograms.push(histogram),
            Err(error) => return undecodable(&error.to_string()),
        }
    }
    let mut merged = new_histogram();
    for histogram in &histograms {
        // Both span 1 ns to 10 s at the same precision: adding cannot fail.
        merged.add(histogram).expect("same-bounds histograms add");
    }
    let inputs: Vec<TailInput> = rounds
        .iter()
        .zip(&histograms)
        .map(|(run, histogram)| input(run, &run.series[&key], histogram, period_ns, threshold_ns))
        .collect();
    estimate_pooled(&inputs, &merged)
}

fn input<'a>(
    run: &RunResult,
    kept: &'a SeriesResult,
    histogram: &'a Histogram<u64>,
    period_ns: u64,
    threshold_ns: u64,
) -> TailInput<'a> {
    TailInput {
        outliers: &kept.outliers,
        outliers_dropped: kept.outliers_dropped,
        outliers_complete_over_ns: kept.outliers_complete_over_ns,
        histogram,
        measured_ns: run.measured_ns,
        period_ns,
        threshold_ns,
    }
}

fn undecodable(error: &str) -> TailEstimate {
    TailEstimate::refused(
        TailRefusal::NoSamples,
        format!("the series' histogram does not decode ({error}): re-run"),
    )
}
