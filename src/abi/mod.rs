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

/// Byte offsets of the `struct io_uring_sqe` fields the encodings use (include/uapi/linux/
/// io_uring.h; stable mainline ABI).
pub mod sqe {
    /// `__u8 opcode`.
    pub const OPCODE: usize = 0;
    /// `__s32 fd`.
    pub const FD: usize = 4;
    /// `__u64 off` / `addr2`.
    pub const OFF: usize = 8;
    /// `__u64 addr`.
    pub const ADDR: usize = 16;
    /// `__u32 len`.
    pub const LEN: usize = 24;
    /// The per-opcode flags word (`futex_flags`, `msg_ring_flags`, ...).
    pub const OP_FLAGS: usize = 28;
    /// `__u64 user_data`.
    pub const USER_DATA: usize = 32;
    /// `__u64 addr3`.
    pub const ADDR3: usize = 48;
}

pub use crate::sys::uring::{sqe_bytes, sqe_from_bytes};

/// Read a little/native-endian integer field of an SQE.
pub fn field_u64(bytes: &[u8; 64], offset: usize) -> u64 {
    u64::from_ne_bytes(bytes[offset..offset + 8].try_into().expect("8 bytes"))
}

/// Read a 32-bit field of an SQE.
pub fn field_u32(bytes: &[u8; 64], offset: usize) -> u32 {
    u32::from_ne_bytes(bytes[offset..offset + 4].try_into().expect("4 bytes"))
}
