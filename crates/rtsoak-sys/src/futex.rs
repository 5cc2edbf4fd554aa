//! futex(2) and futex2 wakes. The soak's word is shared between processes (a memfd mapping), so
//! its wakes and waits are non-private: a private futex is keyed by the process's mm, so a
//! `FUTEX_PRIVATE_FLAG` wake would silently miss waiters in other processes. The soak wakes and
//! waits by bitset ([`wake_shared_bitset`], [`wait_shared_bitset`]) so that a waiter can tell
//! whose wake it got. The microbenchmarks also need private wakes ([`wake`]) and the futex2
//! `futex_wake(2)` ([`futex2_wake`]).

use std::sync::atomic::{AtomicU32, Ordering};

use nix::errno::Errno;

use crate::clock::timespec;

/// futex2 flag: the word is 32 bits (mandatory for the io_uring futex opcodes).
pub const FUTEX2_SIZE_U32: u32 = 0x02;
/// futex2 flag: the word is private to this process (keyed by mm, not by page).
pub const FUTEX2_PRIVATE: u32 = libc::FUTEX_PRIVATE_FLAG as u32;
/// Wake or wait regardless of bitset.
pub const FUTEX_BITSET_MATCH_ANY: u64 = 0xffff_ffff;

/// `futex(word, FUTEX_WAKE[_PRIVATE], count)`: wake up to `count` waiters, returning how many
/// woke. `private` must match the waiters' flag or the wake silently finds nobody.
#[inline]
pub fn wake(word: &AtomicU32, count: i32, private: bool) -> Result<u32, Errno> {
    let op = if private {
        libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG
    } else {
        libc::FUTEX_WAKE
    };
    futex(word, op, count as u32, None, 0)
}

/// `futex(word, FUTEX_WAKE_BITSET, count, bitset)` on a word shared between processes: wake up
/// to `count` waiters whose wait bitset intersects `bitset`, returning how many woke.
#[inline]
pub fn wake_shared_bitset(word: &AtomicU32, count: i32, bitset: u32) -> Result<u32, Errno> {
    futex(word, libc::FUTEX_WAKE_BITSET, count as u32, None, bitset)
}

/// The `futex_wake(2)` syscall number (futex2, Linux 6.7). libc 0.2.191 exports
/// `SYS_futex_waitv` (449) for x86_64 and aarch64 but not `SYS_futex_wake`; since Linux 5.1
/// (syscall 424 onwards) every architecture but alpha, ia64 and the mips ABIs shares one
/// numbering, where `futex_wake` is 454 (`futex_wait` 455, `futex_requeue` 456). Both targets
/// rtsoak builds for use that table, so the number is fixed here for them only.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(crate) const SYS_FUTEX_WAKE: libc::c_long = 454;

/// `futex_wake(word, mask, count, flags)` (futex2): wake up to `count` waiters whose bitset
/// intersects `mask`, returning how many woke. `flags` must hold [`FUTEX2_SIZE_U32`] and, for a
/// private word, [`FUTEX2_PRIVATE`]. `ENOSYS` before Linux 6.7.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[inline]
pub fn futex2_wake(word: &AtomicU32, mask: u64, count: i32, flags: u32) -> Result<u32, Errno> {
    // SAFETY: `word` is a live, aligned 32-bit atomic for the duration of the call; futex_wake
    // uses its address only as a key and takes no other pointers.
    let woken = unsafe {
        libc::syscall(
            SYS_FUTEX_WAKE,
            word.as_ptr(),
            mask as libc::c_ulong,
            count as libc::c_int,
            flags as libc::c_uint,
        )
    };
    if woken < 0 {
        Err(Errno::last())
    } else {
        Ok(woken as u32)
    }
}

/// `futex(word, FUTEX_WAIT, expected, timeout)`: sleep while the word holds `expected`, at most
/// `timeout_ns` (relative). `EAGAIN`: the word had moved on; `ETIMEDOUT`: nobody woke us.
#[inline]
pub fn wait_shared(word: &AtomicU32, expected: u32, timeout_ns: u64) -> Result<(), Errno> {
    let timeout = timespec(timeout_ns);
    futex(word, libc::FUTEX_WAIT, expected, Some(timeout.as_ref()), 0).map(drop)
}

/// `futex(word, FUTEX_WAIT_BITSET, expected, deadline, bitset)`: sleep while the word holds
/// `expected`, until a wake whose bitset intersects `bitset`, at most `timeout_ns`. `EAGAIN`:
/// the word had moved on; `ETIMEDOUT`: nobody woke us.
#[inline]
pub fn wait_shared_bitset(
    word: &AtomicU32,
    expected: u32,
    timeout_ns: u64,
    bitset: u32,
) -> Result<(), Errno> {
    // FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline, not a relative timeout.
    let deadline = timespec(crate::clock::now_ns() + timeout_ns);
    futex(
        word,
        libc::FUTEX_WAIT_BITSET,
        expected,
        Some(deadline.as_ref()),
        bitset,
    )
    .map(drop)
}

