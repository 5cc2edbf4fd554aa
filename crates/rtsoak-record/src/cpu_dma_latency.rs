//! What a result records about the `/dev/cpu_dma_latency` request held for an invocation
//! (`sys::cpu_dma_latency` holds it).

use serde::{Deserialize, Serialize};

/// What was held on `/dev/cpu_dma_latency`, or why nothing was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuDmaLatency {
    /// The file.
    pub path: String,
    /// True if the plan asked for the hold (`system.hold_cpu_dma_latency`).
    pub requested: bool,
    /// The value held for the whole invocation, in microseconds, if it was held.
    pub held_us: Option<i32>,
    /// Why it was not held: not requested, file missing, permission denied, or the error.
    pub not_held_because: Option<String>,
}
