//! The result document's types: the document, each run of it, and what a run's noise did, as
//! `docs/result-schema.md` documents them field by field.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::noise_setup::{NoiseKind, NoiseSetup};
use super::run_key::RunKey;
use super::{decision, explain, verdict};
use crate::RingSetup;
use crate::plan::RunPlan;
use crate::{BreakEvent, SeriesKey, TransportSupport};
use crate::{BurstReport, Counters, Hygiene, LoadCount, Role, RtSetup};
use crate::{CpuDmaLatency, CpuWait, HostFacts, SystemCheck};
use crate::{Integrity, Outlier, SampleStats, Summary};

/// Bumped on any incompatible change of the document's shape.
pub const SCHEMA_VERSION: u32 = 3;

/// One invocation's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultDoc {
    /// [`SCHEMA_VERSION`] of the writer.
    pub schema_version: u32,
    /// Tool name and version.
    pub tool: Tool,
    /// Sub-command: `run` or `compare`.
    pub command: String,
    /// The command line as given.
    pub argv: Vec<String>,
    /// Wall-clock start, RFC 3339 UTC.
    pub started_at: String,
    /// Wall-clock end, RFC 3339 UTC (absent while the invocation is in progress).
    pub finished_at: Option<String>,
    /// True if a signal stopped the invocation before it finished.
    pub interrupted: bool,
    /// The machine it ran on.
    pub host: HostFacts,
    /// Everything the runs were told to do.
    pub plan: RunPlan,
    /// What the runs' figures are worth: conditions a reader must know (not an RT kernel, no
    /// RT priority, shared CPUs, ...), most serious first, each with its severity and kind
    /// (version 1 held the sentences alone). Empty only on a properly set up RT machine.
    pub caveats: Vec<crate::Caveat>,
    /// Support of every registry transport on this kernel.
    pub support: Vec<TransportSupport>,
    /// One entry per transport run, in the order run.
    pub runs: Vec<RunResult>,
    /// The system check made before the first run, in full (absent in results written before
    /// rtsoak had one).
    #[serde(default)]
    pub system_check: Option<SystemCheck>,
    /// What was held on `/dev/cpu_dma_latency` for the whole invocation, or why nothing was.
    #[serde(default)]
    pub cpu_dma_latency: Option<CpuDmaLatency>,
    /// How long the invocation waited for its RT CPUs (`--wait-for-cpus`), its place in the
    /// queue on arrival and whom it waited behind; absent where it took them at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_wait: Option<CpuWait>,
    /// Where rtsoak mounted tracefs for the explainer or `--break-on` because nothing was
    /// mounted (absent: it was mounted already, or not needed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracefs_mounted: Option<String>,
    /// What the comparison decides (per series, the transports ranked and which differ
    /// significantly; each explained transport's main cause), written when the invocation ends
    /// (absent while in progress and in older results; `report` derives it then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<decision::Decision>,
    /// The pass/fail verdict against `plan.verdict` (and the baseline, with `--baseline`),
    /// written when the invocation ends (absent while in progress and in older results).
    #[serde(default)]
    pub verdict: Option<verdict::Verdict>,
    /// `--floor`: the floor pair's runs, one beside each run of `runs` (same transport, ring
    /// setup and round, interleaved with it), in the order run. The same schema as `runs`;
    /// judged by nothing (no caveat, decision or verdict reads them): they are what the
    /// harness is measured against (`docs/floor.md`). Absent without `--floor`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub floor_runs: Vec<RunResult>,
    /// Each transport's tail estimates over all its rounds at once, where it ran several
    /// (`verdict.max_expected_per_day_us` judges these, not each round's), written when the
    /// invocation ends. Absent with one round, and in older results.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tail_pooled: Vec<crate::PooledTail>,
    /// What the `--on-end` actions did, in order, once the runs were over (absent without
    /// them, and in older results).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub end_actions: Vec<super::actions::ActionRecord>,
}

/// Name and version of the tool that wrote a result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tool {
    /// `rtsoak`.
    pub name: String,
    /// Crate version.
    pub version: String,
}

