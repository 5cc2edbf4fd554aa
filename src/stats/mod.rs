//! Latency statistics: HDR histograms in nanoseconds, exact per-histogram counters, bounded
//! outlier lists, sequence integrity, the summaries derived from them, and how sure those
//! figures are (exact intervals, rate tests).
//!
//! Everything a measuring loop touches here ([`Recorder::record`], [`SeqTracker::observe`]) is
//! allocation-free once constructed. Summaries and encodings are computed after the loop.

#![forbid(unsafe_code)]

mod confidence;
mod encode;
mod histogram;
mod integrity;
mod kept;

mod summary;

pub use confidence::{
    MIN_SAMPLES_BEYOND, RateInterval, clopper_pearson_95, rests_on_few_samples, samples_beyond,
};
pub use encode::{decode_histogram, encode_histogram};
pub use histogram::{
    HIGHEST_NS, INTERVAL_SIGNIFICANT_DIGITS, Outlier, Recorder, SIGNIFICANT_DIGITS, SampleStats,
    coarse_copy, new_coarse_histogram, new_histogram, new_interval_histogram,
};
pub use integrity::{Attribution, Integrity, SeqTracker};
pub use kept::Kept;
pub use summary::Summary;
