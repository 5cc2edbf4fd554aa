//! futex(2) wakes on a word in shared memory. The word is shared between processes (a memfd
//! mapping), so every call here is non-private: a `FUTEX_PRIVATE_FLAG` wake would silently miss
//! waiters in other processes (kernel-notes, pitfall 6).

use std::sync::atomic::AtomicU32;

use nix::errno::Errno;

/// futex2 flag: the word is 32 bits (mandatory for the io_uring futex opcodes).
pub const FUTEX2_SIZE_U32: u32 = 0x02;
/// Wake or wait regardless of bitset.
pub const FUTEX_BITSET_MATCH_ANY: u64 = 0xffff_ffff;

/// `futex(word, FUTEX_WAKE, count)`: wake up to `count` waiters, returning how many woke.
#[inline]
pub fn wake_shared(word: &AtomicU32, count: i32) -> Result<u32, Errno> {
    // SAFETY: `word` is a live, aligned 32-bit atomic for the duration of the call; FUTEX_WAKE
    // only uses its address as a key and reads nothing else through the unused arguments.
    let woken = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE,
            count,
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            0u32,
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
    let timeout = libc::timespec {
        tv_sec: (timeout_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: `word` is a live, aligned 32-bit atomic and `timeout` a valid timespec, both alive
    // for the whole call; FUTEX_WAIT reads nothing else.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            &timeout as *const libc::timespec,
            std::ptr::null::<u32>(),
            0u32,
        )
    };
    if rc < 0 { Err(Errno::last()) } else { Ok(()) }
}
