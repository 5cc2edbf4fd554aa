//! The resolved plan of an invocation: every knob decided, every CPU chosen, all times in
//! nanoseconds. Built once by `profile::resolve` from a profile, the command-line overrides and
//! the machine's CPU topology; copied verbatim into every result so a figure can always be
//! traced back to the exact conditions it was measured under.
//!
//! Nothing here reads the system or validates input: by the time a `RunPlan` exists, it is valid.

use serde::{Deserialize, Serialize};

/// Scheduling policy of a worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Policy {
    /// `SCHED_FIFO`: run until blocked or preempted by a higher priority.
    Fifo,
    /// `SCHED_RR`: FIFO with a time slice among equal priorities.
    Rr,
    /// `SCHED_OTHER`: the fair scheduler; priority is ignored.
    Other,
}

impl Policy {
    /// True for the real-time policies, which take a priority in 1..=99.
    pub fn is_realtime(self) -> bool {
        matches!(self, Policy::Fifo | Policy::Rr)
    }

    /// The name as `chrt` and the profile write it.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Fifo => "fifo",
            Policy::Rr => "rr",
            Policy::Other => "other",
        }
    }
}

/// Setup flags of the subscriber's io_uring (and of the publisher's, where it has one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RingSetup {
    /// `IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN` (Linux 6.1): completions are
    /// run by the ring's own task when it waits; falls back to `coop-taskrun` where refused.
    DeferTaskrun,
    /// `IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG` (Linux 5.19).
    CoopTaskrun,
    /// No setup flags.
    None,
}

impl RingSetup {
    /// The profile and result spelling.
    pub fn name(self) -> &'static str {
        match self {
            RingSetup::DeferTaskrun => "defer-taskrun",
            RingSetup::CoopTaskrun => "coop-taskrun",
            RingSetup::None => "none",
        }
    }
}

/// How the `futex` transport's publisher issues its wake.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FutexWake {
    /// `futex(2)` `FUTEX_WAKE` (shared, not private: the word lives in a memfd mapping).
    Syscall,
    /// `IORING_OP_FUTEX_WAKE` submitted from the publisher's own ring.
    IoUring,
}

/// Where and how the real-time pair runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RtPlan {
    /// CPU of the RT publisher.
    pub publisher_cpu: usize,
    /// CPU of the RT subscriber's event loop.
    pub subscriber_cpu: usize,
    /// Scheduling policy of both RT workers.
    pub policy: Policy,
    /// Priority of the RT publisher (1..=99 for real-time policies, 0 for `other`).
    pub publisher_priority: u8,
    /// Priority of the RT subscriber.
    pub subscriber_priority: u8,
}

/// A fully resolved invocation. Every duration is in nanoseconds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunPlan {
    /// Name of the profile it came from (`default`, `ci`, or a file path).
    pub profile: String,
    /// Transports to run, in order (registry names such as `msg-ring`).
    pub transports: Vec<String>,
    /// Measured time per run, after warm-up.
    pub duration_ns: u64,
    /// Time per run whose samples are discarded, before the measured time.
    pub warmup_ns: u64,
    /// Publisher period.
    pub period_ns: u64,
    /// Samples above this are counted as over threshold and kept in the outlier list.
    pub threshold_ns: u64,
    /// Length of one per-interval histogram.
    pub interval_ns: u64,
    /// A message not seen by a subscriber this long after it was sent is counted lost.
    pub delivery_timeout_ns: u64,
    /// Capacity of each over-threshold sample list (the count is kept beyond it).
    pub outliers_max: u32,
    /// The real-time pair.
    pub rt: RtPlan,
    /// CPUs for noise (later issues) and for the coordinator.
    pub noise_cpus: Vec<usize>,
    /// Subscriber ring setup flags as requested.
    pub ring_setup: RingSetup,
    /// How the `futex` transport wakes.
    pub futex_wake: FutexWake,
    /// Things about the layout a reader of the result must know (for example "noise shares
    /// CPU 1 with the RT subscriber: only 2 CPUs online").
    pub layout_notes: Vec<String>,
    /// Hold `/dev/cpu_dma_latency` at 0 during the runs (`system.hold_cpu_dma_latency`).
    /// Results written before this key existed read as `false`: they held nothing.
    #[serde(default)]
    pub hold_cpu_dma_latency: bool,
}

impl RunPlan {
    /// Number of periods the publisher runs in the measured phase.
    pub fn measured_periods(&self) -> u64 {
        self.duration_ns / self.period_ns
    }

    /// Number of warm-up periods before the measured phase.
    pub fn warmup_periods(&self) -> u64 {
        self.warmup_ns / self.period_ns
    }
}
