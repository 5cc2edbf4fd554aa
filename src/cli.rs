//! The command line (clap derive). Doc comments here are the `--help` text.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::plan::FutexWake;

use crate::record::{Policy, RingSetup};

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
    pub quiet: bool,
    #[command(subcommand)]
    pub command: Command,
}

/// Sub-commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Soak one transport.
    Run {
        /// Transport to soak (see `rtsoak probe` for what this kernel supports).
        #[arg(short, long)]
        transport: String,
        #[command(flatten)]
        soak: SoakArgs,
    },
    /// Soak several transports in turn under identical conditions and print one table.
    Compare {
        /// Transports to compare, comma-separated (default: the profile's list, or every one).
        #[arg(short, long, value_delimiter = ',')]
        transports: Option<Vec<String>>,
        #[command(flatten)]
        soak: SoakArgs,
    },
    /// Check the system for real-time measurement (kernel, isolation, interrupts, tasks,
    /// frequency, idle states, privileges) and report which transports this kernel supports.
    Probe {
        /// Print the whole check and the transport matrix as JSON.
        #[arg(long)]
        json: bool,
        /// RT CPUs to judge, publisher then subscriber (default: the profile's choice here).
        #[arg(long, value_parser = parse_cpus)]
        rt_cpus: Option<CpuList>,
        /// Profile whose CPU layout and RT policy are judged.
        #[arg(short, long, default_value = "default")]
        profile: String,
    },
    /// Re-render saved results (a result.json or its directory) in any output format.
    Report {
        /// Result files or result directories.
        #[arg(required = true)]
        results: Vec<PathBuf>,
        /// Output format.
        #[arg(short, long, default_value = "table",
            value_parser = clap::builder::PossibleValuesParser::new(crate::export::names()))]
        format: String,
        /// Write to this file (one result) or directory (one file per result) instead of stdout.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// List the built-in profiles, or print one.
    Profiles {
        /// Print this profile's TOML.
        #[arg(long)]
        show: Option<String>,
    },
    /// Compare a result with a baseline per transport and series: over-threshold rates (exact
    /// test for rare counts, alpha 0.01), p99.9, p99.99 and the maximum; exit 3 on a regression.
    Diff {
        /// The baseline result (a result.json or its directory).
        baseline: PathBuf,
        /// The new result.
        new: PathBuf,
        /// Print the comparison as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Manage the baseline that `diff` and `--baseline` compare against.
    Baseline {
        #[command(subcommand)]
        command: BaselineCommand,
    },
    /// Per-operation microbenchmarks (ns per futex wait/wake pair, ...) and their A/B/A comparison.
    Bench {
        #[command(subcommand)]
        bench: crate::bench::args::BenchCommand,
    },
    /// Internal: a worker process started by the coordinator.
    #[command(hide = true)]
    Worker,
}

