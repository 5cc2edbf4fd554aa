//! UNMERGED KERNEL ABI: persistent futex waits and registered wakes (patch 2 of the
//! 2026-10-22 RFC "io_uring: futex wakeups that a preempted lower-priority task cannot delay").
//!
//! What rtsoak assumes, field by field (override each in `[abi.persistent-futex]`):
//! - **Registration** (waker side, once): `io_uring_register(ring_fd, register_opcode, regs,
//!   nr)` with `regs` an array of [`FutexReg`] `{ __u64 uaddr; __u32 futex_flags; __u32 resv; }`;
//!   the futex words get slots `0..nr` in array order; returns 0.
//! - **Persistent wait** (waiter side, once): `IORING_OP_FUTEX_WAIT` encoded as mainline
//!   (`addr` = word, `fd` = futex2 flags, `addr2` = expected value, `addr3` = mask) with
//!   `wait_flag` set in the io_uring futex flags word (`sqe->futex_flags`, unused by mainline).
//!   Each wakeup posts a CQE with `res` 0 and `IORING_CQE_F_MORE` while the wait stays armed; a
//!   CQE without `F_MORE` ends it (the waiter re-arms).
//! - **Registered wake**: `IORING_OP_FUTEX_WAKE` with `wake_flag` set in `sqe->futex_flags`,
//!   `addr` = the registered slot instead of an address, `addr2` = how many to wake, `fd` =
//!   futex2 flags, `addr3` = mask; `res` = number woken.

use std::sync::atomic::AtomicU32;

use rtsoak_sys::futex::{FUTEX_BITSET_MATCH_ANY, FUTEX2_SIZE_U32};
use rtsoak_sys::uring::{Sqe, register_one};

pub(crate) use rtsoak_record::abi::persistent_futex::Abi;

/// One futex word to register (`struct io_uring_futex_reg`, assumed).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct FutexReg {
    /// The word's address.
    pub(crate) uaddr: u64,
    /// futex2 flags (`FUTEX2_SIZE_U32`; never `FUTEX2_PRIVATE` for a word shared by processes).
    pub(crate) futex_flags: u32,
    /// Must be 0.
    pub(crate) resv: u32,
}

/// Register `word` as slot 0 of `ring_fd`.
pub(crate) fn register_word(
    abi: &Abi,
    ring_fd: i32,
    word: *const u32,
) -> Result<(), nix::errno::Errno> {
    let reg = FutexReg {
        uaddr: word as u64,
        futex_flags: FUTEX2_SIZE_U32,
        resv: 0,
    };
    register_one(ring_fd, abi.register_opcode, &reg).map(drop)
}

/// The persistent wait SQE.
pub(crate) fn wait_sqe(abi: &Abi, word: &AtomicU32, expected: u32, user_data: u64) -> Sqe {
    Sqe::futex_wait_flagged(
        word,
        u64::from(expected),
        FUTEX_BITSET_MATCH_ANY,
        FUTEX2_SIZE_U32,
        abi.wait_flag,
    )
    .user_data(user_data)
}

/// The registered wake SQE: wake every waiter of slot `slot`.
pub(crate) fn wake_sqe(abi: &Abi, slot: u32, user_data: u64) -> Sqe {
    Sqe::futex_wake_slot(
        slot,
        i32::MAX as u64,
        FUTEX_BITSET_MATCH_ANY,
        FUTEX2_SIZE_U32,
        abi.wake_flag,
    )
    .user_data(user_data)
}

/// True if a persistent wait's completion says it is still armed.
pub(crate) fn still_armed(cqe_flags: u32) -> bool {
    io_uring::cqueue::more(cqe_flags)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::sqe::{self, field_u32, field_u64};

    #[test]
    fn the_persistent_wait_is_a_futex_wait_with_the_wait_flag() {
        let abi = Abi::default();
        let word = AtomicU32::new(0);
        let bytes = wait_sqe(&abi, &word, 41, 0xdead).bytes();
        assert_eq!(bytes[sqe::OPCODE], io_uring::opcode::FutexWait::CODE);
        assert_eq!(
            field_u64(&bytes, sqe::ADDR),
            word.as_ptr() as u64,
            "addr = the word"
        );
        assert_eq!(
            field_u32(&bytes, sqe::FD),
            FUTEX2_SIZE_U32,
            "fd = futex2 flags, not private"
        );
        assert_eq!(
            field_u64(&bytes, sqe::OFF),
            41,
            "addr2 = the expected value"
        );
        assert_eq!(
            field_u64(&bytes, sqe::ADDR3),
            FUTEX_BITSET_MATCH_ANY,
            "addr3 = the mask"
        );
        assert_eq!(
            field_u32(&bytes, sqe::OP_FLAGS),
            1,
            "futex_flags = the persistent bit"
        );
        assert_eq!(field_u64(&bytes, sqe::USER_DATA), 0xdead);
    }

    #[test]
    fn the_registered_wake_carries_the_slot_instead_of_an_address() {
        let abi = Abi {
            wake_flag: 1 << 5,
            ..Abi::default()
        };
        let bytes = wake_sqe(&abi, 3, 7).bytes();
        assert_eq!(bytes[sqe::OPCODE], io_uring::opcode::FutexWake::CODE);
        assert_eq!(field_u64(&bytes, sqe::ADDR), 3, "addr = slot");
        assert_eq!(
            field_u64(&bytes, sqe::OFF),
            i32::MAX as u64,
            "wake everyone"
        );
        assert_eq!(
            field_u32(&bytes, sqe::OP_FLAGS),
            1 << 5,
            "an overridden flag is used"
        );
    }

    #[test]
    fn the_registration_record_is_sixteen_bytes() {
        assert_eq!(std::mem::size_of::<FutexReg>(), 16);
        assert_eq!(std::mem::align_of::<FutexReg>(), 8);
    }

    #[test]
    fn a_kernel_without_the_patch_refuses_the_registration() {
        let (ring, _) = rtsoak_sys::uring::build(rtsoak_sys::uring::SetupFlags::None).unwrap();
        let word = std::sync::atomic::AtomicU32::new(0);
        use std::os::fd::AsRawFd;
        let result = register_word(&Abi::default(), ring.as_raw_fd(), word.as_ptr());
        assert_eq!(
            result,
            Err(nix::errno::Errno::EINVAL),
            "mainline rejects an unknown register opcode"
        );
    }
}
