//! Latency statistics: HDR histograms in nanoseconds, exact per-histogram counters, bounded
//! outlier lists, sequence integrity, the summaries derived from them, and how sure those
//! figures are (exact intervals, rate tests).
//!
//! Everything a measuring loop touches here ([`Recorder::record`], [`SeqTracker::observe`]) is
//! allocation-free once constructed. Summaries and encodings are computed after the loop.

mod confidence;
mod encode;
mod histogram;
mod seq;
mod summarise;

pub use confidence::{clopper_pearson_95, rests_on_few_samples};
pub use encode::{decode_histogram, encode_histogram};
pub(crate) use histogram::new_coarse_histogram;
pub use histogram::{HIGHEST_NS, Recorder, coarse_copy, new_histogram, new_interval_histogram};
pub use seq::SeqTracker;
pub use summarise::summarise;