/// Options shared by `run` and `compare`; each overrides the profile value.
#[derive(Debug, Args)]
pub struct SoakArgs {
    /// Built-in profile name or path to a TOML profile.
    #[arg(short, long, default_value = "default")]
    pub profile: String,
    /// Measured time per transport (e.g. `600s`, `10m`).
    #[arg(short, long, value_parser = parse_duration_ns)]
    pub duration: Option<u64>,
    /// Rounds of a comparison: every transport runs once per round, for duration / rounds.
    #[arg(long)]
    pub rounds: Option<u32>,
    /// Warm-up per run before measuring (e.g. `500ms`).
    #[arg(long, value_parser = parse_duration_ns)]
    pub warmup: Option<u64>,
    /// Publisher period (e.g. `500us`).
    #[arg(long, value_parser = parse_duration_ns)]
    pub period: Option<u64>,
    /// Latency counted as over threshold (e.g. `100us`).
    #[arg(long, value_parser = parse_duration_ns)]
    pub threshold: Option<u64>,
    /// Length of each per-interval histogram (e.g. `10s`).
    #[arg(long, value_parser = parse_duration_ns)]
    pub interval: Option<u64>,
    /// CPUs of the RT publisher and subscriber, in that order (e.g. `4,5`).
    #[arg(long, value_parser = parse_cpus)]
    pub rt_cpus: Option<CpuList>,
    /// CPUs for noise and the coordinator (e.g. `0-1`).
    #[arg(long, value_parser = parse_cpus)]
    pub noise_cpus: Option<CpuList>,
    /// Priority of both RT workers (1..=99).
    #[arg(long)]
    pub priority: Option<u8>,
    /// Scheduling policy of both RT workers.
    #[arg(long, value_enum)]
    pub policy: Option<PolicyArg>,
    /// Setup flags of the subscriber's ring; several (comma-separated) compare each as its own
    /// row, e.g. `defer-taskrun,coop-taskrun,none`.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub ring_setup: Option<Vec<RingSetupArg>>,
    /// How the futex transport wakes.
    #[arg(long, value_enum)]
    pub futex_wake: Option<FutexWakeArg>,
    /// A quiet baseline: no noise, whatever the profile says.
    #[arg(long)]
    pub no_noise: bool,
    /// Result directory (default: `rtsoak-results/<UTC time>-<command>`).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Print the result document (JSON) on stdout instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Also write these formats into the result directory (comma-separated).
    #[arg(long, value_delimiter = ',',
        value_parser = clap::builder::PossibleValuesParser::new(crate::export::names()))]
    pub export: Vec<String>,
    /// Write a marker into the ftrace buffer and stop tracing when a send call or delivery
    /// takes longer than this (microseconds, or with a unit: `200us`), then stop the run.
    #[arg(long, value_parser = parse_break_on_ns, value_name = "US")]
    pub break_on: Option<u64>,
    /// After `--break-on` fires, carry on measuring (tracing stays off).
    #[arg(long, requires = "break_on")]
    pub break_on_continue: bool,
    /// Do not hold /dev/cpu_dma_latency at 0 during the runs (profile `system.hold_cpu_dma_latency`).
    #[arg(long)]
    pub no_cpu_dma_latency: bool,
    /// When another rtsoak holds the RT CPUs, wait up to this long for it to finish (e.g. `2h`)
    /// instead of refusing at once (exit 6).
    #[arg(long, value_parser = parse_duration_ns, value_name = "DURATION")]
    pub wait_for_cpus: Option<u64>,
    /// Tests only: break the measurement on purpose (`rt-wake-lost`: the RT publisher never
    /// wakes the RT subscriber), to prove such a run cannot pass. Recorded in the result.
    #[arg(long, value_enum, hide = true)]
    pub inject_fault: Option<FaultArg>,
    #[command(flatten)]
    pub nightly: NightlyArgs,
}

/// Options for scheduled runs: the baseline, where results go and how many are kept, metrics.
#[derive(Debug, Args)]
pub struct NightlyArgs {
    /// Compare the result with this baseline (a result.json or its directory, e.g. one made by
    /// `rtsoak baseline promote`); a regression exits 3. A missing baseline is a warning.
    #[arg(long, value_name = "PATH")]
    pub baseline: Option<PathBuf>,
    /// Put the timestamped result directory in DIR (default `rtsoak-results`), and point
    /// `DIR/latest` at it.
    #[arg(long, value_name = "DIR", conflicts_with = "output")]
    pub results_dir: Option<PathBuf>,
    /// Keep only the newest N result directories beside this one (rtsoak's own only).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub keep: Option<u64>,
    /// Remove result directories beside this one started more than D days ago.
    #[arg(long, value_name = "D", value_parser = clap::value_parser!(u64).range(1..))]
    pub keep_days: Option<u64>,
    /// Write the metrics and the verdict, in Prometheus text format, to
    /// `DIR/rtsoak-<profile>.prom` atomically (the node_exporter textfile directory).
    #[arg(long, value_name = "DIR")]
    pub textfile_dir: Option<PathBuf>,
}

/// `rtsoak baseline` sub-commands.
#[derive(Debug, Subcommand)]
pub enum BaselineCommand {
    /// Make a result the baseline: copy its result.json into DIR atomically.
    Promote {
        /// The result to promote (a result.json or its directory, e.g. `.../latest`).
        result: PathBuf,
        /// Baseline directory (created if missing).
        #[arg(long, default_value = "rtsoak-baseline", value_name = "DIR")]
        to: PathBuf,
    },
}

