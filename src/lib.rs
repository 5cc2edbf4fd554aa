//! rtsoak: soak-test real-time wakeup latency between io_uring event loops on Linux PREEMPT_RT.
//!
//! The modules below are listed in reading order, top-down, in the order a run flows through
//! them; `docs/architecture.md` draws the map. Imports go one way only, downwards through the
//! layers (`tests/architecture.rs` checks it): nothing imports `commands`, and `record` and the
//! kernel layer (`sys`, the rtsoak-sys crate) import nothing of rtsoak's.

// `unsafe` lives in the rtsoak-sys crate and in `transport` (which allows it); every other
// module forbids it.
#![deny(unsafe_code)]
// A function a reader can hold in their head: at most 100 lines (clippy.toml), product code
// only. The few still longer carry an `allow` naming why, and only shrink.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

// The command line: parse it, run one command, map what happened to an exit code.
pub mod cli;

pub mod commands;

pub mod exit;

// What to run: a profile plus command-line overrides, resolved into a complete plan.
pub mod profile;

pub mod abi;

// The machine: what it is, and whether a figure measured on it means what it should.
pub mod sysinfo;

pub mod preflight;

// One run: the coordinator starts the workers, which measure through a transport while the
// noise runs beside them, and report over the protocol.
pub mod coordinator;

pub mod launch;

pub mod worker;

pub mod transport;

pub mod noise;

pub mod protocol;

// What a run leaves: the result, judged, rendered.
pub mod result;

// Why each spike happened, from a kernel trace of the run.
pub mod explain;

// Per-operation microbenchmarks of the same kernel mechanisms (`rtsoak bench`).
pub mod bench;

// The kernel layer (system calls, shared memory, the region and queue layouts): its own crate.
pub use rtsoak_sys as sys;
pub use rtsoak_sys::{queue, region};
