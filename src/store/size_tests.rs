//! The size of large results, on a machine where every outlier list fills, built at the bounds
//! the result keeps (`coarsen`, `RunPlan::outliers_per_list`, `explain::chains_per_run`) and
//! saved as `result.json` is: the Jetson profile's 10-minute comparison, and an 8-hour nightly
//! of every transport in five rounds. The histograms are drawn as a busy 2-CPU machine spread
//! them (calibrated at the end against what its default comparison's intervals encoded to);
//! every chain is an unexplained one naming the largest wait it had, the largest kind.

use std::collections::BTreeMap;

use rtsoak_analysis::coarsen;
use rtsoak_analysis::stats::{coarse_copy, encode_histogram, new_histogram};
use rtsoak_record::result::cause::{Cause, Culprit, LockHolder};
use rtsoak_record::result::explain::{
    ExplainedOutlier, Explanation, LockKind, TaskRole, WaitShare, Why, chains_per_run,
};
use rtsoak_record::result::{Interval, IntervalSeries};
use rtsoak_record::{Outlier, SampleStats};
use rtsoak_record::{Series, SeriesKey};
use rtsoak_report::json::render as to_json;

const HOUR_NS: u64 = 3_600_000_000_000;

/// `samples` drawn as a busy machine spreads them: log-normal around `median_ns` (most
/// samples) and, with probability `tail`, a Pareto tail from 30 us. Drawn, not computed: real
/// counts are noisy, and noisy counts compress less than smooth ones.
fn drawn(samples: u64, median_ns: f64, sigma: f64, tail: f64) -> hdrhistogram::Histogram<u64> {
    let mut histogram = new_histogram();
    let mut state: u64 = 0x2545_f491_4f6c_dd1d ^ samples;
    let mut uniform = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    for _ in 0..samples {
        let value = if uniform() < tail {
            30_000.0 / uniform().powf(1.0 / 1.5)
        } else {
            let normal =
                (-2.0 * uniform().ln()).sqrt() * (2.0 * std::f64::consts::PI * uniform()).cos();
            median_ns * (sigma * normal).exp()
        };
        histogram.saturating_record(value as u64);
    }
    histogram
}

/// A series' histogram over `seconds` at the default 500 us period, spread as this 2-CPU
/// machine's were: one 10 s interval drawn so encodes in about 3.5 KB at three digits and
/// 1.1 KB at two, as the default comparison's did here (delivery 4.0 KB, send call 3.3 KB).
fn spread_histogram(seconds: u64) -> hdrhistogram::Histogram<u64> {
    drawn(seconds * 2_000, 6_000.0, SIGMA, TAIL)
}

const SIGMA: f64 = 0.6;
const TAIL: f64 = 0.05;

#[test]
fn an_eight_hour_nightly_whose_every_list_fills_stays_under_10_mb() {
    let bytes = full_comparison("8-hour nightly", 8 * HOUR_NS / 8, 5);
    assert!(bytes < 10_000_000, "{bytes} bytes");
}

#[test]
fn a_ten_minute_jetson_comparison_whose_every_list_fills_stays_under_10_mb() {
    // profiles/jetson-orin-nano.toml: every transport for 10 minutes, one round.
    let bytes = full_comparison("10-minute Jetson comparison", HOUR_NS / 6, 1);
    assert!(bytes < 10_000_000, "{bytes} bytes");
}

