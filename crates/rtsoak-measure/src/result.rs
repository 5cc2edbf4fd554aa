//! Turning what the workers left behind (interval frames and final reports) into a
//! [`RunResult`]: histograms merged (never percentiles averaged), integrity reconciled between
//! the publisher's count and the subscriber's.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use crate::protocol::ReportStream;
use rtsoak_analysis::stats::{coarse_copy, encode_histogram, new_histogram};
use rtsoak_record::result::{
    Interval, IntervalSeries, RunResult, RunStatus, SeriesResult, WorkerRecord,
};
use rtsoak_record::{Attribution, Integrity, SampleStats};
use rtsoak_record::{RingSetup, Role, Series, SeriesKey};

/// One worker's leftovers.
pub struct WorkerOutput {
    /// Its role.
    pub(crate) role: Role,
    /// Its pid.
    pub(crate) pid: i32,
    /// Its report stream.
    pub(crate) stream: ReportStream,
    /// How the process ended.
    pub(crate) exit: String,
}

/// Everything a run result is built from.
pub struct RunInputs {
    /// Registry name.
    pub transport: String,
    /// How it ended.
    pub status: RunStatus,
    /// Why, if not completed.
    pub reason: Option<String>,
    /// Wall-clock start.
    pub started_at: String,
    /// Measured time covered, ns.
    pub measured_ns: u64,
    /// Busy share of each CPU during the run, percent.
    pub cpu_busy_percent: BTreeMap<usize, f64>,
    /// The RT workers.
    pub workers: Vec<WorkerOutput>,
    /// The noise, folded.
    pub noise: NoiseOutcome,
}

/// A worker's series as a result keys them, in the order its interval frames number them.
/// Queue noise records the same series as the RT pair; they are kept under their own keys.
pub(crate) fn worker_series(role: Role) -> &'static [SeriesKey] {
    const PUBLISHER: [SeriesKey; 4] = keys(Series::PUBLISHER, false);
    const SUBSCRIBER: [SeriesKey; 4] = keys(Series::SUBSCRIBER, false);
    const NOISE_PUBLISHER: [SeriesKey; 4] = keys(Series::PUBLISHER, true);
    const NOISE_SUBSCRIBER: [SeriesKey; 4] = keys(Series::SUBSCRIBER, true);
    match role {
        Role::Publisher => &PUBLISHER,
        Role::Subscriber => &SUBSCRIBER,
        Role::NoisePublisher => &NOISE_PUBLISHER,
        Role::NoiseSubscriber => &NOISE_SUBSCRIBER,
        Role::Burst | Role::Load => &[],
    }
}

/// `series` keyed as the RT pair's, or as the noise's.
const fn keys(series: [Series; 4], noise: bool) -> [SeriesKey; 4] {
    let mut keys = [SeriesKey::Rt(Series::SendCall); 4];
    let mut i = 0;
    while i < 4 {
        keys[i] = if noise {
            SeriesKey::Noise(series[i])
        } else {
            SeriesKey::Rt(series[i])
        };
        i += 1;
    }
    keys
}

/// Queue noise folded over every noise process of a run.
#[derive(Debug, Default)]
pub struct NoiseOutcome {
    /// What the noise did.
    pub(crate) activity: rtsoak_record::result::NoiseActivity,
    /// Merged histograms and exact counters of the noise series that are reported.
    pub(crate) series: BTreeMap<SeriesKey, (Histogram<u64>, SampleStats)>,
}

