//! What crosses between coordinator and worker by fd: the typed [`WorkerSpec`] going in (JSON in
//! a sealed memfd the worker inherits as [`SPEC_FD`]), and what comes out: interval frames
//! through a frame ring the worker inherits as [`FRAMES_FD`], and the final [`WorkerReport`] in
//! a memfd it inherits as [`REPORT_FD`]. Shared live state is in `region`.
//!
//! Interval frames are shipped while the worker runs, one per series and finished interval
//! (so a worker that dies mid-run still leaves its finished intervals behind), by copying them
//! into the pre-sized ring: no allocation, no syscall, no waiting. The final report is written
//! after the loop.

pub mod frame;
pub mod ring;
mod stream;

use serde::{Deserialize, Serialize};

pub use frame::IntervalFrame;
pub use stream::{Frames, ReportStream, ReportWriter, parse_report, read_report, write_report};

use crate::plan::{FutexWake, Policy, RingSetup};
use crate::stats::{Outlier, Recorder, SampleStats};

/// The worker's spec memfd.
pub const SPEC_FD: i32 = 3;
/// The shared region memfd.
pub const REGION_FD: i32 = 4;
/// The report memfd. Tests find a worker by this fd's name (`rtsoak-report-SLOT`).
pub const REPORT_FD: i32 = 5;
/// The frame ring's memfd.
pub const FRAMES_FD: i32 = 6;

/// What a worker does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// The real-time publisher: periodic publish and timed send call.
    Publisher,
    /// The real-time subscriber's io_uring event loop.
    Subscriber,
    /// A lower-priority publisher on the same queue and transport objects; lives a while.
    NoisePublisher,
    /// A lower-priority subscriber on the same queue and transport objects; lives a while.
    NoiseSubscriber,
    /// Real-time busy bursts, one thread per noise CPU.
    Burst,
    /// System and interrupt load generators.
    Load,
}

impl Role {
    /// True for the queue-noise roles, which live for `lifetime_ns` and are not measured as the
    /// RT pair is.
    pub fn is_queue_noise(self) -> bool {
        matches!(self, Role::NoisePublisher | Role::NoiseSubscriber)
    }

    /// The name used in results and messages.
    pub fn name(self) -> &'static str {
        match self {
            Role::Publisher => "RT publisher",
            Role::Subscriber => "RT subscriber",
            Role::NoisePublisher => "noise publisher",
            Role::NoiseSubscriber => "noise subscriber",
            Role::Burst => "burst",
            Role::Load => "load",
        }
    }
}

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
    /// Registry name of the transport.
    pub transport: String,
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
    /// How the futex transport wakes.
    pub futex_wake: FutexWake,
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

/// What a worker achieved in becoming real-time. Recorded by the worker itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RtSetup {
    /// CPUs it was asked to run on.
    pub cpus_requested: Vec<usize>,
    /// CPUs its affinity mask held after pinning.
    pub cpus_allowed: Vec<usize>,
    /// CPUs it was seen running on during the measured loop (sampled every interval).
    pub cpus_observed: Vec<usize>,
    /// Policy requested (`fifo`, `rr`, `other`).
    pub policy_requested: String,
    /// Priority requested.
    pub priority_requested: u8,
    /// Policy the kernel reported after setup.
    pub policy: String,
    /// Priority the kernel reported after setup.
    pub priority: u8,
    /// Why the requested policy could not be taken, if it could not.
    pub policy_error: Option<String>,
    /// Whether everything mapped at the end of setup was locked (`mlockall(MCL_CURRENT)`).
    pub memory_locked: bool,
    /// Whether later mappings were locked too (`MCL_FUTURE`): only where `RLIMIT_MEMLOCK`
    /// leaves room, since a later mapping past the limit would fail. (Results written before
    /// this field always asked for both.)
    #[serde(default = "yes")]
    pub memory_locked_future: bool,
    /// What was not locked and why, with what to do.
    pub memory_lock_error: Option<String>,
    /// Bytes locked at the end of setup (`VmLck`): everything mapped, part of it where the
    /// limit allows no more, or 0. (`None` in results written before this field.)
    #[serde(default)]
    pub memory_locked_bytes: Option<u64>,
    /// Ring setup flags the worker's ring really has (after any fallback).
    pub ring_setup: Option<RingSetup>,
    /// Subscribers of `signalfd` and `eventfd`: how the ring waits on the fd, found by a trial
    /// read (`read`, or `poll+read` where io_uring cannot hold the read without an io-wq
    /// worker thread). `None` for the other transports, which have one way to wait.
    #[serde(default)]
    pub wait: Option<crate::transport::FdWait>,
}

fn yes() -> bool {
    true
}

