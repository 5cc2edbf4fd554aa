//! The spec a worker is started with: what every worker has (its role, slot, CPUs, policy), and
//! the work of its kind, each kind holding only what its loop reads. `worker::run` matches the
//! work once and hands each loop its own part, so no loop asks whether a field applies to it.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use rtsoak_record::plan::{BurstPlan, Fault, LoadPlan};
use rtsoak_record::{Policy, RingSetup, Role};

/// Everything a worker needs, typed. Times in ns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct WorkerSpec {
    /// What to do (it agrees with `work`: `launch::specs` builds both from the same role).
    pub(crate) role: Role,
    /// Index into the region's worker slots.
    pub(crate) slot: usize,
    /// CPUs to pin to.
    pub(crate) cpus: Vec<usize>,
    /// Scheduling policy.
    pub(crate) policy: Policy,
    /// Priority for real-time policies.
    pub(crate) priority: u8,
    /// The coordinator's pid (to die with it, and to grant it fd access).
    pub(crate) coordinator_pid: i32,
    /// Whether to `mlockall` (the RT pair does; noise does not need to).
    pub(crate) lock_memory: bool,
    /// The work of its kind.
    pub(crate) work: Work,
}

/// The work of one kind of worker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Work {
    /// Publishers and subscribers of the queue, the RT pair's and the queue noise's.
    Queue(QueueSpec),
    /// The floor pair (`--floor`): the RT pair's spec, run by the minimal reference loops
    /// (`worker::floor`) instead of the harness's.
    Floor(QueueSpec),
    /// The burst worker: what to run.
    Burst(BurstPlan),
    /// The load worker: what to run, and where its file writers may write (the result
    /// directory).
    Load {
        /// The generators.
        plan: LoadPlan,
        /// Where the file writers write.
        scratch_dir: PathBuf,
    },
}

/// What a publisher or subscriber of the queue needs, RT or noise.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct QueueSpec {
    /// The transport.
    pub(crate) transport: rtsoak_record::transport::Name,
    /// Subscribers: index into the region's membership table.
    pub(crate) member: usize,
    /// Publishers: the id stamped on every message. Subscribers: the id of the publisher whose
    /// messages are measured and checked for integrity (the RT publisher's).
    pub(crate) publisher_id: u32,
    /// Publisher period.
    pub(crate) period_ns: u64,
    /// Over-threshold limit.
    pub(crate) threshold_ns: u64,
    /// A message unseen for this long is lost.
    pub(crate) delivery_timeout_ns: u64,
    /// Requested ring setup.
    pub(crate) ring_setup: RingSetup,
    /// Every transport's own settings, as the plan resolved them.
    pub(crate) transport_settings: rtsoak_record::transport::Settings,
    /// Assumed constants of unmerged kernel patches.
    pub(crate) abi: rtsoak_record::abi::PatchedAbi,
    /// Noise publishers wake the RT subscriber too (`noise.queue.wake_rt_subscriber`): the RT
    /// subscriber then waits for their wakes as well, and noise publishers include it.
    pub(crate) noise_wakes_rt_subscriber: bool,
    /// Whose clock it keeps and how long it lives.
    pub(crate) life: Life,
}

/// The subscriber's longest single wait: it looks at the queue at least this often even when no
/// wakeup comes (its fallback poll).
const MAX_POLL_NS: u64 = 100_000_000;

impl QueueSpec {
    /// How long the subscriber waits at most before it looks at the queue without a wakeup: a
    /// quarter of the delivery timeout, at most 100 ms, so that a message whose wakeup never
    /// came is seen well within the timeout.
    pub(crate) fn poll_ns(&self) -> u64 {
        (self.delivery_timeout_ns / 4).min(MAX_POLL_NS)
    }

    /// The RT pair's part, or `None` for queue noise.
    pub(crate) fn rt(&self) -> Option<&RtSpec> {
        match &self.life {
            Life::Rt(rt) => Some(rt),
            Life::Noise { .. } => None,
        }
    }
}

/// How a queue worker lives: the RT pair for the run's measured periods, queue noise for its
/// own lifetime.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Life {
    /// The RT pair: on the run's clock, with what only the measured pair has.
    Rt(RtSpec),
    /// Queue noise: on its own clock from when it is born, leaving after `lifetime_ns` (drawn
    /// per process by the coordinator); one histogram per process, shipped when it exits.
    Noise {
        /// How long this process lives.
        lifetime_ns: u64,
    },
}

/// What only the RT publisher and subscriber have.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RtSpec {
    /// Warm-up periods before the measured ones.
    pub(crate) warmup_periods: u64,
    /// Measured periods.
    pub(crate) measured_periods: u64,
    /// Interval histogram length.
    pub(crate) interval_ns: u64,
    /// Outlier list capacity per series.
    pub(crate) outliers_max: u32,
    /// `--break-on`, if it is on.
    pub(crate) break_on: Option<BreakOnSpec>,
    /// `--on-threshold`, if this worker's series is watched.
    #[serde(default)]
    pub(crate) on_threshold: Option<OnThresholdSpec>,
    /// A fault to inject (tests only).
    pub(crate) inject_fault: Option<Fault>,
}

/// `--on-threshold`: a sample longer than `limit_ns` is published for the coordinator (in the
/// region's crossing slot, then a byte on the bell it inherits as `BELL_FD`), which acts on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct OnThresholdSpec {
    /// The limit.
    pub(crate) limit_ns: u64,
    /// `None`: only the first sample over it fires; `Some`: every one, at most one per this
    /// many ns.
    pub(crate) every_ns: Option<u64>,
}

/// `--break-on`: a send call or delivery longer than `limit_ns` writes an ftrace marker, stops
/// tracing and (unless `carry_on`) stops the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct BreakOnSpec {
    /// The limit.
    pub(crate) limit_ns: u64,
    /// `--break-on-continue`: carry on after the break.
    pub(crate) carry_on: bool,
    /// The tracefs directory the coordinator found (`/sys/kernel/tracing`); `None`: the break
    /// is recorded but no marker written.
    pub(crate) tracefs_dir: Option<PathBuf>,
}
