//! What a result records about waiting for the RT CPUs (`--wait-for-cpus`): how long it waited,
//! its place in the queue when it arrived, and whom it waited behind (`sys::cpu_lock` keeps the
//! queue).

use serde::{Deserialize, Serialize};

/// The wait for the RT CPUs of an invocation that found them held or queued for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuWait {
    /// From asking for the RT CPUs to holding them, ns.
    pub waited_ns: u64,
    /// Place in the queue on arrival: 1 when no other rtsoak was queued ahead (it waited for the
    /// holder alone), n when n - 1 were.
    pub queue_position: u32,
    /// Whom it waited behind on arrival: the runs holding its RT CPUs, then the runs queued
    /// ahead of it, first in the queue first.
    pub waited_behind: Vec<CpuHolder>,
}

/// One process holding or queued for some of a run's RT CPUs, as the kernel named it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuHolder {
    /// Holding the CPUs, or queued for them ahead.
    pub role: CpuHolderRole,
    /// Which of the run's RT CPUs it holds or is queued for.
    pub cpus: Vec<usize>,
    /// Its pid (`SO_PEERCRED`); null where the kernel could not say (another PID namespace, or
    /// its socket's connection queue full).
    pub pid: Option<u32>,
    /// Its uid; null with the pid.
    pub uid: Option<u32>,
    /// Its `/proc/PID/cmdline` (its `comm` where that is empty), escaped, cut at 200 bytes;
    /// null where it could not be read.
    pub command: Option<String>,
}

/// What a [`CpuHolder`] is to the run that waited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CpuHolderRole {
    /// It held the CPUs' locks: a run in progress.
    Holding,
    /// It was queued for them ahead.
    Queued,
}