/// Resource usage over the measured phase (differences, except the peak).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hygiene {
    /// Minor page faults during the measured phase (should be 0).
    pub minor_faults: u64,
    /// Major page faults during the measured phase (should be 0).
    pub major_faults: u64,
    /// Voluntary context switches during the measured phase.
    pub voluntary_switches: u64,
    /// Involuntary context switches (preemptions) during the measured phase.
    pub involuntary_switches: u64,
    /// Peak resident set size of the process, bytes.
    pub peak_rss_bytes: u64,
    /// Heap allocations during the measured phase (should be 0: the loops allocate nothing).
    #[serde(default)]
    pub allocations: u64,
    /// The most io-wq worker threads (`iou-wrk-*`) the process had, read after setup and right
    /// after the measuring loop while its last wait was still armed (should be 0: an io-wq
    /// worker in a measured path is a thread hop nobody chose). `None`: not checked (`/proc`
    /// unreadable, or a result written before it was).
    #[serde(default)]
    pub io_wq_workers: Option<u64>,
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

/// Counters a worker keeps besides its latency series.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    /// Publisher: measured messages sent. Subscriber: measured RT messages delivered in time.
    pub messages: u64,
    /// Publisher: warm-up messages sent.
    pub warmup_messages: u64,
    /// Publisher: measured periods planned (its lifetime's periods for a noise publisher).
    #[serde(default)]
    pub planned_periods: u64,
    /// Publisher: measured periods whose deadline had passed before the previous one finished;
    /// skipped and counted.
    pub missed_periods: u64,
    /// Publisher: warm-up periods skipped the same way.
    #[serde(default)]
    pub warmup_missed_periods: u64,
    /// Publisher: wake calls that failed (errno counted, the run goes on).
    pub wake_errors: u64,
    /// Publisher: membership refreshes (outside the timed section).
    pub member_refreshes: u64,
    /// Subscriber: wakeups of the event loop by the transport.
    pub wakeups: u64,
    /// Subscriber: wakeups that found no new message (coalesced or spurious).
    pub empty_wakeups: u64,
    /// Subscriber: wait timeouts (no wakeup within the poll interval).
    pub wait_timeouts: u64,
    /// Subscriber: completions with an unexpected error result.
    pub cqe_errors: u64,
    /// Subscriber: wakeups not sent by the run's own publishers (ignored).
    pub foreign_wakeups: u64,
    /// RT subscriber: wakes it could tell were the RT publisher's own, warm-up included.
    #[serde(default)]
    pub own_wakes: u64,
    /// RT subscriber: wakeups by the run's publishers that were not the RT publisher's own
    /// (noise publishers' wakes, a futex re-arm that found the word moved); meaningful only
    /// where own wakes are told apart.
    #[serde(default)]
    pub other_wakeups: u64,
    /// RT subscriber (exact attribution): RT publisher wakes, warm-up included, that never
    /// arrived.
    #[serde(default)]
    pub wakes_missing: u64,
    /// RT subscriber: measured RT messages first seen through another wakeup or the fallback
    /// poll.
    #[serde(default)]
    pub piggybacked: u64,
    /// RT subscriber: measured RT messages first seen after a wait that ended with no
    /// completion at all (the fallback poll).
    #[serde(default)]
    pub fallback_deliveries: u64,
    /// Subscriber: RT messages seen only after the delivery timeout.
    pub late: u64,
    /// Subscriber: RT messages overwritten in the queue before being read.
    pub overrun: u64,
    /// Subscriber: RT messages seen twice.
    pub duplicated: u64,
    /// Subscriber: RT messages seen after a later one.
    pub reordered: u64,
    /// Subscriber: messages from other (noise) publishers delivered.
    pub other_messages: u64,
    /// Publisher: wake calls that failed because the target had just left the queue (a
    /// membership race, not an error).
    pub departed_wakes: u64,
    /// Noise subscriber: messages published while it was a member that it never received.
    pub member_misses: u64,
}

/// What a burst worker did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct BurstReport {
    /// Busy threads (one per noise CPU).
    pub threads: u32,
    /// Bursts run, all threads.
    pub bursts: u64,
    /// Time spent busy, all threads, ns.
    pub busy_ns: u64,
    /// Time the threads ran (busy plus gaps), all threads, ns.
    pub elapsed_ns: u64,
    /// Longest single burst, ns.
    pub longest_ns: u64,
    /// Highest busy share of any one thread over its run, percent.
    pub max_duty_percent: f64,
    /// The cap it ran under, percent.
    pub duty_cap_percent: u8,
}

/// What one load generator did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadCount {
    /// Threads it ran.
    pub threads: u32,
    /// Operations done (see `unit`).
    pub operations: u64,
    /// What one operation is (`round trips`, `bytes`, `map-touch-unmap cycles`, ...).
    pub unit: String,
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
    pub series: Vec<(String, SeriesReport)>,
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
    pub break_event: Option<crate::result::BreakEvent>,
    /// Subscribers: how far own wakes could be told apart (the waiter's).
    #[serde(default)]
    pub attribution: crate::stats::Attribution,
}
