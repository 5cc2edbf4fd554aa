//! The `rtsoak bench` command line (clap derive): one sub-command per benchmark plus `compare`.
//! Doc comments here are the `--help` text.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::record::{Policy, RingSetup};

/// `rtsoak bench <name>`.
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// K IORING_OP_FUTEX_WAIT then K IORING_OP_FUTEX_WAKE per cycle on one ring; ns per pair.
    FutexWaitWake {
        /// Futex words (wait/wake pairs) per cycle.
        #[arg(short, long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=4096))]
        k: u32,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// V IORING_OP_FUTEX_WAITV over W words each, one element woken per vector; ns per pair.
    FutexWaitv {
        /// Wait vectors per cycle.
        #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=2048))]
        vectors: u32,
        /// Words per vector (the kernel allows at most 128).
        #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=128))]
        width: u32,
        /// The element woken in each vector (0-based, below --width).
        #[arg(long, default_value_t = 3)]
        wake_index: u32,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Uncontended futex(FUTEX_WAKE) calls per thread count, each thread on its own word and CPU.
    FutexSyscall {
        /// Calls per cycle per thread.
        #[arg(short, long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
        k: u32,
        /// Thread counts to measure, comma-separated (default: 1, 2, 4, ... up to the CPUs).
        #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..=4096))]
        threads: Option<Vec<u32>>,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// K IORING_OP_MSG_RING messages per cycle from one ring into another; ns per message.
    MsgRing {
        /// Messages per cycle.
        #[arg(short, long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=4096))]
        k: u32,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// K eventfd writes read back through io_uring per cycle; ns per message.
    Eventfd {
        /// Messages (eventfds) per cycle.
        #[arg(short, long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=4096))]
        k: u32,
        #[command(flatten)]
        common: CommonArgs,
    },
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
