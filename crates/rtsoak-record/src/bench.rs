//! The bench result document: one JSON file per `rtsoak bench <name>` invocation, with its own
//! schema version (it is not a soak result), saved atomically. Documented in
//! `docs/result-schema.md`, section "Bench results".

use serde::{Deserialize, Serialize};

use crate::result::Tool;
use crate::{HostFacts, Policy, RingSetup};

/// Bumped on any incompatible change of the bench document's shape.
pub const BENCH_SCHEMA_VERSION: u32 = 1;

/// The `command` field of every bench document: what tells it from a soak result.
pub const BENCH_COMMAND: &str = "bench";

/// One bench invocation's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchDoc {
    /// [`BENCH_SCHEMA_VERSION`] of the writer.
    pub schema_version: u32,
    /// Tool name and version.
    pub tool: Tool,
    /// Always `bench`.
    pub command: String,
    /// The benchmark.
    pub bench: BenchName,
    /// The command line as given.
    pub argv: Vec<String>,
    /// Wall-clock start and end, RFC 3339 UTC.
    pub started_at: String,
    /// See `started_at`.
    pub finished_at: String,
    /// The machine (kernel release, PREEMPT_RT, CPU model, ...).
    pub host: HostFacts,
    /// What the bench was asked to do: a comparison refuses points whose configs differ.
    pub config: BenchConfig,
    /// What the measuring thread(s) really got.
    pub setup: Setup,
    /// One series per measured variant (one for most benches, one per thread count for
    /// `futex-syscall`).
    pub series: Vec<BenchSeries>,
    /// True when every round (warm-up included) passed every check.
    pub valid: bool,
}

/// A benchmark, by its sub-command's name (`rtsoak bench futex-wait-wake`), which is also its
/// id in the document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BenchName {
    /// io_uring futex wait/wake pairs on K words.
    FutexWaitWake,
    /// io_uring futex waitv on vectors of words.
    FutexWaitv,
    /// The futex system calls from several threads.
    FutexSyscall,
    /// io_uring MSG_RING messages between two rings.
    MsgRing,
    /// eventfd writes read through io_uring.
    Eventfd,
}

impl BenchName {
    /// The sub-command, and the id in the document.
    pub const fn name(self) -> &'static str {
        match self {
            BenchName::FutexWaitWake => "futex-wait-wake",
            BenchName::FutexWaitv => "futex-waitv",
            BenchName::FutexSyscall => "futex-syscall",
            BenchName::MsgRing => "msg-ring",
            BenchName::Eventfd => "eventfd",
        }
    }

    /// Every bench, in the order `--help` lists them.
    pub const ALL: [BenchName; 5] = [
        BenchName::FutexWaitWake,
        BenchName::FutexWaitv,
        BenchName::FutexSyscall,
        BenchName::MsgRing,
        BenchName::Eventfd,
    ];

    /// True for the benches that wait on futex words, whose words [`BenchConfig::shared`]
    /// describes.
    pub const fn waits_on_futex_words(self) -> bool {
        matches!(
            self,
            BenchName::FutexWaitWake | BenchName::FutexWaitv | BenchName::FutexSyscall
        )
    }
}

/// The bench's parameters, as resolved from the flags.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BenchConfig {
    /// Requests (or calls) per cycle per vector/thread: K futex words, K messages, K calls.
    pub k: u32,
    /// futex-waitv: vectors per cycle (else null).
    pub vectors: Option<u32>,
    /// futex-waitv: words per vector (else null).
    pub width: Option<u32>,
    /// futex-waitv: the element woken in each vector (else null).
    pub wake_index: Option<u32>,
    /// futex-syscall: the thread counts measured (else null).
    pub thread_counts: Option<Vec<u32>>,
    /// Futex words are MAP_SHARED memfd words waited on without the PRIVATE flag.
    pub shared: bool,
    /// Bytes between consecutive futex words (one cache line each).
    pub word_stride_bytes: u32,
    /// Warm-up rounds (reported, left out of every figure).
    pub warmup_rounds: u32,
    /// Measured rounds.
    pub rounds: u32,
    /// Cycles per round.
    pub cycles: u32,
    /// CPU of the measuring thread (futex-syscall: of its first thread).
    pub cpu: usize,
    /// Requested scheduling policy.
    pub policy: Policy,
    /// Requested priority (ignored for `other`).
    pub priority: u8,
    /// Requested ring setup flags (benches with a ring).
    pub ring_setup: RingSetup,
}

