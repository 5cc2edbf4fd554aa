//! `rtsoak bench`: per-operation microbenchmarks for kernel regression work (seeds 000, 001,
//! 004) and their A/B/A comparison.
//!
//! The round machinery (warm-up rounds, then measured rounds, each running a fixed number of
//! cycles of one [`Workload`] between two clock reads) is in `rounds.rs`, the per-round checks
//! in `checks.rs`. A workload file owns only what one cycle submits and how its completions are
//! validated.
//!
//! Must never: allocate, log or format between the two clock reads of a round (a cycle records
//! into a [`Tally`] of plain counters); judge a comparison (that is [`compare`]); print.

#![forbid(unsafe_code)]

pub mod args;
pub mod checks;
pub mod compare;
pub mod doc;
pub mod eventfd;
pub mod futex_syscall;
pub mod futex_wait_wake;
pub mod futex_waitv;
pub mod msg_ring;
mod ring;
mod rounds;
pub mod summary;
mod words;

pub use checks::{Checks, Tally};
pub use doc::{BenchConfig, BenchDoc, BenchSeries, Round};
pub use rounds::{
    COMPLETION_TIMEOUT_NS, RawRound, RoundPlan, Workload, describe_rounds, run_round, run_rounds,
};

/// Every benchmark, in the order `--help` lists them.
pub const BENCHES: [&str; 5] = [
    "futex-wait-wake",
    "futex-waitv",
    "futex-syscall",
    "msg-ring",
    "eventfd",
];
