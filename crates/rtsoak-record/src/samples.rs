//! The exact counters of a series and the samples kept over its threshold.

use serde::{Deserialize, Serialize};

/// Exact counters of one series over one span (an interval or a whole run). HDR histograms
/// round a value to its bucket; these do not, so the headline "longest" and "over threshold"
/// are the samples' own values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SampleStats {
    /// Samples recorded.
    pub count: u64,
    /// Smallest sample, ns (0 when `count` is 0).
    pub min_ns: u64,
    /// Largest sample, ns.
    pub max_ns: u64,
    /// Samples strictly above the threshold.
    pub over_threshold: u64,
}

impl SampleStats {
    /// Account for one sample.
    #[inline]
    pub fn add(&mut self, value_ns: u64, threshold_ns: u64) {
        if self.count == 0 || value_ns < self.min_ns {
            self.min_ns = value_ns;
        }
        self.max_ns = self.max_ns.max(value_ns);
        self.count += 1;
        self.over_threshold += u64::from(value_ns > threshold_ns);
    }

    /// Combine two spans. Counts add saturating: spans of a result read from a file may hold
    /// anything, and a sum that wrapped would read as few samples.
    pub fn merge(&mut self, other: &SampleStats) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 || other.min_ns < self.min_ns {
            self.min_ns = other.min_ns;
        }
        self.max_ns = self.max_ns.max(other.max_ns);
        self.count = self.count.saturating_add(other.count);
        self.over_threshold = self.over_threshold.saturating_add(other.over_threshold);
    }
}

/// One sample over the threshold and when it happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outlier {
    /// Time of the sample since the start of the measured phase, ns.
    pub at_ns: u64,
    /// The sample, ns.
    pub value_ns: u64,
}
