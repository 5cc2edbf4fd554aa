//! UNMERGED KERNEL ABIs. Everything here is an assumption about kernel patches that are not in
//! mainline: the io_uring persistent futex wait with registered wakes (patch 2 of the RFC
//! "io_uring: futex wakeups that a preempted lower-priority task cannot delay", io-uring list,
//! 2026-10-22), and the
//! `IORING_MSG_DOORBELL` prototype. Every constant and field rtsoak assumes is in these files,
//! with its default; every one can be overridden from a profile's `[abi.*]` sections for another
//! patch revision (see `profiles/README.md`). On a kernel without the patch the transports'
//! probes fail with the exact call and errno, and comparisons skip them.
//!
//! The defaults are deliberately outside the ranges mainline uses today (register opcodes
//! above `IORING_REGISTER_LAST`), so that a default can never alias a mainline operation: on a
//! patched kernel, set the values of that patch.

#![forbid(unsafe_code)]

pub mod doorbell;
pub mod persistent_futex;
pub mod sqe;

use serde::{Deserialize, Serialize};

/// The assumed ABIs: the profile's `[abi]` section, copied into every plan and worker spec.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PatchedAbi {
    /// `[abi.persistent-futex]`.
    #[serde(alias = "persistent-futex")]
    pub persistent_futex: persistent_futex::Abi,
    /// `[abi.doorbell]`.
    pub doorbell: doorbell::Abi,
}
