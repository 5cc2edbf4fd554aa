//! The size of a large result: an 8-hour nightly of every transport in five rounds on a machine
//! where every outlier list fills, built at the bounds the result keeps (`coarsen`,
//! `RunPlan::outliers_per_list`, `explain::chains_per_run`) and saved as `result.json` is. Its
//! histograms are spread as a busy machine spreads them (a merged interval's histogram here is
//! about 1 KB per series, as a busy 2-CPU machine's were at two digits), and every chain is an
//! unexplained one with a long reason, the largest kind.

use std::collections::BTreeMap;

use super::to_json;
use crate::record::{Series, SeriesKey};
use crate::result::explain::{ExplainedOutlier, Explanation, Why, chains_per_run};
use crate::result::{Interval, IntervalSeries, coarsen};
use crate::stats::{Outlier, SampleStats, coarse_copy, encode_histogram, new_histogram};

const HOUR_NS: u64 = 3_600_000_000_000;

/// `samples` spread as a busy machine spreads them: log-normal around 8 us (most samples) and
/// a power-law tail from 30 us to the 10 ms the noise reaches, every bucket filled by its share
/// (smooth counts, as real ones are; random ones would not compress, and real ones do).
fn spread_histogram(samples: f64) -> hdrhistogram::Histogram<u64> {
    let mut histogram = new_histogram();
    let mut value: u64 = 1_000;
    while value <= 10_000_000 {
        let next = histogram.next_non_equivalent(value);
        let (x, width) = (value as f64, (next - value) as f64);
        let body = (-(x / 8_000.0).ln().powi(2) / (2.0 * 0.5f64.powi(2))).exp()
            / (x * 0.5 * (2.0 * std::f64::consts::PI).sqrt());
        let tail = if x > 30_000.0 {
            0.05 * 1.5 * 30_000f64.powf(1.5) / x.powf(2.5)
        } else {
            0.0
        };
        let count = (samples * (0.95 * body + tail) * width).round() as u64;
        if count > 0 {
            histogram.record_n(value, count).unwrap();
        }
        value = next;
    }
    histogram
}

#[test]
fn an_eight_hour_nightly_whose_every_list_fills_stays_under_10_mb() {
    let mut doc = crate::testing::fixture::two_round_doc();
    let template = doc.runs[0].clone();
    doc.plan.transports = crate::transport::Name::all();
    doc.plan.ring_setup_variants.clear();
    doc.plan.rounds = 5;
    doc.plan.outliers_max = 1_000;
    doc.plan.duration_ns = 8 * HOUR_NS / doc.plan.transports.len() as u64;
    doc.plan.period_ns = 500_000;
    doc.plan.interval_ns = 10_000_000_000;
    let runs = doc.plan.planned_runs();
    let run_ns = doc.plan.round_duration_ns();
    let per_list = doc.plan.outliers_per_list() as usize;
    let intervals = (run_ns / doc.plan.interval_ns) as usize;
    let series: Vec<SeriesKey> = Series::PUBLISHER
        .into_iter()
        .chain(Series::SUBSCRIBER)
        .map(SeriesKey::Rt)
        .collect();
    let per_second = 1e9 / doc.plan.period_ns as f64;
    let histogram = encode_histogram(&spread_histogram(
        per_second * (run_ns / 1_000_000_000) as f64,
    ));
    // A merged interval of the kept list: a run's share of its intervals.
    let merged_ns = run_ns / coarsen::intervals_per_run(runs) as u64;
    let coarse = encode_histogram(&coarse_copy(&spread_histogram(
        per_second * (merged_ns / 1_000_000_000) as f64,
    )));
    eprintln!(
        "histograms: a run's {} bytes, a merged interval's {}",
        histogram.len(),
        coarse.len()
    );
    let outliers: Vec<Outlier> = (0..per_list as u64)
        .map(|i| Outlier {
            at_ns: run_ns - i * 997_000_003,
            value_ns: 100_001 + i * 1_733,
        })
        .rev()
        .collect();
    let reason = "the longest wait in the trace covers 45% of it (blocked on a PI futex (rt_mutex) \
                  held by a noise publisher boosted to FIFO 40 and preempted by a burst thread \
                  (FIFO 50)); the RT task was on its CPU for 55% of it and the trace shows \
                  nothing holding it back there (time in the kernel path itself, or taken from \
                  the CPU below the kernel: a hypervisor, firmware)";
    doc.runs = (0..runs)
        .map(|_| {
            let mut run = template.clone();
            run.measured_ns = run_ns;
            for key in &series {
                let any = template.series.values().next().unwrap().clone();
                let kept = run.series.entry(*key).or_insert(any);
                kept.histogram.clone_from(&histogram);
                kept.outliers.clone_from(&outliers);
                kept.outliers_dropped = 1_000_000;
            }
            let all: Vec<Interval> = (0..intervals as u32)
                .map(|index| Interval {
                    index,
                    start_ns: u64::from(index) * doc.plan.interval_ns,
                    length_ns: doc.plan.interval_ns,
                    series: series
                        .iter()
                        .map(|&key| {
                            let stats = SampleStats::default();
                            (
                                key,
                                IntervalSeries {
                                    stats,
                                    histogram: coarse.clone(),
                                },
                            )
                        })
                        .collect(),
                })
                .collect();
            run.intervals = coarsen::coarsen(all, coarsen::intervals_per_run(runs));
            // Merging sums the counts; the buckets stay the spread ones.
            for interval in &mut run.intervals {
                for part in interval.series.values_mut() {
                    part.histogram.clone_from(&coarse);
                }
            }
            let chains = chains_per_run(runs);
            run.explanation = Some(Explanation {
                outliers: outliers
                    .iter()
                    .cycle()
                    .take(chains)
                    .map(|o| ExplainedOutlier {
                        series: Series::Delivery.name().to_string(),
                        at_ns: o.at_ns,
                        value_ns: o.value_ns,
                        why: Why::Unexplained {
                            reason: reason.to_string(),
                            on_cpu_percent: Some(55.0),
                        },
                    })
                    .collect(),
                outliers_not_listed: 2_000 - chains as u64,
                series: BTreeMap::new(),
                ..Default::default()
            });
            run
        })
        .collect();
    let bytes = to_json(&doc).len();
    let part =
        |f: &dyn Fn(&crate::result::RunResult) -> usize| -> usize { doc.runs.iter().map(f).sum() };
    let (lists, timeline, chains) = (
        part(&|r| {
            r.series
                .values()
                .map(|s| serde_json::to_vec(&s.outliers).unwrap().len())
                .sum()
        }),
        part(&|r| serde_json::to_vec(&r.intervals).unwrap().len()),
        part(&|r| serde_json::to_vec(&r.explanation).unwrap().len()),
    );
    eprintln!(
        "8-hour nightly, {runs} runs of {} s, {intervals} intervals each, every list full: \
         {bytes} bytes ({lists} outlier lists of {per_list}, {timeline} intervals, {chains} \
         chains)",
        run_ns / 1_000_000_000
    );
    assert!(bytes < 10_000_000, "{bytes} bytes");
}
