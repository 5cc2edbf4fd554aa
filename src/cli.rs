//! The command line (clap derive). Doc comments here are the `--help` text.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::profile::{Overrides, parse_cpus, parse_duration_ns};

/// Soak-test real-time wakeup latency between io_uring event loops on Linux PREEMPT_RT.
///
/// A SCHED_FIFO publisher wakes a SCHED_FIFO subscriber's io_uring event loop every period
/// through a selectable transport; rtsoak records how long the send call took and how late the
/// message was observed, counts what went over the threshold, and says what the figures are
/// worth on this machine.
#[derive(Debug, Parser)]
#[command(name = "rtsoak", version, after_help = crate::exit::EXIT_CODES_HELP)]
pub struct Cli {
    /// No progress display on stderr.
    #[arg(short, long, global = true)]
    pub(crate) quiet: bool,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// Sub-commands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Soak one transport.
    Run {
        /// Transport to soak (see `rtsoak probe` for what this kernel supports).
        #[arg(short, long, value_parser = Named(transport_names), hide_possible_values = true)]
        transport: String,
        #[command(flatten)]
        soak: SoakArgs,
    },
    /// Soak several transports in turn under identical conditions and print one table.
    Compare {
        /// Transports to compare, comma-separated (default: the profile's list, or every one).
        #[arg(short, long, value_delimiter = ',',
            value_parser = Named(transport_names), hide_possible_values = true)]
        transports: Option<Vec<String>>,
        #[command(flatten)]
        soak: SoakArgs,
    },
    /// Check the system for real-time measurement (kernel, isolation, interrupts, tasks,
    /// frequency, idle states, privileges) and report which transports this kernel supports.
    #[command(after_help = crate::exit::PROBE_EXIT_CODES_HELP)]
    Probe {
        /// Print the whole check and the transport matrix as JSON.
        #[arg(long)]
        json: bool,
        /// RT CPUs to judge, publisher then subscriber (default: the profile's choice here).
        #[arg(long, value_parser = parse_cpus)]
        rt_cpus: Option<::std::vec::Vec<usize>>,
        /// Profile whose CPU layout and RT policy are judged.
        #[arg(short, long, default_value = "default",
            value_parser = Named(profile_names), hide_possible_values = true)]
        profile: String,
    },
    /// Re-render saved results (a result.json or its directory) in any output format.
    Report {
        /// Result files or result directories.
        #[arg(required = true)]
        results: Vec<PathBuf>,
        /// Output format.
        #[arg(short, long, default_value = "table",
            value_parser = clap::builder::PossibleValuesParser::new(rtsoak_report::names()))]
        format: String,
        /// Write to this file (one result) or directory (one file per result) instead of stdout.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// With the table format: after the headline view, every other table (as
        /// `--format details` gives them alone).
        #[arg(long)]
        details: bool,
        /// With the kcidb format: submit under this KCIDB origin instead of the one the result
        /// was run with (`rtsoak` unless `--kcidb-origin` or the profile's
        /// `export.kcidb_origin` named one).
        #[arg(long, value_name = "NAME")]
        kcidb_origin: Option<rtsoak_record::export::KcidbOrigin>,
    },
    /// List the profiles (installed in /etc/rtsoak/profiles, and built-in), or print one.
    Profiles {
        /// Print this profile's TOML.
        #[arg(long, value_parser = Named(profile_names), hide_possible_values = true)]
        show: Option<String>,
    },
    /// Compare a result with a baseline per transport (and ring setup) and series:
    /// over-threshold rates (exact test for rare counts, alpha 0.01), p99.9, p99.99 and the
    /// maximum; exit 3 on a regression, 7 (inconclusive) when it compared nothing it should
    /// have (no pair, a transport on one side only, a side interrupted, failed, lossy or empty).
    Diff {
        /// The baseline result (a result.json or its directory).
        baseline: PathBuf,
        /// The new result.
        new: PathBuf,
        /// Print the comparison as JSON.
        #[arg(long)]
        json: bool,
        /// Print the comparison as GitHub Markdown.
        #[arg(long, conflicts_with = "json")]
        markdown: bool,
    },
    /// Manage the baseline that `diff` and `--baseline` compare against.
    Baseline {
        #[command(subcommand)]
        command: BaselineCommand,
    },
    /// Per-operation microbenchmarks (ns per futex wait/wake pair, ...) and their A/B/A comparison.
    Bench {
        #[command(subcommand)]
        bench: rtsoak_measure::bench::args::BenchCommand,
    },
    /// Kernel A/B/A with a fresh boot per point: a plan's points booted in order (kexec on
    /// this machine, or qemu guests from a host), the same rtsoak command on every boot, the
    /// child judged against its parents across the boots (docs/campaign.md).
    Campaign {
        #[command(subcommand)]
        command: crate::campaign::args::CampaignCommand,
    },
    /// Check the spike explainer on a priority inversion with a known answer: a noise
    /// publisher (FIFO 10) holds a PI futex, a burst thread (FIFO 50) keeps it off its CPU, and
    /// the RT publisher (FIFO 40) waits for the futex. Passes (exit 0) when every round is
    /// explained as that lock, that holder boosted to FIFO 40, and that burst thread; exit 1
    /// when one is not. Needs root (tracefs and SCHED_FIFO) and two CPUs.
    ExplainCheck {
        /// Inversions to stage.
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=100))]
        rounds: u32,
        /// The holder's and burst's CPU, then the RT publisher's (default: the first two CPUs
        /// this process may use).
        #[arg(long, value_parser = parse_cpus)]
        cpus: Option<::std::vec::Vec<usize>>,
        /// Also write every line of the trace it read into FILE, to check the verdicts by hand.
        #[arg(long, value_name = "FILE")]
        keep_trace: Option<PathBuf>,
    },
    /// Print the shell completion script for SHELL (bash, zsh, fish, ...); `scripts/install`
    /// installs them where each shell looks.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page rtsoak(1), or with --dir write it and one page per command
    /// (rtsoak-compare(1), ...) into DIR.
    Man {
        /// Write rtsoak.1 and rtsoak-COMMAND.1 here instead of printing rtsoak.1.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

/// The command line as parsed: [`Cli`]'s definition, with each override's help saying what the
/// built-in default profile gives it (`[default profile: 10s]`), so that `--help` tells what
/// leaving a flag out means. Completions and manual pages are made from this too.
pub(crate) fn command() -> clap::Command {
    use clap::CommandFactory;
    let mut command = Cli::command().mut_subcommand("run", run_takes_one_run);
    let Ok((_, profile)) = crate::profile::load("default") else {
        return command;
    };
    let values = crate::profile::profile_values(&profile);
    for name in ["run", "compare"] {
        command = command.mut_subcommand(name, |mut sub| {
            for (id, value) in &values {
                sub = sub.mut_arg(id, |arg| {
                    let note = format!("[default profile: {value}]");
                    let help = arg.get_help().map(|h| format!("{h} {note}"));
                    let long = arg.get_long_help().map(|h| format!("{h}\n\n{note}"));
                    let arg = arg.help(help.unwrap_or(note));
                    match long {
                        Some(long) => arg.long_help(long),
                        None => arg,
                    }
                });
            }
            sub
        });
    }
    command
}

/// `run` is one transport under one profile for one duration: the flags that make several runs
/// of a comparison (`--rounds`, a list of `--ring-setup`s) are not offered, and using them says
/// to use `compare`.
fn run_takes_one_run(run: clap::Command) -> clap::Command {
    run.mut_arg("rounds", |arg| {
        arg.hide(true)
            .value_parser(|_: &str| -> Result<u32, String> {
                Err(
                    "rounds interleave the runs of a comparison: use `rtsoak compare -t TRANSPORT \
                 --rounds N`"
                        .to_string(),
                )
            })
    })
    .mut_arg("ring_setup", |arg| {
        arg.value_delimiter(None).action(clap::ArgAction::Set).help(
            "Setup flags of the subscriber's ring (one; `compare` takes several, each its own row)",
        )
    })
}

/// A value taken as given whose known names the completion scripts offer: a transport name is
/// checked where the plan is resolved (with its own message), and a profile may also be a path.
#[derive(Clone)]
struct Named(fn() -> Vec<&'static str>);

impl clap::builder::TypedValueParser for Named {
    type Value = String;

    fn parse_ref(
        &self,
        command: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(command, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            (self.0)()
                .into_iter()
                .map(clap::builder::PossibleValue::new),
        ))
    }
}

fn transport_names() -> Vec<&'static str> {
    rtsoak_record::transport::Name::ids()
}

