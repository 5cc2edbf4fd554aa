//! `futex-wait-wake` (the workload of the 2026-07-30 io_uring scalar futex wait/wake
//! regression report on the io-uring list): one ring, K cacheline-separated futex words. A cycle queues K
//! `IORING_OP_FUTEX_WAIT` (user data 0..K) then K `IORING_OP_FUTEX_WAKE` (user data K..2K), submits
//! them in one call and reaps exactly 2K completions: every wait must return 0 and every wake 1.
//! One operation is one wait/wake pair.

use clap::Command;
use io_uring::{IoUring, opcode};

use super::checks::Tally;
use super::ring::{drain_leftovers, push_all, submit_and_drain};
use super::words::Words;
use super::{About, Bench, KFlag, Opcode, RoundPlan, Workload, run_single};
use rtsoak_record::bench::{BenchConfig, BenchName, BenchSeries, Setup};
use rtsoak_record::{HostFacts, RingSetup};
use rtsoak_sys::futex::{FUTEX_BITSET_MATCH_ANY, wake};
use rtsoak_sys::uring::Sqe;

/// The bench, as the registry holds it.
pub(crate) struct FutexWaitWake;

impl Bench for FutexWaitWake {
    fn about(&self) -> &'static About {
        &About {
            id: BenchName::FutexWaitWake,
            help: "K IORING_OP_FUTEX_WAIT then K IORING_OP_FUTEX_WAKE per cycle on one ring; ns per pair",
            op: "wait/wake pair",
            needs: &[
                Opcode {
                    code: opcode::FutexWait::CODE,
                    name: "IORING_OP_FUTEX_WAIT",
                    since: "6.7",
                },
                Opcode {
                    code: opcode::FutexWake::CODE,
                    name: "IORING_OP_FUTEX_WAKE",
                    since: "6.7",
                },
            ],
        }
    }

    fn flags(&self, command: Command) -> Command {
        KFlag::add(command, "Futex words (wait/wake pairs) per cycle")
    }

    fn run(
        &self,
        config: &BenchConfig,
        plan: RoundPlan,
        _host: &HostFacts,
        setup: &mut Setup,
    ) -> anyhow::Result<Vec<BenchSeries>> {
        run_single(self, config, plan, setup, State::new)
    }
}

/// The bench's state: words, ring and the 2K prepared requests.
struct State {
    ring: IoUring,
    words: Words,
    entries: Vec<Sqe>,
    k: u64,
}

impl State {
    /// Prepare K words and their requests on a ring with `config.ring_setup`.
    fn new(config: &BenchConfig) -> anyhow::Result<(Self, RingSetup)> {
        let k = config.k as usize;
        let words = Words::new(k, config.shared)?;
        let (ring, setup) = super::ring::build(config.ring_setup, 2 * k)?;
        let flags = words.futex2_flags();
        let mut entries = Vec::with_capacity(2 * k);
        for i in 0..k {
            entries.push(
                Sqe::futex_wait(words.word(i), 0, FUTEX_BITSET_MATCH_ANY, flags)
                    .user_data(i as u64),
            );
        }
        for i in 0..k {
            entries.push(
                Sqe::futex_wake(words.word(i), 1, FUTEX_BITSET_MATCH_ANY, flags)
                    .user_data((k + i) as u64),
            );
        }
        let bench = State {
            ring,
            words,
            entries,
            k: k as u64,
        };
        Ok((bench, setup))
    }
}

impl Workload for State {
    fn ops_per_cycle(&self) -> u64 {
        self.k
    }

    fn checks_per_cycle(&self) -> u64 {
        2 * self.k
    }

    #[inline(always)]
    fn cycle(&mut self, tally: &mut Tally) -> bool {
        if !push_all(&mut self.ring, &self.entries, tally) {
            return false;
        }
        let k = self.k;
        submit_and_drain(&mut self.ring, 2 * k, tally, |t, ud, res| {
            t.expect(ud, i64::from(res), if ud < k { 0 } else { 1 })
        })
    }

    fn after_round(&mut self, tally: &mut Tally) {
        if tally.timeouts > 0 || tally.call_errors > 0 {
            // A lost wake leaves waits armed: wake them all and reap, so the next round starts
            // clean.
            for i in 0..self.k as usize {
                let _ = wake(self.words.word(i), i32::MAX, self.words.is_private());
            }
            drain_leftovers(&mut self.ring);
        }
    }
}
