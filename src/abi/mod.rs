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

/// The raw bytes of an SQE, to patch a field the io-uring crate has no builder for and to pin
/// encodings down in tests.
pub fn sqe_bytes(entry: &io_uring::squeue::Entry) -> [u8; 64] {
    const _: () = assert!(std::mem::size_of::<io_uring::squeue::Entry>() == 64);
    // SAFETY: `squeue::Entry` is `#[repr(C)]` around the 64-byte `io_uring_sqe`, which is plain
    // integers and unions of integers: every byte is initialised (entries start zeroed).
    unsafe { std::mem::transmute_copy(entry) }
}

/// An SQE from raw bytes.
pub fn sqe_from_bytes(bytes: [u8; 64]) -> io_uring::squeue::Entry {
    // SAFETY: as in `sqe_bytes`; any 64 bytes are a valid `io_uring_sqe` bit pattern.
    unsafe { std::mem::transmute(bytes) }
}

/// Read a little/native-endian integer field of an SQE.
pub fn field_u64(bytes: &[u8; 64], offset: usize) -> u64 {
    u64::from_ne_bytes(bytes[offset..offset + 8].try_into().expect("8 bytes"))
}

/// Read a 32-bit field of an SQE.
pub fn field_u32(bytes: &[u8; 64], offset: usize) -> u32 {
    u32::from_ne_bytes(bytes[offset..offset + 4].try_into().expect("4 bytes"))
}

/// `io_uring_register(fd, opcode, arg, nr_args)` for opcodes the io-uring crate does not know.
///
/// # Safety
/// `arg` must point to `nr_args` initialised structures of the layout `opcode` expects (or be
/// null with `nr_args` 0), alive for the duration of the call.
pub unsafe fn register(
    ring_fd: i32,
    opcode: u32,
    arg: *const libc::c_void,
    nr_args: u32,
) -> Result<i32, nix::errno::Errno> {
    // SAFETY: the caller upholds this function's contract; the kernel only reads `arg`.
    let rc = unsafe { libc::syscall(libc::SYS_io_uring_register, ring_fd, opcode, arg, nr_args) };
    if rc < 0 {
        Err(nix::errno::Errno::last())
    } else {
        Ok(rc as i32)
    }
}
