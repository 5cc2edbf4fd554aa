//! The bench result document: one JSON file per `rtsoak bench <name>` invocation, with its own
//! schema version (it is not a soak result), saved atomically. Documented in
//! `docs/result-schema.md`, section "Bench results".

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use super::checks::Checks;
use super::summary::RoundsSummary;
use crate::record::HostFacts;
use crate::record::{Policy, RingSetup};
use crate::result::Tool;

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
    /// The benchmark: `futex-wait-wake`, `futex-waitv`, `futex-syscall`, `msg-ring`, `eventfd`.
    pub bench: String,
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
    /// Build a series and its summary from its rounds.
    pub fn new(name: &str, op: &str, ops_per_cycle: u64, rounds: Vec<Round>) -> Self {
        let measured: Vec<(f64, bool)> = rounds
            .iter()
            .filter(|r| !r.warmup)
            .map(|r| (r.ns_per_op, r.valid))
            .collect();
        BenchSeries {
            name: name.to_string(),
            op: op.to_string(),
            ops_per_cycle,
            summary: RoundsSummary::new(&measured),
            rounds,
        }
    }

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

/// Load a bench result (a `bench.json`, or a directory holding one). Refuses soak results and
/// other schema versions with a message saying what was found.
pub fn load(path: &Path) -> anyhow::Result<BenchDoc> {
    let file: PathBuf = if path.is_dir() {
        path.join(BENCH_FILE)
    } else {
        path.to_path_buf()
    };
    let text = std::fs::read_to_string(&file).with_context(|| {
        format!(
            "reading bench result {}: give the bench.json (or its directory) that \
             `rtsoak bench` wrote",
            file.display()
        )
    })?;
    let value: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", file.display()))?;
    anyhow::ensure!(
        value.get("command").and_then(|v| v.as_str()) == Some(BENCH_COMMAND),
        "{} is not an rtsoak bench result (soak results are compared with `rtsoak compare`)",
        file.display()
    );
    let version = value.get("schema_version").and_then(|v| v.as_u64());
    anyhow::ensure!(
        version == Some(u64::from(BENCH_SCHEMA_VERSION)),
        "{} has bench schema version {version:?}; this rtsoak reads version \
         {BENCH_SCHEMA_VERSION}",
        file.display()
    );
    let doc: BenchDoc = serde_json::from_value(value)
        .with_context(|| format!("{} is not a valid rtsoak bench result", file.display()))?;
    times_measured(&doc)
        .with_context(|| format!("{} is not a valid rtsoak bench result", file.display()))?;
    Ok(doc)
}

/// Every round took a time: a positive, finite ns per operation. A comparison divides by the
/// parents' means, so a zero or a negative one read from a file would make any change look
/// like none (or like infinity).
fn times_measured(doc: &BenchDoc) -> anyhow::Result<()> {
    for series in &doc.series {
        for round in &series.rounds {
            anyhow::ensure!(
                round.ns_per_op.is_finite() && round.ns_per_op > 0.0,
                "round {} of series {} has ns_per_op {}, which no operation takes; give the \
                 bench.json `rtsoak bench` wrote",
                round.index,
                crate::sys::text::quote(&series.name),
                round.ns_per_op
            );
        }
    }
    Ok(())
}
