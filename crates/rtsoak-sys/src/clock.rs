//! `CLOCK_MONOTONIC` in nanoseconds (read through the vDSO), absolute-deadline sleeps, and the
//! wall-clock time a result is stamped with.

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
    let ts = nix::sys::time::TimeSpec::new(
        (deadline_ns / 1_000_000_000) as libc::time_t,
        (deadline_ns % 1_000_000_000) as libc::c_long,
    );
    while let Err(nix::errno::Errno::EINTR) = clock_nanosleep(
        ClockId::CLOCK_MONOTONIC,
        ClockNanosleepFlags::TIMER_ABSTIME,
        &ts,
    ) {}
}

/// Sleep until `deadline_ns` of `CLOCK_MONOTONIC`, or until a signal handler runs in this
/// thread (`clock_nanosleep` is never restarted after one, whatever `SA_RESTART` says): true
/// if a signal ended the sleep early. A supervisor sleeps with it to wake on SIGCHLD or a stop
/// signal at once instead of polling for them.
#[inline]
pub fn sleep_until_ns_or_signal(deadline_ns: u64) -> bool {
    let ts = nix::sys::time::TimeSpec::new(
        (deadline_ns / 1_000_000_000) as libc::time_t,
        (deadline_ns % 1_000_000_000) as libc::c_long,
    );
    clock_nanosleep(
        ClockId::CLOCK_MONOTONIC,
        ClockNanosleepFlags::TIMER_ABSTIME,
        &ts,
    ) == Err(nix::errno::Errno::EINTR)
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
    fn a_sleep_that_may_end_on_a_signal_still_waits_for_its_deadline_without_one() {
        let deadline = now_ns() + 2_000_000;
        assert!(!sleep_until_ns_or_signal(deadline));
        assert!(now_ns() >= deadline);
    }
}
