//! rtsoak's measuring: everything that runs on the machine. The coordinator ([`coordinator`])
//! starts the workers ([`launch`]), which measure through a transport ([`transport`]) while the
//! noise runs beside them ([`noise`]), and report over the wire between them ([`protocol`]);
//! what they reported becomes a run's result ([`result`]), with a kernel trace read alongside
//! to explain its spikes ([`explain`]). The worker binary's whole program is [`worker::main`].
//! Beside the soak: per-operation microbenchmarks of the same kernel mechanisms ([`mod@bench`]).
//!
//! Owns: processes, shared memory, real-time scheduling and the measuring loops, through the
//! kernel layer's safe functions (`rtsoak-sys`); turning what it measured into records, with the
//! analysis crate's arithmetic. Never reads a profile or the command line (it is handed a
//! resolved plan), judges a result or words one for a reader; a measuring loop never
//! allocates, logs or calls through a `dyn`.

#![forbid(unsafe_code)]
// A function a reader can hold in their head: at most 100 lines (clippy.toml), product code
// only (`tests/architecture.rs` refuses an `allow` that would let one through).
#![cfg_attr(not(test), deny(clippy::too_many_lines))]

pub mod coordinator;

pub mod launch;

pub mod worker;

pub mod transport;

mod abi;

mod noise;

mod protocol;

pub mod result;

pub mod explain;

pub mod bench;
