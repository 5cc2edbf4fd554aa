//! rtsoak, the binaries' crate: the command line ([`cli`]), one function per sub-command
//! ([`commands`]) and the exit code it ends with ([`exit`]); what to run, a profile with its
//! command-line overrides resolved into a plan ([`profile`]); the machine, what it is
//! ([`sysinfo`]) and whether a figure measured on it means what it should ([`preflight`]); and
//! the result directory ([`store`]); kernel campaigns, a fresh boot per point ([`campaign`]). `src/main.rs` and `src/bin/rtsoak-worker.rs` are
//! the two binaries.
//!
//! Owns: everything a user touches: flags, profiles, files, messages and exit codes. It hands a
//! resolved plan to `rtsoak-measure`, judges what came back with `rtsoak-analysis` and has
//! `rtsoak-report` word it; it never measures in a loop nor renders a result itself.
//! `docs/architecture.md` draws the crates.

#![forbid(unsafe_code)]
// A function a reader can hold in their head: at most 100 lines (clippy.toml), product code
// only (`tests/architecture.rs` refuses an `allow` that would let one through).
#![cfg_attr(not(test), deny(clippy::too_many_lines))]

pub mod cli;

pub mod commands;

pub mod exit;

pub mod profile;

mod sysinfo;

mod preflight;

pub mod store;

#[cfg(test)]
mod cost_tests;

// A fresh boot per point: kernels (or command lines) compared A/B/A across reboots.
pub mod campaign;