impl Tool {
    /// This build of rtsoak (every crate of the workspace has its version).
    pub fn current() -> Self {
        Tool {
            name: "rtsoak".to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunStatus {
    /// Ran its whole duration.
    Completed,
    /// Stopped early by a signal; what was measured is kept.
    Interrupted,
    /// A worker failed or stopped responding; what was measured is kept.
    Failed,
    /// The kernel lacks the transport; nothing ran.
    Unsupported,
}

/// One transport under the plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Registry name of the transport (schema version 1 wrote `name (setup)` here in a
    /// ring-setup comparison; `rtsoak::store::from_bytes` reads that back as the name and the
    /// setup).
    pub transport: String,
    /// Which round of the comparison (from 1); every transport runs once per round.
    #[serde(default = "first_round")]
    pub round: u32,
    /// With several ring setups compared: the setup this run asked for, so each setup is its
    /// own row (see [`RunKey`]). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ring_setup_requested: Option<RingSetup>,
    /// How it ended.
    pub status: RunStatus,
    /// Why it did not complete, if it did not.
    pub reason: Option<String>,
    /// The sample that crossed `--break-on`, if one did.
    #[serde(default)]
    pub break_event: Option<BreakEvent>,
    /// Wall-clock start, RFC 3339 UTC.
    pub started_at: String,
    /// Measured time actually covered, ns.
    pub measured_ns: u64,
    /// Ring setup the subscriber really got (after any fallback).
    pub ring_setup: Option<RingSetup>,
    /// Messages sent, delivered, lost, ...
    pub integrity: Integrity,
    /// Latency series by name: `send_call`, `fanout`, `timer`, `member_refresh` (RT publisher),
    /// `delivery`, `own_wake` (where attributable), `handling`, `other_delivery` (RT
    /// subscriber), `noise_send_call`, `noise_delivery` (queue noise). docs/figures.md defines
    /// each.
    pub series: BTreeMap<SeriesKey, SeriesResult>,
    /// Per-interval histograms, to place a spike in time.
    pub intervals: Vec<Interval>,
    /// Each RT worker as it recorded itself.
    pub workers: Vec<WorkerRecord>,
    /// What the noise did during this run (all zero with `--no-noise`).
    pub noise: NoiseActivity,
    /// Busy share of each CPU from the first period to the end of the run, percent (from
    /// `/proc/stat`): where the load actually went.
    pub cpu_busy_percent: BTreeMap<usize, f64>,
    /// The coordinator's own wakeups on the RT CPUs while the run measured (absent in older
    /// results and in runs that never started).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coordinator: Option<crate::CoordinatorActivity>,
    /// Why each send-call and delivery spike happened (absent when the explainer was off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<explain::Explanation>,
    /// Extreme-value tail estimates by series (`send_call`, `delivery`, `own_wake`, `timer`):
    /// the fitted model or why there is none (absent in older results and unmeasured runs).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tail: BTreeMap<SeriesKey, crate::TailEstimate>,
    /// What the `--on-threshold` actions did in this run (absent without them, and in older
    /// results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actions: Option<super::actions::RunActions>,
}

/// Everything the noise of one run actually did, so a quiet run can never pass for a noisy one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NoiseActivity {
    /// Whether noise was planned for this run.
    pub enabled: bool,
    /// CPUs the noise was pinned to.
    pub cpus: Vec<usize>,
    /// CPUs noise workers were seen running on.
    pub cpus_observed: Vec<usize>,
    /// Queue noise: the lower-priority publishers and subscribers.
    pub queue: QueueNoiseActivity,
    /// Busy bursts (absent when off).
    pub bursts: Option<BurstReport>,
    /// Load generators that ran, by name.
    pub load: BTreeMap<String, LoadCount>,
    /// The external load command, if one ran.
    pub external: Option<ExternalActivity>,
    /// Per kind of noise: what the profile asked for (policy, priority, CPUs) and what its
    /// workers got, as counts (absent in results written before it was recorded).
    #[serde(default)]
    pub setup: BTreeMap<NoiseKind, NoiseSetup>,
    /// Noise workers that failed: how many, and the first few errors. A worker (or burst
    /// thread) that did not get the policy, priority or CPUs it asked for is one of them.
    pub failures: u64,
    /// Up to ten distinct failure messages.
    pub errors: Vec<String>,
    /// Noise the profile asked for that did no work (a kind that started nothing, a generator
    /// with no operation), one sentence each. Absent in older results.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub idle: Vec<String>,
    /// Noise workers that died (killed by a signal, ended with an error status, or killed by
    /// rtsoak after hanging past the stop): each one fails its run. Absent in older results.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deaths: Vec<NoiseDeath>,
}

/// A noise worker that died before the run let it finish.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoiseDeath {
    /// Its role (`load`, `burst`, `noise-publisher`, `noise-subscriber`).
    pub role: Role,
    /// Its pid.
    pub pid: i32,
    /// How it ended: `signal: 9 (SIGKILL)`, `exit status: 1`, or `killed by rtsoak after it
    /// did not stop`.
    pub exit: String,
}

