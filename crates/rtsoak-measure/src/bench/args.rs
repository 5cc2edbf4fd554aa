//! The `rtsoak bench` command line: one sub-command per registered bench ([`super::BENCHES`]:
//! each brings its own flags and `--help` line, the common ones are added here) plus `compare`
//! (clap derive). Doc comments here are the `--help` text.

use std::path::PathBuf;

use clap::{ArgMatches, Args, Command, FromArgMatches, Subcommand};

use super::Bench;
use rtsoak_record::{Policy, RingSetup};

/// `rtsoak bench <name>`.
#[derive(Debug)]
pub enum BenchCommand {
    /// A registered bench.
    Run(BenchRun),
    /// `rtsoak bench compare`.
    Compare(CompareCommand),
}

/// `rtsoak bench <name> [flags]`, as clap matched it.
#[derive(Debug)]
pub struct BenchRun {
    /// The bench named.
    pub bench: &'static dyn Bench,
    /// Its own flags, read only by it ([`Bench::shape`]).
    pub flags: ArgMatches,
    /// The flags every bench takes.
    pub common: CommonArgs,
}

impl FromArgMatches for BenchCommand {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        if let Some((name, flags)) = matches.subcommand()
            && let Some(bench) = super::by_name(name)
        {
            return Ok(BenchCommand::Run(BenchRun {
                bench,
                common: CommonArgs::from_arg_matches(flags)?,
                flags: flags.clone(),
            }));
        }
        CompareCommand::from_arg_matches(matches).map(BenchCommand::Compare)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Subcommand for BenchCommand {
    fn augment_subcommands(command: Command) -> Command {
        let command = super::BENCHES.iter().fold(command, |command, bench| {
            command.subcommand(sub_command(*bench))
        });
        CompareCommand::augment_subcommands(command)
    }

    fn augment_subcommands_for_update(command: Command) -> Command {
        Self::augment_subcommands(command)
    }

    fn has_subcommand(name: &str) -> bool {
        super::by_name(name).is_some() || CompareCommand::has_subcommand(name)
    }
}

/// One bench's sub-command: its own flags, then the common ones, then its `--help` line, set
/// last because each derived flag set brings its doc comment as one.
fn sub_command(bench: &dyn Bench) -> Command {
    let command = bench.flags(Command::new(bench.name()));
    CommonArgs::augment_args(command)
        .about(bench.about().help)
        .long_about(None)
}

/// `rtsoak bench compare`, as it has always been parsed.
#[derive(Debug, Subcommand)]
pub enum CompareCommand {
    /// Compare saved bench results: PARENT_A CHILD PARENT_B (A/B/A), or A B.
    Compare {
        /// Two or three bench results (bench.json files or their directories).
        #[arg(num_args = 2..=3, required = true, value_name = "RESULT")]
        results: Vec<PathBuf>,
        /// A change beyond this (percent, either way) is a signal.
        #[arg(long, default_value_t = 5.0)]
        signal_pct: f64,
        /// Parent drift beyond this (percent) makes the verdict inconclusive.
        #[arg(long, default_value_t = 2.0)]
        drift_pct: f64,
        /// A point whose CV exceeds this (percent) makes the verdict inconclusive.
        #[arg(long, default_value_t = 2.0)]
        cv_pct: f64,
        /// Print the comparison as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Options every benchmark takes.
#[derive(Debug, Args)]
pub struct CommonArgs {
    /// Rounds run first and left out of every figure.
    #[arg(long, default_value_t = 3)]
    pub warmup_rounds: u32,
    /// Measured rounds.
    #[arg(long, default_value_t = 15, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub rounds: u32,
    /// Cycles per round.
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u32).range(1..))]
    pub cycles: u32,
    /// CPU to pin the measuring thread to (default: the last isolated CPU, else the last online).
    #[arg(long)]
    pub cpu: Option<usize>,
    /// Scheduling policy of the measuring thread(s).
    #[arg(long, value_enum, default_value = "fifo")]
    pub policy: Policy,
    /// Priority for fifo/rr (1..=99).
    #[arg(long, default_value_t = 40, value_parser = clap::value_parser!(u8).range(1..=99))]
    pub priority: u8,
    /// Use MAP_SHARED memfd futex words without the PRIVATE flag (default: private words).
    #[arg(long)]
    pub shared: bool,
    /// Setup flags of the bench's ring(s).
    #[arg(long, value_enum, default_value = "none")]
    pub ring_setup: RingSetup,
    /// Result directory (default: `rtsoak-results/<UTC time>-bench-<name>`).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Print the result document (JSON) on stdout instead of the summary.
    #[arg(long)]
    pub json: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsoak_record::HostFacts;

    fn parse(args: &[&str]) -> BenchCommand {
        let command = BenchCommand::augment_subcommands(Command::new("bench"));
        BenchCommand::from_arg_matches(&command.try_get_matches_from(args).unwrap()).unwrap()
    }

    #[test]
    fn every_bench_name_has_one_registered_bench_in_its_order() {
        let registered: Vec<_> = super::super::BENCHES.iter().map(|b| b.about().id).collect();
        assert_eq!(registered, rtsoak_record::bench::BenchName::ALL);
    }

    #[test]
    fn every_registered_bench_is_the_sub_command_of_its_name() {
        for bench in super::super::BENCHES {
            let BenchCommand::Run(run) = parse(&["bench", bench.name()]) else {
                panic!("{} parsed as compare", bench.name());
            };
            assert_eq!(run.bench.name(), bench.name());
        }
        assert!(matches!(
            parse(&["bench", "compare", "a", "b"]),
            BenchCommand::Compare(_)
        ));
    }

    #[test]
    fn a_bench_reads_its_own_flags_into_its_shape_and_leaves_the_common_ones() {
        let BenchCommand::Run(run) = parse(&[
            "bench",
            "futex-waitv",
            "--vectors",
            "4",
            "--width",
            "6",
            "--rounds",
            "2",
        ]) else {
            panic!("futex-waitv parsed as compare");
        };
        let host: HostFacts =
            serde_json::from_str(rtsoak_testing::fixture::HOST_FACTS_JSON).unwrap();
        let shape = run.bench.shape(&run.flags, &host).unwrap();
        assert_eq!(shape.k, 4, "one pair per vector per cycle");
        assert_eq!((shape.width, shape.wake_index), (Some(6), Some(3)));
        assert_eq!(shape.thread_counts, None);
        assert_eq!(run.common.rounds, 2);
    }
}
