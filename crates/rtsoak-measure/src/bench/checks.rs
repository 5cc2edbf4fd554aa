//! What every round checks: the completion count, every completion's result, timeouts, failed
//! calls, completion-queue overflow, waiters left behind, and the CPU. A cycle counts into a
//! [`Tally`] (plain counters, no allocation); after the round it becomes [`Checks`], which names
//! every failed check.

use rtsoak_record::bench::{BadResult, Checks};

/// Counters a cycle records into while the clock runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    /// The CPU the thread is pinned to.
    pub(crate) cpu: usize,
    /// `sched_getcpu` before the round's first cycle.
    pub(crate) cpu_at_start: i32,
    /// `sched_getcpu` after the round's last cycle.
    pub(crate) cpu_at_end: i32,
    /// Completions (or call results) validated.
    pub(crate) completions: u64,
    /// Of those, how many had the wrong result.
    pub(crate) bad_results: u64,
    /// The first wrong one.
    pub(crate) first_bad: Option<BadResult>,
    /// Waits for completions that hit [`super::COMPLETION_TIMEOUT_NS`].
    pub(crate) timeouts: u64,
    /// Calls that failed outright (submit, write, futex), and the first errno.
    pub(crate) call_errors: u64,
    /// errno of the first failed call.
    pub(crate) first_call_errno: Option<i32>,
    /// Completions the kernel dropped or held back for lack of CQ space during the round.
    pub(crate) cq_overflow: u64,
    /// Waiters found left behind by the untimed check (benches that have one).
    pub(crate) residual_waiters: Option<u64>,
}

impl Tally {
    /// An empty tally for a thread pinned to `cpu`.
    pub(crate) fn new(cpu: usize) -> Self {
        Tally {
            cpu,
            cpu_at_start: -1,
            cpu_at_end: -1,
            ..Tally::default()
        }
    }

    /// Validate one result.
    #[inline(always)]
    pub(crate) fn expect(&mut self, user_data: u64, result: i64, expected: i64) {
        self.completions += 1;
        if result != expected {
            self.bad_results += 1;
            if self.first_bad.is_none() {
                self.first_bad = Some(BadResult {
                    user_data,
                    result,
                    expected,
                });
            }
        }
    }

    /// Record a call that failed with `errno`.
    #[inline]
    pub(crate) fn call_failed(&mut self, errno: i32) {
        if errno == libc::ETIME {
            self.timeouts += 1;
        } else {
            self.call_errors += 1;
            self.first_call_errno.get_or_insert(errno);
        }
    }

    /// Add another thread's tally of the same round (futex-syscall runs one per thread).
    pub(crate) fn merge(&mut self, other: &Tally) {
        self.completions += other.completions;
        self.bad_results += other.bad_results;
        if self.first_bad.is_none() {
            self.first_bad = other.first_bad;
        }
        self.timeouts += other.timeouts;
        self.call_errors += other.call_errors;
        if self.first_call_errno.is_none() {
            self.first_call_errno = other.first_call_errno;
        }
        self.cq_overflow += other.cq_overflow;
    }
}

/// Judge a tally against the completions the planned cycles had to produce.
pub(super) fn checks(tally: &Tally, expected_completions: u64, all_cycles_ran: bool) -> Checks {
    let mut failed = Vec::new();
    let mut fail = |check: &str, failed_now: bool| {
        if failed_now {
            failed.push(check.to_string());
        }
    };
    fail("cycles", !all_cycles_ran);
    fail("completions", tally.completions != expected_completions);
    fail("results", tally.bad_results > 0);
    fail("timeout", tally.timeouts > 0);
    fail("calls", tally.call_errors > 0);
    fail("overflow", tally.cq_overflow > 0);
    fail("residual", tally.residual_waiters.is_some_and(|n| n > 0));
    let cpu = tally.cpu as i32;
    fail("cpu", tally.cpu_at_start != cpu || tally.cpu_at_end != cpu);
    Checks {
        expected_completions,
        completions: tally.completions,
        bad_results: tally.bad_results,
        first_bad: tally.first_bad,
        timeouts: tally.timeouts,
        call_errors: tally.call_errors,
        first_call_error: tally
            .first_call_errno
            .map(|e| format!("{:?}", nix::errno::Errno::from_raw(e))),
        cq_overflow: tally.cq_overflow,
        residual_waiters: tally.residual_waiters,
        cpu: tally.cpu,
        cpu_at_start: tally.cpu_at_start,
        cpu_at_end: tally.cpu_at_end,
        failed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clean(cpu: usize) -> Tally {
        Tally {
            cpu_at_start: cpu as i32,
            cpu_at_end: cpu as i32,
            ..Tally::new(cpu)
        }
    }

    #[test]
    fn a_round_whose_completions_all_match_passes_every_check() {
        let mut tally = clean(1);
        tally.expect(0, 0, 0);
        tally.expect(1, 1, 1);
        assert!(checks(&tally, 2, true).failed.is_empty());
    }

    #[test]
    fn a_wrong_result_fails_the_results_check_and_keeps_the_first_one() {
        let mut tally = clean(1);
        tally.expect(3, -11, 0);
        tally.expect(4, 0, 1);
        let checks = checks(&tally, 2, true);
        assert_eq!(checks.failed, ["results"]);
        assert_eq!(checks.bad_results, 2);
        assert_eq!(
            checks.first_bad,
            Some(BadResult {
                user_data: 3,
                result: -11,
                expected: 0
            })
        );
    }

    #[test]
    fn a_timeout_a_missing_completion_and_a_migration_are_each_named() {
        let mut tally = clean(1);
        tally.cpu_at_end = 0;
        tally.call_failed(libc::ETIME);
        tally.call_failed(libc::EINVAL);
        tally.residual_waiters = Some(7);
        let checks = checks(&tally, 2, false);
        assert_eq!(
            checks.failed,
            [
                "cycles",
                "completions",
                "timeout",
                "calls",
                "residual",
                "cpu"
            ]
        );
        assert_eq!(checks.first_call_error.as_deref(), Some("EINVAL"));
    }
}