/// Assemble a run result: the RT pair's part from what each worker left, then the noise's
/// series beside it, then the own-wake figure only where it means something.
pub fn build_run(inputs: RunInputs) -> RunResult {
    let mut rt = RtParts::default();
    for worker in &inputs.workers {
        rt.add_frames(worker);
        rt.add_report(worker);
    }
    rt.summarise_unreported();
    let RtParts {
        mut series,
        mut intervals,
        workers,
        ring_setup,
        attribution,
        ..
    } = rt;
    add_noise_series(&mut series, &inputs.noise.series);
    // An own-wake figure exists only where the transport told its own wakes apart: elsewhere
    // the (empty) series would read as a measurement, in the run's figures and its intervals'.
    if !attribution.attributable() {
        drop_own_wake(&mut series, &mut intervals);
    }
    RunResult {
        ring_setup_requested: None,
        integrity: integrity(&workers, attribution),
        noise: inputs.noise.activity,
        cpu_busy_percent: inputs.cpu_busy_percent,
        coordinator: None,
        break_event: workers_break_event(&inputs.workers),
        transport: inputs.transport,
        round: 1,
        status: inputs.status,
        reason: inputs.reason,
        started_at: inputs.started_at,
        measured_ns: inputs.measured_ns,
        ring_setup,
        series,
        intervals: intervals.into_values().collect(),
        workers,
        explanation: None,
        tail: BTreeMap::new(),
        actions: None,
    }
}

/// The RT pair's part of a result, as it is gathered worker by worker.
#[derive(Default)]
struct RtParts {
    /// Every series' histogram over the whole run, merged from its interval frames.
    totals: BTreeMap<SeriesKey, Histogram<u64>>,
    /// The intervals by index, each with every worker's series for it.
    intervals: BTreeMap<u32, Interval>,
    /// The run's figures per series.
    series: BTreeMap<SeriesKey, SeriesResult>,
    /// One record per worker, in the order they came.
    workers: Vec<WorkerRecord>,
    /// The ring setup the subscriber really got.
    ring_setup: Option<RingSetup>,
    /// How far the subscriber told the publisher's own wakes apart.
    attribution: Attribution,
}

impl RtParts {
    /// Merge a worker's interval frames into the run's totals and into each interval.
    fn add_frames(&mut self, worker: &WorkerOutput) {
        let keys = worker_series(worker.role);
        for frame in &worker.stream.intervals {
            let Some(&key) = keys.get(frame.series as usize) else {
                continue;
            };
            self.totals
                .entry(key)
                .or_insert_with(new_histogram)
                .add(&frame.histogram)
                .expect("histograms of one configuration always add");
            let interval = self
                .intervals
                .entry(frame.index)
                .or_insert_with(|| Interval {
                    index: frame.index,
                    start_ns: frame.start_ns,
                    length_ns: frame.length_ns,
                    series: BTreeMap::new(),
                });
            interval.length_ns = interval.length_ns.max(frame.length_ns);
            interval.series.insert(
                key,
                IntervalSeries {
                    stats: frame.stats,
                    histogram: key
                        .is_headline()
                        .then(|| encode_histogram(&coarse_copy(&frame.histogram))),
                },
            );
        }
    }

    /// Take a worker's final report: its series' exact figures over the merged histograms, the
    /// subscriber's setup, and the worker's record (one saying so where it left no report).
    fn add_report(&mut self, worker: &WorkerOutput) {
        let Some(report) = &worker.stream.report else {
            self.workers.push(WorkerRecord {
                role: worker.role,
                pid: worker.pid,
                setup: Default::default(),
                hygiene: Default::default(),
                counters: Default::default(),
                exit: worker.exit.clone(),
                error: Some("the worker left no report".to_string()),
            });
            return;
        };
        for (name, extra) in &report.series {
            let key = SeriesKey::Rt(*name);
            let histogram = self.totals.entry(key).or_insert_with(new_histogram);
            self.series.insert(
                key,
                SeriesResult {
                    summary: rtsoak_analysis::stats::summarise(histogram, &extra.stats),
                    histogram: encode_stored(key, histogram),
                    outliers: extra.outliers.clone(),
                    outliers_dropped: extra.outliers_dropped,
                    outliers_complete_over_ns: Some(extra.outliers_complete_over_ns),
                },
            );
        }
        if worker.role == Role::Subscriber {
            self.ring_setup = report.setup.ring_setup;
            self.attribution = report.attribution;
        }
        self.workers.push(WorkerRecord {
            role: worker.role,
            pid: report.pid,
            setup: report.setup.clone(),
            hygiene: report.hygiene,
            counters: report.counters,
            exit: worker.exit.clone(),
            error: report.error.clone(),
        });
    }

