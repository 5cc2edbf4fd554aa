//! rtsoak: soak-test real-time wakeup latency between io_uring event loops on Linux PREEMPT_RT.
//!
//! Modules in reading order: the command line hands a profile to `profile`, which resolves it
//! into a `plan::RunPlan`; the `coordinator` starts `worker` processes that measure with
//! `stats` over a `queue` and a `transport`; their reports become a `result`, which `export`
//! renders.

// `unsafe` lives in the rtsoak-sys crate and in `transport` (which allows it); every other
// module forbids it.
#![deny(unsafe_code)]

pub use rtsoak_sys as sys;
pub use rtsoak_sys::{queue, region};

pub mod abi;
pub mod bench;
pub mod cli;
pub mod commands;
pub mod coordinator;
pub mod cpulist;
pub mod exit;
pub mod export;
pub mod judge;
pub mod launch;
pub mod noise;
pub mod plan;
pub mod preflight;
pub mod profile;
pub mod protocol;
pub mod record;
pub mod result;
pub mod stats;
pub mod sysinfo;
#[cfg(test)]
mod testing;
pub mod transport;
pub mod worker;