fn profile_names() -> Vec<&'static str> {
    crate::profile::builtin_names().to_vec()
}

/// Parse the process's arguments with [`command`]; exits with clap's message on a usage error.
pub fn parse() -> Cli {
    use clap::FromArgMatches;
    Cli::from_arg_matches(&command().get_matches()).unwrap_or_else(|error| error.exit())
}

/// Options shared by `run` and `compare`.
#[derive(Debug, Args)]
pub(crate) struct SoakArgs {
    /// Profile: a name (installed in /etc/rtsoak/profiles, else built-in) or a path to a TOML
    /// file.
    #[arg(short, long, default_value = "default",
        value_parser = Named(profile_names), hide_possible_values = true)]
    pub(crate) profile: String,
    /// What the command line changes in the profile.
    #[command(flatten)]
    pub(crate) overrides: Overrides,
    /// Result directory (default: `rtsoak-results/<UTC time>-<command>`).
    #[arg(short, long)]
    pub(crate) output: Option<PathBuf>,
    /// Print the result document (JSON) on stdout instead of the table.
    #[arg(long)]
    pub(crate) json: bool,
    /// After the headline view, print every other table: integrity counts, each latency
    /// series with its percentiles, the rate tests, the causes, the rounds, the legend and
    /// every caveat.
    #[arg(long)]
    pub(crate) details: bool,
    /// Also write these formats into the result directory (comma-separated).
    #[arg(long, value_delimiter = ',',
        value_parser = clap::builder::PossibleValuesParser::new(rtsoak_report::names()))]
    pub(crate) export: Vec<String>,
    /// Beside every run, run the floor pair: the same two processes, CPUs, priorities, memory
    /// locking and wake calls, without the harness (no queue, no attribution, no interval
    /// frames), interleaved in the same rounds; then show the harness's overhead per figure
    /// (docs/floor.md). The floor runs are recorded apart (`floor_runs`) and judged by nothing.
    #[arg(long)]
    pub(crate) floor: bool,
    /// When another rtsoak holds the RT CPUs or is queued for them, queue up to this long
    /// (e.g. `2h`) instead of refusing at once (exit 6): first come, first served, so a run
    /// queued earlier goes first however often a later one asks (docs/cli.md).
    #[arg(long, value_parser = parse_duration_ns, value_name = "DURATION")]
    pub(crate) wait_for_cpus: Option<u64>,
    #[command(flatten)]
    pub(crate) nightly: NightlyArgs,
}

