//! What a registered benchmark is ([`Bench`]): what it is, as data ([`About`]: its name,
//! `--help` line, what one operation is and the io_uring opcodes it submits), its own flags and
//! the [`Shape`] of one cycle they decide (by default one K flag, [`KFlag`]), and how it runs.
//! The command holds benches as `&dyn Bench`, one dynamic call per run; a bench's `run` names its
//! own [`Workload`] type, so the rounds are compiled for that type and nothing inside a measured
//! round is called through a vtable.
//!
//! Must never: print, or read another bench's flags.

use clap::{ArgMatches, Args, Command, FromArgMatches};

use super::rounds::{RoundPlan, Workload, describe_rounds, run_rounds};
use rtsoak_record::bench::{BenchConfig, BenchName, BenchSeries, Round, Setup};
use rtsoak_record::{HostFacts, RingSetup};

/// Bad input to `rtsoak bench`: exit code 2, answered before anything is measured.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// An io_uring opcode a bench submits, with the names its refusal gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Opcode {
    /// The opcode number (`io_uring::opcode::*::CODE`), probed on the running kernel.
    pub code: u8,
    /// The kernel's name for it: `IORING_OP_FUTEX_WAIT`.
    pub name: &'static str,
    /// The first Linux release with it: advice in the refusal only, support is probed.
    pub since: &'static str,
}

/// What a bench's own flags decide: the size of one cycle, and futex-syscall's thread counts.
/// The common flags decide the rest of the [`BenchConfig`]; the fields are its fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    /// Requests (or calls) per cycle per vector/thread.
    pub k: u32,
    /// futex-waitv: vectors per cycle.
    pub vectors: Option<u32>,
    /// futex-waitv: words per vector.
    pub width: Option<u32>,
    /// futex-waitv: the element woken in each vector.
    pub wake_index: Option<u32>,
    /// futex-syscall: the thread counts measured.
    pub thread_counts: Option<Vec<u32>>,
}

impl Shape {
    /// K requests (or calls) per cycle and nothing else, as most benches have it.
    pub(crate) fn k(k: u32) -> Self {
        Shape {
            k,
            vectors: None,
            width: None,
            wake_index: None,
            thread_counts: None,
        }
    }
}

/// What a bench is, as data.
pub struct About {
    /// Which bench this is: its sub-command and the result's `bench`.
    pub id: BenchName,
    /// The sub-command's one-line `--help`.
    pub help: &'static str,
    /// What one timed operation is (a series' `op`): `wait/wake pair`, `message`.
    pub op: &'static str,
    /// The io_uring opcodes one cycle submits; the command refuses early, naming the first the
    /// kernel lacks.
    pub needs: &'static [Opcode],
}

/// The flags of most benches: `-k`, K requests per cycle. Each bench words its help.
#[derive(Debug, Args)]
pub(crate) struct KFlag {
    #[arg(short, long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=4096))]
    k: u32,
}

impl KFlag {
    /// Add `-k` to `command`, with `help` as its help (what one of the K is).
    pub(crate) fn add(command: Command, help: &'static str) -> Command {
        Self::augment_args(command).mut_arg("k", |k| k.help(help))
    }
}

/// One benchmark, as `rtsoak bench <name>`, its help, the docs and the tests know it. Adding one
/// is a file implementing this and a line in the table in `bench/mod.rs`.
pub trait Bench: Sync {
    /// What it is: its id, `--help` line, operation and opcodes.
    fn about(&self) -> &'static About;

    /// The sub-command and the result's `bench` spelling: `futex-wait-wake`.
    fn name(&self) -> &'static str {
        self.about().id.name()
    }

    /// Its own flags, added to its sub-command (the caller adds the common ones after them).
    fn flags(&self, command: Command) -> Command;

    /// The shape of one cycle from the flags [`Bench::flags`] declared; by default K from
    /// [`KFlag`]. Input clap cannot refuse by itself is a [`UsageError`].
    fn shape(&self, flags: &ArgMatches, _host: &HostFacts) -> anyhow::Result<Shape> {
        Ok(Shape::k(KFlag::from_arg_matches(flags)?.k))
    }

    /// Run every round of `plan`: on the calling thread, already pinned to `config.cpu` at its
    /// priority, or on threads of its own. Records in `setup` the CPUs and ring setup it used.
    fn run(
        &self,
        config: &BenchConfig,
        plan: RoundPlan,
        host: &HostFacts,
        setup: &mut Setup,
    ) -> anyhow::Result<Vec<BenchSeries>>;
}

/// Benches appear in `Debug` output (the parsed command line) by name.
impl std::fmt::Debug for dyn Bench {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Run a single-thread workload, built by `new` from `config`, on the calling thread, pinned to
/// `config.cpu`: one series named after the bench. Generic over both, so the rounds are compiled
/// for this workload.
pub(crate) fn run_single<B: Bench, W: Workload>(
    bench: &B,
    config: &BenchConfig,
    plan: RoundPlan,
    setup: &mut Setup,
    new: impl FnOnce(&BenchConfig) -> anyhow::Result<(W, RingSetup)>,
) -> anyhow::Result<Vec<BenchSeries>> {
    let (mut workload, ring) = new(config)?;
    let raw = run_rounds(&mut workload, plan, config.cpu);
    let rounds = describe_rounds(
        &raw,
        plan,
        workload.ops_per_cycle(),
        workload.checks_per_cycle(),
    );
    setup.ring_setup = Some(ring);
    Ok(vec![series(
        bench.name(),
        bench.about().op,
        workload.ops_per_cycle(),
        rounds,
    )])
}

/// Build a series and its summary from its rounds.
pub(super) fn series(name: &str, op: &str, ops_per_cycle: u64, rounds: Vec<Round>) -> BenchSeries {
    let measured: Vec<(f64, bool)> = rounds
        .iter()
        .filter(|r| !r.warmup)
        .map(|r| (r.ns_per_op, r.valid))
        .collect();
    BenchSeries {
        name: name.to_string(),
        op: op.to_string(),
        ops_per_cycle,
        summary: rtsoak_analysis::bench::summary::summarise(&measured),
        rounds,
    }
}
