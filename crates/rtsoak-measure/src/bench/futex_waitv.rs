//! `futex-waitv`: V vectors of W cacheline-separated words. A cycle queues V
//! `IORING_OP_FUTEX_WAITV` (user data 0..V) then one `IORING_OP_FUTEX_WAKE` per vector on its
//! element `wake_index` (user data V..2V), submits them in one call and reaps exactly 2V
//! completions: every waitv must return `wake_index` (the index of the word that woke it) and
//! every wake 1. After the timed cycles an untimed pass wakes every other word of every vector
//! with `futex_wake(2)` and expects nobody: a completed waitv must leave no waiter behind.
//! One operation is one waitv/wake pair.

use clap::{ArgMatches, Args, Command, FromArgMatches};
use io_uring::{IoUring, opcode, types};

use super::checks::Tally;
use super::ring::{drain_leftovers, push_all, submit_and_drain};
use super::words::Words;
use super::{About, Bench, Opcode, RoundPlan, Shape, UsageError, Workload, run_single};
use rtsoak_record::bench::{BenchConfig, BenchName, BenchSeries, Setup};
use rtsoak_record::{HostFacts, RingSetup};
use rtsoak_sys::futex::{FUTEX_BITSET_MATCH_ANY, futex2_wake, wake};
use rtsoak_sys::uring::Sqe;

/// The bench, as the registry holds it.
pub(crate) struct FutexWaitv;

/// The flags' defaults, which a recorded config without them also means.
const VECTORS: u32 = 8;
const WIDTH: u32 = 8;
const WAKE_INDEX: u32 = 3;

/// Its own flags.
#[derive(Debug, Args)]
struct Flags {
    /// Wait vectors per cycle.
    #[arg(long, default_value_t = VECTORS, value_parser = clap::value_parser!(u32).range(1..=2048))]
    vectors: u32,
    /// Words per vector (the kernel allows at most 128).
    #[arg(long, default_value_t = WIDTH, value_parser = clap::value_parser!(u32).range(1..=128))]
    width: u32,
    /// The element woken in each vector (0-based, below --width).
    #[arg(long, default_value_t = WAKE_INDEX)]
    wake_index: u32,
}

impl Bench for FutexWaitv {
    fn about(&self) -> &'static About {
        &About {
            id: BenchName::FutexWaitv,
            help: "V IORING_OP_FUTEX_WAITV over W words each, one element woken per vector; ns per pair",
            op: "waitv/wake pair",
            needs: &[
                Opcode {
                    code: opcode::FutexWaitV::CODE,
                    name: "IORING_OP_FUTEX_WAITV",
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
        Flags::augment_args(command)
    }

    fn shape(&self, flags: &ArgMatches, _host: &HostFacts) -> anyhow::Result<Shape> {
        let Flags {
            vectors,
            width,
            wake_index,
        } = Flags::from_arg_matches(flags)?;
        if wake_index >= width {
            return Err(UsageError(format!(
                "--wake-index {wake_index} is not an element of a {width}-word vector: \
                 give an index below --width"
            ))
            .into());
        }
        Ok(Shape {
            vectors: Some(vectors),
            width: Some(width),
            wake_index: Some(wake_index),
            ..Shape::k(vectors)
        })
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

/// The bench's state.
struct State {
    ring: IoUring,
    words: Words,
    /// V × W wait descriptors, vector v at `v * W`; the WAITV requests point into it.
    _vectors: Box<[types::FutexWaitV]>,
    entries: Vec<Sqe>,
    vectors: u64,
    width: usize,
    wake_index: usize,
}

impl State {
    /// Prepare the words, the descriptors and the 2V requests.
    fn new(config: &BenchConfig) -> anyhow::Result<(Self, RingSetup)> {
        let vectors = config.vectors.unwrap_or(VECTORS) as usize;
        let width = config.width.unwrap_or(WIDTH) as usize;
        let wake_index = config.wake_index.unwrap_or(WAKE_INDEX) as usize;
        let words = Words::new(vectors * width, config.shared)?;
        let (ring, setup) = super::ring::build(config.ring_setup, 2 * vectors)?;
        let flags = words.futex2_flags();
        let descriptors: Box<[types::FutexWaitV]> = (0..vectors * width)
            .map(|i| {
                types::FutexWaitV::new()
                    .val(0)
                    .uaddr(words.addr(i) as u64)
                    .flags(flags)
            })
            .collect();
        let mut entries = Vec::with_capacity(2 * vectors);
        for v in 0..vectors {
            entries.push(
                Sqe::futex_waitv(&descriptors[v * width..(v + 1) * width]).user_data(v as u64),
            );
        }
        for v in 0..vectors {
            let word = words.word(v * width + wake_index);
            entries.push(
                Sqe::futex_wake(word, 1, FUTEX_BITSET_MATCH_ANY, flags)
                    .user_data((vectors + v) as u64),
            );
        }
        let bench = State {
            ring,
            words,
            _vectors: descriptors,
            entries,
            vectors: vectors as u64,
            width,
            wake_index,
        };
        Ok((bench, setup))
    }
}

impl Workload for State {
    fn ops_per_cycle(&self) -> u64 {
        self.vectors
    }

    fn checks_per_cycle(&self) -> u64 {
        2 * self.vectors
    }

    #[inline(always)]
    fn cycle(&mut self, tally: &mut Tally) -> bool {
        if !push_all(&mut self.ring, &self.entries, tally) {
            return false;
        }
        let (vectors, woken_index) = (self.vectors, self.wake_index as i64);
        submit_and_drain(&mut self.ring, 2 * vectors, tally, |t, ud, res| {
            t.expect(
                ud,
                i64::from(res),
                if ud < vectors { woken_index } else { 1 },
            )
        })
    }

    fn after_round(&mut self, tally: &mut Tally) {
        let flags = self.words.futex2_flags();
        let mut residual = 0;
        for v in 0..self.vectors as usize {
            for j in (0..self.width).filter(|&j| j != self.wake_index) {
                let word = self.words.word(v * self.width + j);
                match futex2_wake(word, FUTEX_BITSET_MATCH_ANY, i32::MAX, flags) {
                    Ok(woken) => residual += u64::from(woken),
                    Err(errno) => tally.call_failed(errno as i32),
                }
            }
        }
        tally.residual_waiters = Some(residual);
        if tally.timeouts > 0 || tally.call_errors > 0 || residual > 0 {
            for i in 0..self.vectors as usize * self.width {
                let _ = wake(self.words.word(i), i32::MAX, self.words.is_private());
            }
            drain_leftovers(&mut self.ring);
        }
    }
}
