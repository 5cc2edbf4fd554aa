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
}