/// The saved size of a comparison of every transport for `duration_ns` each in `rounds`, every
/// outlier list full, explained; `what` names it in the figure printed.
fn full_comparison(what: &str, duration_ns: u64, rounds: u32) -> usize {
    let mut doc = rtsoak_testing::fixture::two_round_doc();
    let template = doc.runs[0].clone();
    doc.plan.transports = rtsoak_record::transport::Name::all();
    doc.plan.ring_setup_variants.clear();
    doc.plan.rounds = rounds;
    doc.plan.outliers_max = 1_000;
    doc.plan.duration_ns = duration_ns;
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
    let histogram = encode_histogram(&spread_histogram(run_ns / 1_000_000_000));
    // The diagnostic series' run-wide histograms are stored at two digits (`build`).
    let coarse_run = encode_histogram(&coarse_copy(&spread_histogram(run_ns / 1_000_000_000)));
    let stored = |key: SeriesKey| {
        if key.is_headline() {
            histogram.clone()
        } else {
            coarse_run.clone()
        }
    };
    // A merged interval of the kept list: a run's share of its intervals.
    let merged_ns = run_ns / coarsen::intervals_per_run(runs) as u64;
    let coarse = encode_histogram(&coarse_copy(&spread_histogram(merged_ns / 1_000_000_000)));
    eprintln!(
        "histograms: a run's {} bytes, a merged interval's {}",
        histogram.len(),
        coarse.len()
    );
    let outliers: Vec<Outlier> = (0..per_list as u64)
        .map(|i| Outlier {
            at_ns: run_ns - i * (run_ns / (per_list as u64 + 1)),
            value_ns: 100_001 + i * 1_733,
        })
        .rev()
        .collect();
    let why = Why::Unexplained {
        largest_wait: Some(WaitShare {
            cause: Cause::Lock {
                lock: LockKind::PiFutex,
                caller: Some("futex_lock_pi".into()),
                holder: Some(LockHolder {
                    role: TaskRole::NoisePublisher,
                    boosted_to: Some("FIFO 40".into()),
                    preempted_by: Some(Culprit {
                        role: TaskRole::Burst,
                        name: None,
                        priority: "FIFO 50".into(),
                    }),
                }),
            },
            share_percent: 45.0,
        }),
        on_cpu_percent: Some(55.0),
        events_lost_near: true,
        reason: None,
    };
    doc.runs = (0..runs)
        .map(|_| {
            let mut run = template.clone();
            run.measured_ns = run_ns;
            for key in &series {
                let any = template.series.values().next().unwrap().clone();
                let kept = run.series.entry(*key).or_insert(any);
                kept.histogram = stored(*key);
                kept.outliers.clone_from(&outliers);
                kept.outliers_dropped = 1_000_000;
            }
            // The queue noise's two series: a run-wide histogram each, no list, no intervals.
            for series in [Series::SendCall, Series::Delivery] {
                let mut noise = template.series.values().next().unwrap().clone();
                noise.histogram = stored(SeriesKey::Noise(series));
                noise.outliers.clear();
                run.series.insert(SeriesKey::Noise(series), noise);
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
                                    // Headline series only, as `build` keeps them.
                                    histogram: key.is_headline().then(|| coarse.clone()),
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
                    if part.histogram.is_some() {
                        part.histogram = Some(coarse.clone());
                    }
                }
            }
            let chains = chains_per_run(runs);
            run.explanation = Some(Explanation {
                outliers: outliers
                    .iter()
                    .cycle()
                    .take(chains)
                    .map(|o| ExplainedOutlier {
                        series: Series::Delivery,
                        at_ns: o.at_ns,
                        value_ns: o.value_ns,
                        why: why.clone(),
                    })
                    .collect(),
                outliers_not_listed: 2_000u64.saturating_sub(chains as u64),
                series: BTreeMap::new(),
                ..Default::default()
            });
            run
        })
        .collect();
    let bytes = to_json(&doc).len();
    let part = |f: &dyn Fn(&rtsoak_record::result::RunResult) -> usize| -> usize {
        doc.runs.iter().map(f).sum()
    };
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
        "{what}, {runs} runs of {} s, {intervals} intervals each, every list full: {bytes} \
         bytes ({lists} outlier lists of {per_list}, {timeline} intervals, {chains} chains)",
        run_ns / 1_000_000_000
    );
    bytes
}

#[test]
fn the_drawn_spread_encodes_as_this_machines_real_intervals_did() {
    let interval = spread_histogram(10);
    let (fine, coarse) = (
        encode_histogram(&interval).len(),
        encode_histogram(&coarse_copy(&interval)).len(),
    );
    assert!(
        (3_300..=5_000).contains(&fine),
        "{fine} bytes at three digits"
    );
    assert!(
        (1_000..=1_500).contains(&coarse),
        "{coarse} bytes at two digits"
    );
}
