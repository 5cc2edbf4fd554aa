//! The round machinery every single-thread bench and each futex-syscall thread share: a
//! [`Workload`] is one cycle; a round is a fixed number of cycles between two clock reads; warm-up
//! rounds come first; raw rounds become reported [`Round`]s with their checks.
//!
//! Must never: allocate, log or format between the two clock reads of a round (a cycle records
//! into a [`Tally`] of plain counters), or dispatch dynamically inside one: every function here is
//! generic over its workload, so each bench's loop is compiled for its own type.

use rtsoak_record::bench::Round;

use super::checks::{Tally, checks};
use rtsoak_sys::clock::now_ns;
use rtsoak_sys::sched::current_cpu;

/// How long one wait for completions may block before the round is declared broken. Generous:
/// a cycle takes microseconds; only a lost wake ever reaches it.
pub(crate) const COMPLETION_TIMEOUT_NS: u64 = 1_000_000_000;

/// One benchmark's cycle. The runner calls [`Workload::cycle`] `cycles` times between two clock
/// reads, so a cycle must not allocate, log or format.
pub(crate) trait Workload {
    /// Operations (pairs, messages, calls) one cycle performs: the ns/op divisor.
    fn ops_per_cycle(&self) -> u64;

    /// Completions (or call results) one cycle must validate.
    fn checks_per_cycle(&self) -> u64;

    /// Run one cycle, recording every completion into `tally`. Returns false when the cycle
    /// broke (a timeout or a failed call) and the round must stop.
    fn cycle(&mut self, tally: &mut Tally) -> bool;

    /// Untimed work after a round: checks that need extra calls (no waiter left behind), and
    /// cleaning up after a broken round so the next one starts clean.
    fn after_round(&mut self, _tally: &mut Tally) {}
}

/// Rounds to run: warm-up, measured, cycles each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoundPlan {
    /// Rounds run first and reported, but left out of every figure.
    pub warmup_rounds: u32,
    /// Rounds the figures come from.
    pub rounds: u32,
    /// Cycles per round.
    pub cycles: u32,
}

/// The raw measurement of one round, before it is turned into a [`Round`].
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RawRound {
    /// Between the round's two clock reads, ns.
    pub(crate) elapsed_ns: u64,
    /// Cycles completed (fewer than planned if the round broke).
    pub(crate) cycles_done: u32,
    /// What the checks found.
    pub(crate) tally: Tally,
}

/// Run one round of `workload` on the calling thread, which is pinned to `cpu`.
#[inline(never)]
pub(crate) fn run_round<W: Workload>(workload: &mut W, cycles: u32, cpu: usize) -> RawRound {
    let mut tally = Tally::new(cpu);
    tally.cpu_at_start = current_cpu();
    let mut cycles_done = 0;
    let start_ns = now_ns();
    while cycles_done < cycles {
        if !workload.cycle(&mut tally) {
            break;
        }
        cycles_done += 1;
    }
    let end_ns = now_ns();
    tally.cpu_at_end = current_cpu();
    workload.after_round(&mut tally);
    RawRound {
        elapsed_ns: end_ns - start_ns,
        cycles_done,
        tally,
    }
}

/// Run every round of `plan` and describe them; `raw` is reused so nothing grows mid-run.
pub(crate) fn run_rounds<W: Workload>(
    workload: &mut W,
    plan: RoundPlan,
    cpu: usize,
) -> Vec<RawRound> {
    let total = (plan.warmup_rounds + plan.rounds) as usize;
    let mut raw = Vec::with_capacity(total);
    for _ in 0..total {
        raw.push(run_round(workload, plan.cycles, cpu));
    }
    raw
}

/// Turn raw rounds into reported rounds: ns per op, the checks and whether each is valid.
pub(crate) fn describe_rounds(
    raw: &[RawRound],
    plan: RoundPlan,
    ops_per_cycle: u64,
    checks_per_cycle: u64,
) -> Vec<Round> {
    raw.iter()
        .enumerate()
        .map(|(index, r)| {
            let ops = u64::from(r.cycles_done) * ops_per_cycle;
            let checks = checks(
                &r.tally,
                u64::from(plan.cycles) * checks_per_cycle,
                r.cycles_done == plan.cycles,
            );
            Round {
                index,
                warmup: index < plan.warmup_rounds as usize,
                cycles: r.cycles_done,
                ops,
                elapsed_ns: r.elapsed_ns,
                ns_per_op: if ops == 0 {
                    0.0
                } else {
                    r.elapsed_ns as f64 / ops as f64
                },
                valid: checks.failed.is_empty(),
                checks,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Validates 2 completions per cycle; its result turns wrong from cycle `bad_from`, and it
    /// breaks (a timeout) at cycle `break_at`.
    struct Fake {
        cycle: u32,
        bad_from: u32,
        break_at: u32,
    }

    impl Workload for Fake {
        fn ops_per_cycle(&self) -> u64 {
            1
        }
        fn checks_per_cycle(&self) -> u64 {
            2
        }
        fn cycle(&mut self, tally: &mut Tally) -> bool {
            self.cycle += 1;
            if self.cycle >= self.break_at {
                tally.call_failed(libc::ETIME);
                return false;
            }
            let result = if self.cycle >= self.bad_from { -11 } else { 0 };
            tally.expect(0, result, 0);
            tally.expect(1, 1, 1);
            true
        }
    }

    fn plan() -> RoundPlan {
        RoundPlan {
            warmup_rounds: 1,
            rounds: 2,
            cycles: 4,
        }
    }

    fn pinned_cpu() -> usize {
        let cpu = current_cpu() as usize;
        rtsoak_sys::sched::pin_to(&[cpu]).unwrap();
        cpu
    }

    #[test]
    fn rounds_of_a_clean_workload_are_valid_and_warmup_comes_first() {
        let cpu = pinned_cpu();
        let mut fake = Fake {
            cycle: 0,
            bad_from: u32::MAX,
            break_at: u32::MAX,
        };
        let raw = run_rounds(&mut fake, plan(), cpu);
        let rounds = describe_rounds(&raw, plan(), 1, 2);
        assert_eq!(rounds.len(), 3);
        assert!(rounds[0].warmup && !rounds[1].warmup && !rounds[2].warmup);
        for round in &rounds {
            assert!(round.valid, "{round:#?}");
            assert_eq!(round.ops, 4);
            assert_eq!(round.checks.completions, 8);
            assert_eq!(round.ns_per_op, round.elapsed_ns as f64 / 4.0);
        }
    }

    #[test]
    fn a_wrong_result_or_a_broken_cycle_invalidates_the_round_and_says_why() {
        let cpu = pinned_cpu();
        let mut fake = Fake {
            cycle: 0,
            bad_from: 3,
            break_at: 100,
        };
        let rounds = describe_rounds(&run_rounds(&mut fake, plan(), cpu), plan(), 1, 2);
        assert_eq!(rounds[0].checks.failed, ["results"]);
        assert_eq!(rounds[0].checks.bad_results, 2);

        let mut fake = Fake {
            cycle: 0,
            bad_from: u32::MAX,
            break_at: 3,
        };
        let round = &describe_rounds(&run_rounds(&mut fake, plan(), cpu), plan(), 1, 2)[0];
        assert_eq!(round.cycles, 2, "the round stops at the broken cycle");
        assert_eq!(round.checks.failed, ["cycles", "completions", "timeout"]);
        assert!(!round.valid);
    }
}