/// Options for scheduled runs: the baseline, where results go and how many are kept, metrics.
#[derive(Debug, Args)]
pub(crate) struct NightlyArgs {
    /// Compare the result with this baseline (a result.json or its directory, e.g. one made by
    /// `rtsoak baseline promote`), read before anything runs; a regression exits 3. A missing
    /// baseline is a warning; one that is not a result exits 2.
    #[arg(long, value_name = "PATH")]
    pub(crate) baseline: Option<PathBuf>,
    /// Put the timestamped result directory in DIR (default `rtsoak-results`), and point
    /// `DIR/latest` at it.
    #[arg(long, value_name = "DIR", conflicts_with = "output")]
    pub(crate) results_dir: Option<PathBuf>,
    /// Keep only the newest N result directories beside this one (rtsoak's own only).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) keep: Option<u64>,
    /// Remove result directories beside this one started more than D days ago (any count; one
    /// too large to count in seconds keeps them all).
    #[arg(long, value_name = "D", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) keep_days: Option<u64>,
    /// Write the metrics and the verdict, in Prometheus text format, to
    /// `DIR/rtsoak-<profile>.prom` atomically (the node_exporter textfile directory). DIR is
    /// opened before anything runs: one rtsoak must not write into exits 2 then, a missing one
    /// is a warning.
    #[arg(long, value_name = "DIR")]
    pub(crate) textfile_dir: Option<PathBuf>,
}

/// `rtsoak baseline` sub-commands.
#[derive(Debug, Subcommand)]
pub(crate) enum BaselineCommand {
    /// Make a result the baseline: copy its result.json into DIR atomically.
    Promote {
        /// The result to promote (a result.json or its directory, e.g. `.../latest`).
        result: PathBuf,
        /// Baseline directory (created if missing).
        #[arg(long, default_value = "rtsoak-baseline", value_name = "DIR")]
        to: PathBuf,
        /// Promote it even if it cannot stand for a baseline (interrupted, a failed run, lost
        /// messages, a transport failure, inconclusive, or empty), which is refused otherwise.
        #[arg(long)]
        force: bool,
    },
}

/// The process's arguments as the result records them: any bytes (lossily shown where they are
/// not UTF-8), never a panic.
pub(crate) fn argv() -> Vec<String> {
    std::env::args_os()
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cli_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
