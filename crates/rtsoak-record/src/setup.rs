//! How a worker is set up: the scheduling policy and ring setup a plan asks for, and what the
//! worker achieved in becoming real-time and how clean its measured phase stayed.

use serde::{Deserialize, Serialize};

/// Scheduling policy of a worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum Policy {
    /// `SCHED_FIFO`: run until blocked or preempted by a higher priority.
    #[cfg_attr(feature = "clap", value(help = "SCHED_FIFO"))]
    Fifo,
    /// `SCHED_RR`: FIFO with a time slice among equal priorities.
    #[cfg_attr(feature = "clap", value(help = "SCHED_RR"))]
    Rr,
    /// `SCHED_OTHER`: the fair scheduler; priority is ignored.
    #[cfg_attr(feature = "clap", value(help = "SCHED_OTHER (no real-time priority)"))]
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
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum RingSetup {
    /// `IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN` (Linux 6.1): completions are
    /// run by the ring's own task when it waits; falls back to `coop-taskrun` where refused.
    #[cfg_attr(
        feature = "clap",
        value(help = "SINGLE_ISSUER | DEFER_TASKRUN (falls back to coop-taskrun where refused)")
    )]
    DeferTaskrun,
    /// `IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG` (Linux 5.19).
    #[cfg_attr(feature = "clap", value(help = "COOP_TASKRUN | TASKRUN_FLAG"))]
    CoopTaskrun,
    /// No setup flags.
    #[cfg_attr(feature = "clap", value(help = "no setup flags"))]
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

/// How a subscriber waits for its fd to be written (recorded as `setup.wait`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FdWait {
    /// An `IORING_OP_READ` that io_uring holds by polling the fd internally.
    #[serde(rename = "read")]
    Read,
    /// A one-shot `IORING_OP_POLL_ADD`, then a non-blocking `read(2)` in the completion.
    #[serde(rename = "poll+read")]
    PollRead,
}

impl FdWait {
    /// The name in results: `read` or `poll+read`.
    pub fn name(self) -> &'static str {
        match self {
            FdWait::Read => "read",
            FdWait::PollRead => "poll+read",
        }
    }
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
    pub wait: Option<FdWait>,
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