/// `FUTEX_LOCK_PI_PRIVATE` on `word` (a PI futex between threads of one process), after the
/// uncontended attempt (`0` → `tid`) failed: the kernel queues the caller on the owner's
/// rt_mutex and boosts the owner to the caller's priority until it unlocks.
pub fn lock_pi_private(word: &AtomicU32, tid: u32) -> Result<(), Errno> {
    if word
        .compare_exchange(0, tid, Ordering::Acquire, Ordering::Relaxed)
        .is_ok()
    {
        return Ok(());
    }
    // No timeout: wait as long as the owner holds it.
    futex(
        word,
        libc::FUTEX_LOCK_PI | libc::FUTEX_PRIVATE_FLAG,
        0,
        None,
        0,
    )
    .map(drop)
}

/// Unlock a PI futex taken with [`lock_pi_private`]: `tid` → `0` without waiters, else
/// `FUTEX_UNLOCK_PI_PRIVATE` hands it to the top waiter and ends the owner's boost.
pub fn unlock_pi_private(word: &AtomicU32, tid: u32) -> Result<(), Errno> {
    if word
        .compare_exchange(tid, 0, Ordering::Release, Ordering::Relaxed)
        .is_ok()
    {
        return Ok(());
    }
    futex(
        word,
        libc::FUTEX_UNLOCK_PI | libc::FUTEX_PRIVATE_FLAG,
        0,
        None,
        0,
    )
    .map(drop)
}

/// `futex(word, op, val, timeout, NULL, val3)`: every futex(2) operation rtsoak uses takes at
/// most these (no second word). `timeout` is relative or absolute as `op` reads it. Returns the
/// call's non-negative result (how many woke, for a wake).
#[inline(always)]
fn futex(
    word: &AtomicU32,
    op: i32,
    val: u32,
    timeout: Option<&libc::timespec>,
    val3: u32,
) -> Result<u32, Errno> {
    let timeout = timeout.map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `word` is a live, aligned 32-bit atomic and `timeout` null or a valid timespec,
    // both alive for the whole call; the second word is unused (null) by these operations, and
    // `val` and `val3` are passed by value. The kernel reads and writes nothing else.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            op,
            val,
            timeout,
            std::ptr::null::<u32>(),
            val3,
        )
    };
    if rc < 0 {
        Err(Errno::last())
    } else {
        Ok(rc as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wake_on_a_word_nobody_waits_on_wakes_nobody() {
        let word = AtomicU32::new(0);
        assert_eq!(wake(&word, 1, true), Ok(0));
        assert_eq!(wake(&word, 1, false), Ok(0));
    }

    #[test]
    fn a_bitset_wake_reaches_only_waiters_whose_bitset_it_intersects() {
        let word: &'static AtomicU32 = Box::leak(Box::new(AtomicU32::new(0)));
        let waiter = std::thread::spawn(move || wait_shared_bitset(word, 0, 10_000_000_000, 0b01));
        // Until the waiter sleeps, a wake of its bit finds nobody; a wake of the other bit never
        // finds it, asleep or not.
        let woken = (0..1000).find(|_| {
            assert_eq!(wake_shared_bitset(word, i32::MAX, 0b10), Ok(0));
            std::thread::sleep(std::time::Duration::from_millis(5));
            wake_shared_bitset(word, i32::MAX, 0b01) == Ok(1)
        });
        assert!(woken.is_some(), "the waiter's own bit never woke it");
        assert_eq!(waiter.join().unwrap(), Ok(()));
    }

    #[test]
    fn a_bitset_wait_times_out_and_refuses_a_moved_word() {
        let word = AtomicU32::new(1);
        assert_eq!(
            wait_shared_bitset(&word, 0, 1_000_000, 1),
            Err(Errno::EAGAIN)
        );
        assert_eq!(
            wait_shared_bitset(&word, 1, 1_000_000, 1),
            Err(Errno::ETIMEDOUT)
        );
    }

    #[test]
    fn futex2_wake_without_a_size_flag_is_refused() {
        let word = AtomicU32::new(0);
        match futex2_wake(&word, FUTEX_BITSET_MATCH_ANY, 1, FUTEX2_PRIVATE) {
            // ENOSYS: a kernel before 6.7 has no futex2 wake; nothing else to check there.
            Err(Errno::ENOSYS) => rtsoak_testing::skip("futex_wake(2) needs Linux 6.7"),
            other => assert_eq!(other, Err(Errno::EINVAL)),
        }
        match futex2_wake(
            &word,
            FUTEX_BITSET_MATCH_ANY,
            1,
            FUTEX2_SIZE_U32 | FUTEX2_PRIVATE,
        ) {
            Err(Errno::ENOSYS) => {}
            other => assert_eq!(other, Ok(0)),
        }
    }
}
