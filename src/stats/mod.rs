//! Latency statistics: HDR histograms in nanoseconds, exact per-histogram counters, bounded
//! outlier lists, sequence integrity, and the summaries derived from them.
//!
//! Everything a measuring loop touches here ([`Recorder::record`], [`SeqTracker::observe`]) is
//! allocation-free once constructed. Summaries and encodings are computed after the loop.

mod encode;
mod histogram;
mod integrity;
pub mod rate_test;
mod summary;

pub use encode::{decode_histogram, encode_histogram};
pub use histogram::{
    HIGHEST_NS, Outlier, Recorder, SIGNIFICANT_DIGITS, SampleStats, new_histogram,
    new_interval_histogram,
};
pub use integrity::{Attribution, Integrity, SeqTracker};
pub use summary::Summary;
