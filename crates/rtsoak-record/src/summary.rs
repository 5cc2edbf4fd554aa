//! The figures reported for one latency series, derived in one place from its histogram
//! (percentiles) and its exact counters (count, min, max, over threshold).

use serde::{Deserialize, Serialize};

/// Headline figures of one series. Percentiles are HDR values (within 0.1 %); count, min, max
/// and over-threshold are exact.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Samples.
    pub count: u64,
    /// Smallest sample, ns.
    pub min_ns: u64,
    /// Median, ns.
    pub p50_ns: u64,
    /// 90th percentile, ns.
    pub p90_ns: u64,
    /// 99th percentile, ns.
    pub p99_ns: u64,
    /// 99.9th percentile, ns.
    pub p99_9_ns: u64,
    /// 99.99th percentile, ns.
    pub p99_99_ns: u64,
    /// Largest sample, ns (exact).
    pub max_ns: u64,
    /// Samples above the threshold (exact).
    pub over_threshold: u64,
}

impl Summary {
    /// Samples over the threshold per million samples (0 for a series without samples).
    pub fn over_threshold_per_million(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.over_threshold as f64 * 1e6 / self.count as f64
        }
    }
}
