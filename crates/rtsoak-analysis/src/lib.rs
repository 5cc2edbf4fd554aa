//! rtsoak's analysis: pure functions of records. What a run's samples say (histograms and exact
//! counters, [`stats`]), what lies beyond them (extreme-value tail estimates, [`tail`]), why
//! each spike happened (the kernel trace walked into the RT tasks' waits and each outlier laid
//! over them, [`explain`]), a transport's rounds merged and a long run's intervals thinned
//! ([`merge`], [`coarsen`]), whether a record's figures agree with each other enough to be shown
//! ([`consistent`]), and what it all is worth ([`judge`]: caveats, the verdict, the
//! decision, the baseline diff, the floor ratios), with the microbenchmarks' A/B/A arithmetic
//! ([`mod@bench`]) and kernel campaigns' records and judgement across boots ([`campaign`]).
//!
//! Owns: every figure and judgement derived from records, deterministically (every random draw
//! is seeded, so re-rendering a saved result repeats it). Never reads or writes a file, reads
//! the clock or the system, makes a system call or prints: what it returns is recorded in the
//! result or worded by the report crate.

#![forbid(unsafe_code)]
// A function a reader can hold in their head: at most 100 lines (clippy.toml), product code
// only (`tests/architecture.rs` refuses an `allow` that would let one through).
#![cfg_attr(not(test), deny(clippy::too_many_lines))]

pub mod stats;

pub mod tail;

pub mod explain;

pub mod merge;

pub mod coarsen;

pub mod consistent;

pub mod judge;

pub mod bench;

pub mod campaign;