/// What the measuring thread really ran with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setup {
    /// CPUs the measuring thread(s) were pinned to.
    pub cpus: Vec<usize>,
    /// Policy as the kernel reports it after the attempt (`fifo`, `rr`, `other`, ...).
    pub policy: String,
    /// Priority as the kernel reports it.
    pub priority: u8,
    /// `mlockall` succeeded.
    pub memory_locked: bool,
    /// Ring setup really obtained (after any fallback); null for benches without a ring.
    pub ring_setup: Option<RingSetup>,
    /// What did not go as asked, in words.
    pub warnings: Vec<String>,
}

/// The rounds of one measured variant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchSeries {
    /// `futex-wait-wake`, `threads-4`, ...: what a comparison matches series by.
    pub name: String,
    /// What one operation is: `wait/wake pair`, `waitv/wake pair`, `futex call`, `message`.
    pub op: String,
    /// Operations per cycle.
    pub ops_per_cycle: u64,
    /// Every round, warm-up first.
    pub rounds: Vec<Round>,
    /// Figures over the measured rounds.
    pub summary: RoundsSummary,
}

impl BenchSeries {
    /// ns/op of the measured rounds, in order.
    pub fn measured_ns_per_op(&self) -> Vec<f64> {
        self.rounds
            .iter()
            .filter(|r| !r.warmup)
            .map(|r| r.ns_per_op)
            .collect()
    }
}

/// One round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Round {
    /// 0-based, warm-up rounds first.
    pub index: usize,
    /// A warm-up round (left out of every figure).
    pub warmup: bool,
    /// Cycles completed.
    pub cycles: u32,
    /// Operations completed.
    pub ops: u64,
    /// Between the round's two clock reads (futex-syscall: mean over threads), ns.
    pub elapsed_ns: u64,
    /// `elapsed_ns / ops`.
    pub ns_per_op: f64,
    /// Passed every check.
    pub valid: bool,
    /// The checks.
    pub checks: Checks,
}

/// File name of a bench result inside its result directory.
pub const BENCH_FILE: &str = "bench.json";

/// Headline figures of the measured rounds of one series.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct RoundsSummary {
    /// Measured rounds (warm-up rounds excluded).
    pub measured_rounds: usize,
    /// Measured rounds that passed every check.
    pub valid_rounds: usize,
    /// Mean ns per operation over the measured rounds.
    pub mean_ns_per_op: f64,
    /// Median ns per operation over the measured rounds.
    pub median_ns_per_op: f64,
    /// Coefficient of variation of the measured rounds' ns per operation, percent.
    pub cv_pct: f64,
    /// Fastest measured round, ns per operation.
    pub min_ns_per_op: f64,
    /// Slowest measured round, ns per operation.
    pub max_ns_per_op: f64,
}

/// The checks of one round as saved: the counts and the names of the checks that failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checks {
    /// Completions the planned cycles had to produce.
    pub expected_completions: u64,
    /// Completions validated.
    pub completions: u64,
    /// Completions with the wrong result.
    pub bad_results: u64,
    /// The first of them.
    pub first_bad: Option<BadResult>,
    /// Waits that timed out.
    pub timeouts: u64,
    /// Calls that failed.
    pub call_errors: u64,
    /// The first failed call's errno, e.g. `EINVAL`.
    pub first_call_error: Option<String>,
    /// CQ overflow during the round.
    pub cq_overflow: u64,
    /// Waiters left behind (futex-waitv only; null elsewhere).
    pub residual_waiters: Option<u64>,
    /// The pinned CPU.
    pub cpu: usize,
    /// `sched_getcpu` at the round's start and end.
    pub cpu_at_start: i32,
    /// See `cpu_at_start`.
    pub cpu_at_end: i32,
    /// Names of the failed checks: `cycles`, `completions`, `results`, `timeout`, `calls`,
    /// `overflow`, `residual`, `cpu`. Empty: the round is valid.
    pub failed: Vec<String>,
}

/// The first completion whose result was not the expected one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BadResult {
    /// The completion's user data (which request it was; each bench documents its numbering).
    pub user_data: u64,
    /// What the kernel returned (a negative errno for a failed request).
    pub result: i64,
    /// What it had to return.
    pub expected: i64,
}

#[cfg(test)]
mod tests {
    use super::BenchName;

    #[test]
    fn a_bench_is_stored_by_its_sub_command_name() {
        for bench in BenchName::ALL {
            assert_eq!(crate::serde_id(bench), bench.name());
            let read: BenchName = serde_json::from_str(&format!("\"{}\"", bench.name())).unwrap();
            assert_eq!(read, bench);
        }
    }
}
