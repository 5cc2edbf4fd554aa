//! The fields of a `struct io_uring_sqe` (include/uapi/linux/io_uring.h; stable mainline ABI),
//! read back so each unmerged encoding is checked field by field.

/// `__u8 opcode`.
pub(crate) const OPCODE: usize = 0;
/// `__s32 fd`.
pub(crate) const FD: usize = 4;
/// `__u64 off` / `addr2`.
pub(crate) const OFF: usize = 8;
/// `__u64 addr`.
pub(crate) const ADDR: usize = 16;
/// `__u32 len`.
pub(crate) const LEN: usize = 24;
/// The per-opcode flags word (`futex_flags`, `msg_ring_flags`, ...).
pub(crate) const OP_FLAGS: usize = 28;
/// `__u64 user_data`.
pub(crate) const USER_DATA: usize = 32;
/// `__u64 addr3`.
pub(crate) const ADDR3: usize = 48;

/// Read a native-endian 64-bit field of an SQE.
pub(crate) fn field_u64(bytes: &[u8; 64], offset: usize) -> u64 {
    u64::from_ne_bytes(bytes[offset..offset + 8].try_into().expect("8 bytes"))
}

/// Read a 32-bit field of an SQE.
pub(crate) fn field_u32(bytes: &[u8; 64], offset: usize) -> u32 {
    u32::from_ne_bytes(bytes[offset..offset + 4].try_into().expect("4 bytes"))
}