/// `--policy` values.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum PolicyArg {
    /// SCHED_FIFO
    Fifo,
    /// SCHED_RR
    Rr,
    /// SCHED_OTHER (no real-time priority)
    Other,
}

impl From<PolicyArg> for Policy {
    fn from(arg: PolicyArg) -> Self {
        match arg {
            PolicyArg::Fifo => Policy::Fifo,
            PolicyArg::Rr => Policy::Rr,
            PolicyArg::Other => Policy::Other,
        }
    }
}

/// `--ring-setup` values.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum RingSetupArg {
    /// SINGLE_ISSUER | DEFER_TASKRUN (falls back to coop-taskrun where refused)
    DeferTaskrun,
    /// COOP_TASKRUN | TASKRUN_FLAG
    CoopTaskrun,
    /// no setup flags
    None,
}

impl From<RingSetupArg> for RingSetup {
    fn from(arg: RingSetupArg) -> Self {
        match arg {
            RingSetupArg::DeferTaskrun => RingSetup::DeferTaskrun,
            RingSetupArg::CoopTaskrun => RingSetup::CoopTaskrun,
            RingSetupArg::None => RingSetup::None,
        }
    }
}

/// `--futex-wake` values.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum FutexWakeArg {
    /// futex(2) FUTEX_WAKE
    Syscall,
    /// IORING_OP_FUTEX_WAKE from the publisher's ring
    IoUring,
}

impl From<FutexWakeArg> for FutexWake {
    fn from(arg: FutexWakeArg) -> Self {
        match arg {
            FutexWakeArg::Syscall => FutexWake::Syscall,
            FutexWakeArg::IoUring => FutexWake::IoUring,
        }
    }
}

/// `--inject-fault` values.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum FaultArg {
    /// The RT publisher never wakes the RT subscriber.
    RtWakeLost,
}

impl From<FaultArg> for crate::plan::Fault {
    fn from(arg: FaultArg) -> Self {
        match arg {
            FaultArg::RtWakeLost => crate::plan::Fault::RtWakeLost,
        }
    }
}

/// `600s`, `500us`, `10m` → nanoseconds.
fn parse_duration_ns(text: &str) -> Result<u64, String> {
    let duration = humantime::parse_duration(text).map_err(|e| {
        format!("{e}: write a number with a unit, for example 500us, 10ms, 600s or 10m")
    })?;
    u64::try_from(duration.as_nanos()).map_err(|_| "duration too long".to_string())
}

/// `--break-on`: a bare number is microseconds (as cyclictest's `-b`); a unit is allowed.
fn parse_break_on_ns(text: &str) -> Result<u64, String> {
    let ns = match text.parse::<u64>() {
        Ok(us) => us.checked_mul(1_000).ok_or("too long")?,
        Err(_) => parse_duration_ns(text)?,
    };
    if ns == 0 {
        return Err("give a positive limit, for example 200 (microseconds)".to_string());
    }
    Ok(ns)
}

/// A CPU list flag (`0-1,4`), one value to clap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(pub Vec<usize>);

fn parse_cpus(text: &str) -> Result<CpuList, String> {
    crate::cpulist::parse(text)
        .map(CpuList)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_the_units_rt_people_write() {
        assert_eq!(parse_duration_ns("500us"), Ok(500_000));
        assert_eq!(parse_duration_ns("600s"), Ok(600_000_000_000));
        assert_eq!(parse_duration_ns("10m"), Ok(600_000_000_000));
        assert!(parse_duration_ns("500").unwrap_err().contains("500us"));
    }

    #[test]
    fn break_on_takes_microseconds_or_a_unit() {
        assert_eq!(parse_break_on_ns("200"), Ok(200_000));
        assert_eq!(parse_break_on_ns("1ms"), Ok(1_000_000));
        assert!(parse_break_on_ns("0").is_err());
    }

    #[test]
    fn the_cli_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