    /// A series whose worker died before its final report still has its intervals: its
    /// figures come from them, with no outliers kept.
    fn summarise_unreported(&mut self) {
        for (&key, histogram) in &self.totals {
            self.series.entry(key).or_insert_with(|| SeriesResult {
                summary: rtsoak_analysis::stats::summarise(
                    histogram,
                    &stats_from_intervals(&self.intervals, key),
                ),
                histogram: encode_stored(key, histogram),
                outliers: Vec::new(),
                outliers_dropped: 0,
                outliers_complete_over_ns: None,
            });
        }
    }
}

/// A series' run-wide histogram as the result stores it: at three significant digits for the
/// headline series, at two for the rest ([`SeriesKey::is_headline`]).
fn encode_stored(key: SeriesKey, histogram: &Histogram<u64>) -> String {
    if key.is_headline() {
        encode_histogram(histogram)
    } else {
        encode_histogram(&coarse_copy(histogram))
    }
}

/// The queue noise's series, folded over its processes already, beside the RT pair's.
fn add_noise_series(
    series: &mut BTreeMap<SeriesKey, SeriesResult>,
    noise: &BTreeMap<SeriesKey, (Histogram<u64>, SampleStats)>,
) {
    for (&key, (histogram, stats)) in noise {
        series.insert(
            key,
            SeriesResult {
                summary: rtsoak_analysis::stats::summarise(histogram, stats),
                histogram: encode_stored(key, histogram),
                outliers: Vec::new(),
                outliers_dropped: 0,
                outliers_complete_over_ns: None,
            },
        );
    }
}

/// Remove the own-wake series from the run's figures and from every interval.
fn drop_own_wake(
    series: &mut BTreeMap<SeriesKey, SeriesResult>,
    intervals: &mut BTreeMap<u32, Interval>,
) {
    let own_wake = SeriesKey::Rt(Series::OwnWake);
    series.remove(&own_wake);
    for interval in intervals.values_mut() {
        interval.series.remove(&own_wake);
    }
}

/// The break event whose marker is in the trace buffer (the first to fire: tracing is off
/// after it), else the earliest sample.
fn workers_break_event(workers: &[WorkerOutput]) -> Option<rtsoak_record::BreakEvent> {
    workers
        .iter()
        .filter_map(|w| w.stream.report.as_ref()?.break_event)
        .min_by_key(|event| (!event.marker_written, event.at_ns))
}

fn stats_from_intervals(intervals: &BTreeMap<u32, Interval>, key: SeriesKey) -> SampleStats {
    let mut stats = SampleStats::default();
    for interval in intervals.values() {
        if let Some(s) = interval.series.get(&key) {
            stats.merge(&s.stats);
        }
    }
    stats
}

/// Reconcile the publisher's count with what the subscriber saw.
fn integrity(workers: &[WorkerRecord], attribution: Attribution) -> Integrity {
    let publisher = workers.iter().find(|w| w.role == Role::Publisher);
    let subscriber = workers.iter().find(|w| w.role == Role::Subscriber);
    let p = publisher.map(|p| p.counters).unwrap_or_default();
    let sent = p.messages;
    let from_publisher = Integrity {
        sent,
        lost: sent,
        planned_periods: p.planned_periods,
        missed_periods: p.missed_periods,
        wake_errors: p.wake_errors,
        ..Default::default()
    };
    let Some(subscriber) = subscriber else {
        return from_publisher;
    };
    let c = &subscriber.counters;
    let attributable = attribution.attributable();
    Integrity {
        delivered: c.messages,
        lost: sent.saturating_sub(c.messages),
        late: c.late,
        overrun: c.overrun,
        duplicated: c.duplicated,
        reordered: c.reordered,
        cqe_errors: c.cqe_errors,
        fallback_deliveries: c.fallback_deliveries,
        own_wake: attribution,
        own_wakes: attributable.then_some(c.own_wakes),
        wakes_missing: (attribution == Attribution::Exact).then_some(c.wakes_missing),
        piggybacked: attributable.then_some(c.piggybacked),
        ..from_publisher
    }
}