impl NoiseDeath {
    /// One sentence: `the load worker (pid 1234) died: signal: 9 (SIGKILL)`.
    pub fn sentence(&self) -> String {
        format!(
            "the {} worker (pid {}) died: {}",
            self.role.name(),
            self.pid,
            self.exit
        )
    }
}

/// What the queue noise did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueNoiseActivity {
    /// Noise publisher processes started.
    pub publishers_started: u64,
    /// Noise publisher processes that ended.
    pub publishers_stopped: u64,
    /// Noise subscriber processes started.
    pub subscribers_started: u64,
    /// Noise subscriber processes that ended.
    pub subscribers_stopped: u64,
    /// Messages the noise publishers sent.
    pub messages_sent: u64,
    /// Messages the noise subscribers received.
    pub messages_received: u64,
    /// Messages published while a noise subscriber was a member that it never received
    /// (should be 0: every member gets every message).
    pub member_misses: u64,
    /// Noise publishers' failed wake calls.
    pub wake_errors: u64,
    /// Noise publishers' wakes of subscribers that had just left (a membership race).
    pub departed_wakes: u64,
}

/// The external load command and how it ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExternalActivity {
    /// The argv it ran with.
    pub argv: Vec<String>,
    /// Its pid.
    pub pid: i32,
    /// How it ended (`exit status: 0`, `signal: 15 (SIGTERM)` when rtsoak stopped it, ...).
    pub exit: String,
}

fn first_round() -> u32 {
    1
}

/// One latency series over the whole measured phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesResult {
    /// Headline figures, ns.
    pub summary: Summary,
    /// The merged histogram: base64 of HdrHistogram V2 + DEFLATE, values in ns.
    pub histogram: String,
    /// Samples over the threshold with their time, in time order, at most `plan.outliers_max`:
    /// the largest of the run when more went over (results written before kept the first).
    pub outliers: Vec<Outlier>,
    /// Over-threshold samples beyond the list.
    pub outliers_dropped: u64,
    /// Every sample of the run over this many ns is in `outliers`: the threshold while none was
    /// dropped, else the largest one dropped. Absent in results written before (whose full list
    /// held the run's first samples) and where the worker left no list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outliers_complete_over_ns: Option<u64>,
}

/// One interval of the measured phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Interval number from 0.
    pub index: u32,
    /// Start, ns after the measured phase began.
    pub start_ns: u64,
    /// Length, ns (the last one may be shorter).
    pub length_ns: u64,
    /// Per series: exact counters and the interval's encoded histogram.
    pub series: BTreeMap<SeriesKey, IntervalSeries>,
}

/// One series within one interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalSeries {
    /// Exact counters.
    pub stats: SampleStats,
    /// base64 of HdrHistogram V2 + DEFLATE, ns, at two significant digits: for the headline
    /// series only ([`SeriesKey::is_headline`]). A diagnostic series keeps its exact counters
    /// per interval and its histogram for the whole run, so a long result stays small. Results
    /// written before held one for every series.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<String>,
}

/// A worker as it recorded itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerRecord {
    /// Its role.
    pub role: Role,
    /// Process id.
    pub pid: i32,
    /// What it achieved in becoming real-time.
    pub setup: RtSetup,
    /// Page faults, context switches and peak RSS over the measured phase.
    pub hygiene: Hygiene,
    /// Its counters.
    pub counters: Counters,
    /// How the process ended (`exit status 0`, `killed by SIGKILL`, ...).
    pub exit: String,
    /// The error it reported, if any.
    pub error: Option<String>,
}

impl NoiseActivity {
    /// True when the noise did something: a process started, a burst ran, a load operation
    /// completed, or the external command ran.
    pub fn ran(&self) -> bool {
        self.queue.publishers_started > 0
            || self.queue.subscribers_started > 0
            || self.bursts.is_some_and(|b| b.bursts > 0)
            || self.load.values().any(|l| l.operations > 0)
            || self.external.is_some()
    }
}

/// Where a run's key is kept in it.
impl<'a> RunKey<'a> {
    /// Record this key in `run`.
    pub fn apply(&self, run: &mut RunResult) {
        run.transport = self.transport.to_string();
        run.ring_setup_requested = self.ring_setup;
    }

    /// The key `run` was recorded under.
    pub fn of(run: &RunResult) -> RunKey<'_> {
        RunKey {
            transport: &run.transport,
            ring_setup: run.ring_setup_requested,
        }
    }
}
