//! What crosses between coordinator and worker by fd: the typed [`WorkerSpec`] going in (JSON in
//! a sealed memfd the worker inherits as [`SPEC_FD`]), and what comes out: interval frames
//! through a frame ring the worker inherits as [`FRAMES_FD`], and the final [`WorkerReport`] in
//! a memfd it inherits as [`REPORT_FD`]. Shared live state is in `region`.
//!
//! Interval frames are shipped while the worker runs, one per series and finished interval
//! (so a worker that dies mid-run still leaves its finished intervals behind), by copying them
//! into the pre-sized ring: no allocation, no syscall, no waiting. The final report is written
//! after the loop.

#![forbid(unsafe_code)]

pub mod frame;
pub mod ring;
mod stream;

use serde::{Deserialize, Serialize};

pub use frame::IntervalFrame;
pub use stream::{Frames, ReportStream, ReportWriter, parse_report, read_report, write_report};

use crate::record::{
    BurstReport, Counters, Hygiene, LoadCount, Policy, RingSetup, Role, RtSetup, Series,
};
use crate::stats::{Outlier, Recorder, SampleStats};

/// The worker's spec memfd.
pub const SPEC_FD: i32 = 3;
/// The shared region memfd.
pub const REGION_FD: i32 = 4;
/// The report memfd. Tests find a worker by this fd's name (`rtsoak-report-SLOT`).
pub const REPORT_FD: i32 = 5;
/// The frame ring's memfd.
pub const FRAMES_FD: i32 = 6;

/// Everything a worker needs, typed. Times in ns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerSpec {
    /// What to do.
    pub role: Role,
    /// Index into the region's worker slots.
    pub slot: usize,
    /// Subscribers: index into the region's membership table.
    pub member: usize,
    /// Publishers: the id stamped on every message. Subscribers: the id of the publisher whose
    /// messages are measured and checked for integrity (the RT publisher's).
    pub publisher_id: u32,
    /// The transport.
    pub transport: crate::transport::Name,
    /// CPUs to pin to.
    pub cpus: Vec<usize>,
    /// Scheduling policy.
    pub policy: Policy,
    /// Priority for real-time policies.
    pub priority: u8,
    /// Publisher period.
    pub period_ns: u64,
    /// Warm-up periods before the measured ones.
    pub warmup_periods: u64,
    /// Measured periods.
    pub measured_periods: u64,
    /// Over-threshold limit.
    pub threshold_ns: u64,
    /// Interval histogram length.
    pub interval_ns: u64,
    /// A message unseen for this long is lost.
    pub delivery_timeout_ns: u64,
    /// Outlier list capacity per series.
    pub outliers_max: u32,
    /// Requested ring setup.
    pub ring_setup: RingSetup,
    /// Every transport's own settings, as the plan resolved them.
    pub transport_settings: crate::transport::Settings,
    /// The coordinator's pid (to die with it, and to grant it fd access).
    pub coordinator_pid: i32,
    /// Queue noise: how long this process lives, ns (0: until the run stops).
    pub lifetime_ns: u64,
    /// Whether to `mlockall` (the RT pair does; noise does not need to).
    pub lock_memory: bool,
    /// Burst workers: what to run.
    pub bursts: Option<crate::plan::BurstPlan>,
    /// Load workers: what to run.
    pub load: Option<crate::plan::LoadPlan>,
    /// Load workers: where the file writers may write (the result directory).
    pub scratch_dir: Option<std::path::PathBuf>,
    /// Assumed constants of unmerged kernel patches.
    pub abi: crate::abi::PatchedAbi,
    /// `--break-on`: a send call or delivery longer than this writes an ftrace marker, stops
    /// tracing and (unless `break_on_continue`) stops the run. `None`: off.
    #[serde(default)]
    pub break_on_ns: Option<u64>,
    /// `--break-on-continue`: carry on after the break.
    #[serde(default)]
    pub break_on_continue: bool,
    /// The tracefs directory the coordinator found (`/sys/kernel/tracing`), for `break_on_ns`.
    #[serde(default)]
    pub tracefs_dir: Option<std::path::PathBuf>,
    /// Noise publishers wake the RT subscriber too (`noise.queue.wake_rt_subscriber`): the RT
    /// subscriber then waits for their wakes as well, and noise publishers include it.
    pub noise_wakes_rt_subscriber: bool,
    /// A fault to inject (tests only).
    pub inject_fault: Option<crate::plan::Fault>,
}

/// The subscriber's longest single wait: it looks at the queue at least this often even when no
/// wakeup comes (its fallback poll).
const MAX_POLL_NS: u64 = 100_000_000;

impl WorkerSpec {
    /// How long the subscriber waits at most before it looks at the queue without a wakeup: a
    /// quarter of the delivery timeout, at most 100 ms, so that a message whose wakeup never
    /// came is seen well within the timeout.
    pub fn poll_ns(&self) -> u64 {
        (self.delivery_timeout_ns / 4).min(MAX_POLL_NS)
    }
}

/// One latency series' whole-run extras (its histograms arrive as interval frames).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeriesReport {
    /// Exact counters over the measured phase.
    pub stats: SampleStats,
    /// Over-threshold samples, in time order, at most `outliers_max`.
    pub outliers: Vec<Outlier>,
    /// Over-threshold samples that did not fit in `outliers`.
    pub outliers_dropped: u64,
}

impl SeriesReport {
    /// Take the extras out of a recorder after the loop.
    pub fn from_recorder(recorder: &Recorder) -> Self {
        let (outliers, dropped) = recorder.outliers();
        SeriesReport {
            stats: recorder.total_stats,
            outliers: outliers.to_vec(),
            outliers_dropped: dropped,
        }
    }
}

/// The final report of a worker.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkerReport {
    /// Process id.
    pub pid: i32,
    /// What it achieved in becoming real-time.
    pub setup: RtSetup,
    /// Resource usage over the measured phase.
    pub hygiene: Hygiene,
    /// Counters.
    pub counters: Counters,
    /// Latency series by name (`send_call`, `fanout`, `timer`, `delivery`, ...).
    pub series: Vec<(Series, SeriesReport)>,
    /// Burst worker: what it did.
    pub bursts: Option<BurstReport>,
    /// Burst worker: what each burst thread got, as it recorded itself. Each thread pins itself
    /// to its one CPU and takes its own policy, so `setup` (the worker's thread that only waits
    /// for them) does not say what the bursts ran with.
    #[serde(default)]
    pub thread_setups: Vec<RtSetup>,
    /// Load worker: what each generator did, by name.
    pub load: std::collections::BTreeMap<String, LoadCount>,
    /// Why the worker stopped early, if it did.
    pub error: Option<String>,
    /// The sample that crossed `--break-on`, if one did.
    #[serde(default)]
    pub break_event: Option<crate::record::BreakEvent>,
    /// Subscribers: how far own wakes could be told apart (the waiter's).
    #[serde(default)]
    pub attribution: crate::stats::Attribution,
}
