//! The bytes of a `struct io_uring_sqe` (include/uapi/linux/io_uring.h; stable mainline ABI):
//! the offsets of the fields the unmerged encodings write, and (for the tests) reading a field
//! back, so each encoding can be built from a mainline SQE and checked field by field.

/// `__u8 opcode`.
#[cfg(test)]
pub(crate) const OPCODE: usize = 0;
/// `__s32 fd`.
#[cfg(test)]
pub(crate) const FD: usize = 4;
/// `__u64 off` / `addr2`.
pub(crate) const OFF: usize = 8;
/// `__u64 addr`.
pub(crate) const ADDR: usize = 16;
/// `__u32 len`.
#[cfg(test)]
pub(crate) const LEN: usize = 24;
/// The per-opcode flags word (`futex_flags`, `msg_ring_flags`, ...).
#[cfg(test)]
pub(crate) const OP_FLAGS: usize = 28;
/// `__u64 user_data`.
#[cfg(test)]
pub(crate) const USER_DATA: usize = 32;
/// `__u64 addr3`.
#[cfg(test)]
pub(crate) const ADDR3: usize = 48;

pub(super) use rtsoak_sys::uring::{sqe_bytes, sqe_from_bytes};

/// Read a little/native-endian integer field of an SQE.
#[cfg(test)]
pub(crate) fn field_u64(bytes: &[u8; 64], offset: usize) -> u64 {
    u64::from_ne_bytes(bytes[offset..offset + 8].try_into().expect("8 bytes"))
}

/// Read a 32-bit field of an SQE.
#[cfg(test)]
pub(crate) fn field_u32(bytes: &[u8; 64], offset: usize) -> u32 {
    u32::from_ne_bytes(bytes[offset..offset + 4].try_into().expect("4 bytes"))
}
