//! What the coordinator itself did on the RT pair's CPUs while a run measured: the harness's
//! own share of those CPUs, so a reader can tell it from the transport's.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The coordinator's wakeups during one run's measured phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoordinatorActivity {
    /// Its longest sleep between two wakeups, signals apart, ns: 10 ms with a CPU of its own
    /// or queue noise to replace; up to 1 s otherwise (and a floor run is not woken at all).
    pub tick_ns: u64,
    /// Whether it shared the RT CPUs, and so placed its wakeups 30 % into a period, away from
    /// the RT pair's.
    pub phase_locked: bool,
    /// Its wakeups on each RT CPU (by CPU number) per second of the measured phase: 0 where it
    /// had a CPU of its own.
    pub wakeups_per_s_on_rt_cpus: BTreeMap<usize, f64>,
}
