//! `CLOCK_MONOTONIC` in nanoseconds (read through the vDSO), absolute-deadline sleeps, and the
//! wall-clock time a result is stamped with.

use std::os::fd::BorrowedFd;

use nix::poll::{PollFd, PollFlags, ppoll};
use nix::sys::time::TimeSpec;
use nix::time::{ClockId, ClockNanosleepFlags, clock_gettime, clock_nanosleep};

/// Nanoseconds of `CLOCK_MONOTONIC`.
#[inline]
pub fn now_ns() -> u64 {
    let ts = clock_gettime(ClockId::CLOCK_MONOTONIC).expect("CLOCK_MONOTONIC is always readable");
    ts.tv_sec() as u64 * 1_000_000_000 + ts.tv_nsec() as u64
}

/// Sleep until `deadline_ns` of `CLOCK_MONOTONIC` (`clock_nanosleep(TIMER_ABSTIME)`), resuming
/// after signals: an absolute deadline makes a resumed sleep end at the same moment.
#[inline]
pub fn sleep_until_ns(deadline_ns: u64) {
    let ts = timespec(deadline_ns);
    while let Err(nix::errno::Errno::EINTR) = clock_nanosleep(
        ClockId::CLOCK_MONOTONIC,
        ClockNanosleepFlags::TIMER_ABSTIME,
        &ts,
    ) {}
}

/// Sleep until `deadline_ns` of `CLOCK_MONOTONIC`, or until `bell` is readable: true if the
/// bell ended the sleep early. A supervisor sleeps with it on the read end of a self-pipe its
/// signal handlers write to, so that SIGCHLD or a stop signal wakes it at once, even one that
/// arrived just before the sleep began or was handled by another thread (a sleep merely
/// interrupted by a handler would miss both, and sleep on to its deadline).
pub fn sleep_until_ns_or_ready(deadline_ns: u64, bell: BorrowedFd<'_>) -> bool {
    loop {
        let now = now_ns();
        if now >= deadline_ns {
            return false;
        }
        let timeout = timespec(deadline_ns - now);
        let mut fds = [PollFd::new(bell, PollFlags::POLLIN)];
        match ppoll(&mut fds, Some(timeout), None) {
            Ok(0) | Err(nix::errno::Errno::EINTR) => continue,
            Ok(_) => return true,
            // Not a bell one can wait on: the deadline alone, as a plain sleep.
            Err(_) => {
                sleep_until_ns(deadline_ns);
                return false;
            }
        }
    }
}

/// `ns` as a timespec: whole seconds and the nanoseconds left over.
#[inline]
pub(crate) fn timespec(ns: u64) -> TimeSpec {
    TimeSpec::new(
        (ns / 1_000_000_000) as libc::time_t,
        (ns % 1_000_000_000) as libc::c_long,
    )
}

/// Now as RFC 3339 UTC, whole seconds.
pub fn timestamp() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_absolute_sleep_never_ends_early() {
        let deadline = now_ns() + 2_000_000;
        sleep_until_ns(deadline);
        assert!(now_ns() >= deadline);
    }

    #[test]
    fn a_sleep_on_a_bell_waits_for_its_deadline_unless_the_bell_already_rang() {
        use std::io::Write;
        use std::os::fd::AsFd;
        let (mut ring, bell) = std::os::unix::net::UnixStream::pair().unwrap();
        let deadline = now_ns() + 2_000_000;
        assert!(!sleep_until_ns_or_ready(deadline, bell.as_fd()));
        assert!(now_ns() >= deadline);
        // Rung before the sleep began, as a signal handler may: the sleep does not start.
        ring.write_all(b"x").unwrap();
        let far_ns = now_ns() + 10_000_000_000;
        assert!(sleep_until_ns_or_ready(far_ns, bell.as_fd()));
        assert!(now_ns() < far_ns);
    }
}
