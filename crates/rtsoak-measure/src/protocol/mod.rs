//! What crosses between coordinator and worker by fd: the typed [`WorkerSpec`] going in (what
//! every worker has and the work of its kind, in `spec`; JSON in a sealed memfd the worker
//! inherits as [`SPEC_FD`]), and what comes out: interval frames through a frame ring the
//! worker inherits as [`FRAMES_FD`], and the final [`WorkerReport`] in a memfd it inherits as
//! [`REPORT_FD`]. Shared live state is in `region`.
//!
//! Interval frames are shipped while the worker runs, one per series and finished interval
//! (so a worker that dies mid-run still leaves its finished intervals behind), by copying them
//! into the pre-sized ring: no allocation, no syscall, no waiting. The final report is written
//! after the loop.

pub(crate) mod frame;
pub(crate) mod ring;
mod spec;
mod stream;

use serde::{Deserialize, Serialize};

pub(crate) use spec::{BreakOnSpec, Life, OnThresholdSpec, QueueSpec, RtSpec, Work, WorkerSpec};
pub(crate) use stream::{Frames, ReportStream, ReportWriter, read_report, write_report};

use rtsoak_analysis::stats::Recorder;
use rtsoak_record::{BurstReport, Counters, Hygiene, LoadCount, RtSetup, Series};
use rtsoak_record::{Outlier, SampleStats};

/// The worker's spec memfd.
pub(crate) const SPEC_FD: i32 = 3;
/// The shared region memfd.
pub(crate) const REGION_FD: i32 = 4;
/// The report memfd. Tests find a worker by this fd's name (`rtsoak-report-SLOT`).
pub(crate) const REPORT_FD: i32 = 5;
/// The frame ring's memfd.
pub(crate) const FRAMES_FD: i32 = 6;
/// The write end of the coordinator's bell (`coordinator::bell`), given only to an RT worker
/// that watches `--on-threshold`: one byte on it wakes the coordinator to act on a firing.
pub(crate) const BELL_FD: i32 = 7;

/// One latency series' whole-run extras (its histograms arrive as interval frames).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SeriesReport {
    /// Exact counters over the measured phase.
    pub(crate) stats: SampleStats,
    /// Over-threshold samples, in time order, at most `outliers_max`: the largest of the run
    /// when more went over.
    pub(crate) outliers: Vec<Outlier>,
    /// Over-threshold samples that did not fit in `outliers`.
    pub(crate) outliers_dropped: u64,
    /// Every sample over this many ns is in `outliers`.
    pub(crate) outliers_complete_over_ns: u64,
}

impl SeriesReport {
    /// Take the extras out of a recorder after the loop.
    pub(crate) fn from_recorder(recorder: &Recorder) -> Self {
        let kept = recorder.outliers();
        SeriesReport {
            stats: recorder.total_stats,
            outliers: kept.outliers,
            outliers_dropped: kept.dropped,
            outliers_complete_over_ns: kept.complete_over_ns,
        }
    }
}

/// The final report of a worker.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct WorkerReport {
    /// Process id.
    pub(crate) pid: i32,
    /// What it achieved in becoming real-time.
    pub(crate) setup: RtSetup,
    /// Resource usage over the measured phase.
    pub(crate) hygiene: Hygiene,
    /// Counters.
    pub(crate) counters: Counters,
    /// Latency series by name (`send_call`, `fanout`, `timer`, `delivery`, ...).
    pub(crate) series: Vec<(Series, SeriesReport)>,
    /// Burst worker: what it did.
    pub(crate) bursts: Option<BurstReport>,
    /// Burst worker: what each burst thread got, as it recorded itself. Each thread pins itself
    /// to its one CPU and takes its own policy, so `setup` (the worker's thread that only waits
    /// for them) does not say what the bursts ran with.
    #[serde(default)]
    pub(crate) thread_setups: Vec<RtSetup>,
    /// Load worker: what each generator did, by name.
    pub(crate) load: std::collections::BTreeMap<String, LoadCount>,
    /// Why the worker stopped early, if it did.
    pub(crate) error: Option<String>,
    /// The sample that crossed `--break-on`, if one did.
    #[serde(default)]
    pub(crate) break_event: Option<rtsoak_record::BreakEvent>,
    /// Subscribers: how far own wakes could be told apart (the waiter's).
    #[serde(default)]
    pub(crate) attribution: rtsoak_record::Attribution,
}
