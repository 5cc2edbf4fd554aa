//! File descriptors a process was started with at fixed numbers (a worker's spec, region,
//! report and frame ring), taken into ownership once each.

use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};

/// Fds below 64 taken so far, one bit each.
static TAKEN: AtomicU64 = AtomicU64::new(0);

/// Take ownership of `fd`, an fd this process inherited open at that number. `None` if it is
/// not open, is 64 or above, or was taken before: each is owned once, by its first taker.
///
/// Call it before the process opens anything itself (as a worker does first thing), so the
/// number still names the inherited file.
pub fn take(fd: RawFd) -> Option<OwnedFd> {
    let bit = 1u64
        .checked_shl(u32::try_from(fd).ok()?)
        .filter(|_| fd < 64)?;
    if TAKEN.fetch_or(bit, Ordering::AcqRel) & bit != 0 {
        return None;
    }
    nix::fcntl::fcntl(
        // SAFETY: only asks for the fd's flags; an fd that is not open gives EBADF.
        unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) },
        nix::fcntl::FcntlArg::F_GETFD,
    )
    .ok()?;
    // SAFETY: `fd` is open (checked above), was inherited at this number, and is owned by no
    // one else in this process: the bit above lets only its first taker through.
    Some(unsafe { OwnedFd::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_fd_is_taken_once_and_a_closed_one_never() {
        let file = std::fs::File::open("/proc/self/stat").unwrap();
        let fd = std::os::fd::IntoRawFd::into_raw_fd(file);
        assert!(fd < 64);
        let owned = take(fd).expect("an open fd is taken");
        assert!(take(fd).is_none(), "twice");
        drop(owned);
        assert!(take(63).is_none(), "fd 63 is not open in a test process");
        assert!(take(64).is_none());
        assert!(take(-1).is_none());
    }
}
