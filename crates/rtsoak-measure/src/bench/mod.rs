//! `rtsoak bench`: per-operation microbenchmarks for kernel regression work (pricing one
//! io_uring futex wait/wake, waitv, MSG_RING or eventfd operation against a patched kernel) and
//! their A/B/A comparison.
//!
//! A bench is a [`Bench`] (what it is as data, its flags and how it runs; `benchmark.rs`) over a
//! [`Workload`] (what one cycle submits and how its completions are validated). The round
//! machinery (warm-up rounds, then measured rounds, each running a fixed number of cycles of
//! one workload between two clock reads) is in `rounds.rs`, the per-round checks in
//! `checks.rs`.
//!
//! Adding a bench: one file here (its [`About`], its flags, most often [`KFlag`] alone, and a
//! `run` that hands a single-thread workload to [`run_single`]), one line in the `registry!`
//! call below, which declares the file's module too (`tests/architecture.rs` checks that every
//! bench is registered), and its id in `rtsoak_record::bench::BenchName`, what its result
//! document is known by. This file is the registry only: the sub-commands, their help, the
//! dispatch, the docs test and the tests all read [`BENCHES`].
//!
//! Must never: allocate, log or format between the two clock reads of a round (a cycle records
//! into a [`Tally`](checks::Tally) of plain counters); judge a comparison (that is
//! [`compare`](rtsoak_analysis::bench::compare)); print.

// What the benches share; each bench's own file is declared by the registry below.
pub mod args;
mod benchmark;
mod checks;
mod ring;
mod rounds;
mod words;

pub use benchmark::{Bench, UsageError};

pub(crate) use benchmark::{About, KFlag, Opcode, Shape, run_single};
pub use rounds::RoundPlan;
pub(crate) use rounds::{COMPLETION_TIMEOUT_NS, RawRound, Workload, describe_rounds, run_round};

/// Declares the benches once: each one's file (`module::Type` is `mod module;`) and
/// [`BENCHES`].
macro_rules! registry {
    ($($module:ident :: $ty:ident),+ $(,)?) => {
        $(mod $module;)+

        /// Every benchmark, in the order `--help` lists them.
        pub static BENCHES: &[&dyn Bench] = &[$(&$module::$ty),+];
    };
}

registry![
    futex_wait_wake::FutexWaitWake,
    futex_waitv::FutexWaitv,
    futex_syscall::FutexSyscall,
    msg_ring::MsgRing,
    eventfd::Eventfd,
];

/// Look a bench up by its sub-command name.
pub fn by_name(name: &str) -> Option<&'static dyn Bench> {
    BENCHES.iter().copied().find(|b| b.name() == name)
}
