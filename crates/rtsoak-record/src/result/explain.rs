//! Why each spike happened, as the result file records it: per over-threshold send call and
//! delivery the chain the kernel trace showed (or "unexplained", with what was missing), and per
//! series the causes with their shares. Built by `explain` from a trace of the run; see
//! `docs/explain.md` for what each link means and when an outlier counts as explained.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::cause::Cause;
pub use super::lock_kind::LockKind;

/// Most chains a result document lists, over all its runs: at most 1.6 MB of JSON (an
/// unexplained one with its reason takes about 480 bytes). A run keeps an equal share of them
/// ([`chains_per_run`]), its longest spikes': the default comparison's 8 transports list up
/// to 400 each, an 8-hour nightly of 40 planned runs 80.
pub(crate) const MAX_DOCUMENT_CHAINS: usize = 3_200;

/// The chains each run of a plan of `planned_runs` lists (at least one).
pub fn chains_per_run(planned_runs: usize) -> usize {
    (MAX_DOCUMENT_CHAINS / planned_runs.max(1)).max(1)
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

/// The explanation of one run's spikes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Explanation {
    /// What the trace could see.
    pub tracing: Tracing,
    /// Per series (`send_call`, `delivery`): how many spikes, and why.
    pub series: BTreeMap<crate::SeriesKey, SeriesBlame>,
    /// The kept outliers of those series with their chains, in time order: every one, or the
    /// longest [`MAX_DOCUMENT_CHAINS`] allows this run (`series` counts every one).
    pub outliers: Vec<ExplainedOutlier>,
    /// Kept outliers whose chain is not in `outliers` (shorter than every listed one).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub outliers_not_listed: u64,
    /// The sample that fired `--break-on`, with its chain (absent without a break).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub break_event: Option<ExplainedOutlier>,
}

/// What the trace could see, and what it could not.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Tracing {
    /// Why nothing could be traced (no tracefs, no permission), if so: every spike is then
    /// unexplained.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// Events that were asked for and that this kernel does not have (for example
    /// `lock:contention_begin` before 5.19): the chains lack what they would have said.
    pub events_missing: Vec<String>,
    /// Events the kernel buffer dropped (`[LOST N EVENTS]`); an outlier near a loss may be
    /// unexplained for that reason alone.
    pub events_lost: u64,
    /// Trace lines read.
    pub lines: u64,
    /// The file in the result directory holding every trace line read (`--keep-trace`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_file: Option<String>,
    /// Why the trace could not be kept, if it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_file_error: Option<String>,
    /// Waits recorded for the RT tasks.
    pub episodes: u64,
}

/// One series' spikes and their causes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SeriesBlame {
    /// Samples over the threshold (kept in the outlier list or not).
    pub over_threshold: u64,
    /// Outliers that were kept and so could be explained.
    pub kept: u64,
    /// Kept outliers with a chain.
    pub explained: u64,
    /// Kept outliers without one.
    pub unexplained: u64,
    /// Of those, the ones during which the trace shows an RT task on its CPU with nothing
    /// holding it back (time in the kernel path itself or taken below the kernel).
    #[serde(default)]
    pub unexplained_on_cpu: u64,
    /// The causes, most frequent first.
    pub causes: Vec<CauseShare>,
}

impl SeriesBlame {
    /// `blames` (one per run) added: counts add (saturating: a result that was read has counts
    /// that add up, `store::check`), causes add by identity, a cause's median is kept from the run
    /// whose count of it exceeded the sum so far, shares are recomputed. `None` for no blame.
    /// Linear in the causes: each is found in a map, and the list is sorted once.
    pub fn sum<'a>(blames: impl IntoIterator<Item = &'a SeriesBlame>) -> Option<SeriesBlame> {
        let mut total: Option<SeriesBlame> = None;
        let mut causes: BTreeMap<&Cause, CauseShare> = BTreeMap::new();
        for more in blames {
            let total = total.get_or_insert_with(SeriesBlame::default);
            total.over_threshold = total.over_threshold.saturating_add(more.over_threshold);
            total.kept = total.kept.saturating_add(more.kept);
            total.explained = total.explained.saturating_add(more.explained);
            total.unexplained = total.unexplained.saturating_add(more.unexplained);
            total.unexplained_on_cpu = total
                .unexplained_on_cpu
                .saturating_add(more.unexplained_on_cpu);
            for cause in &more.causes {
                match causes.get_mut(&cause.cause) {
                    Some(existing) => {
                        if cause.count > existing.count {
                            existing.median_us = cause.median_us;
                        }
                        existing.count = existing.count.saturating_add(cause.count);
                    }
                    None => {
                        causes.insert(&cause.cause, cause.clone());
                    }
                }
            }
        }
        let mut total = total?;
        total.causes = causes.into_values().collect();
        total
            .causes
            .sort_by(|a, b| b.count.cmp(&a.count).then(a.cause.cmp(&b.cause)));
        let kept = total.kept.max(1) as f64;
        for cause in &mut total.causes {
            cause.share_percent = (1000.0 * cause.count as f64 / kept).round() / 10.0;
        }
        Some(total)
    }

    /// The series' blame over `explanations` (one per run), merged ([`SeriesBlame::sum`]).
    pub fn merged<'a>(
        explanations: impl IntoIterator<Item = &'a Explanation>,
        series: crate::SeriesKey,
    ) -> Option<SeriesBlame> {
        Self::sum(
            explanations
                .into_iter()
                .filter_map(|e| e.series.get(&series)),
        )
    }

    /// Share of kept outliers that were explained, percent (100 when none were kept).
    pub fn explained_percent(&self) -> f64 {
        if self.kept == 0 {
            100.0
        } else {
            100.0 * self.explained as f64 / self.kept as f64
        }
    }
}

/// One cause and how often it was the cause.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CauseShare {
    /// The cause, by role (the per-outlier chains carry pids).
    pub cause: Cause,
    /// Outliers it explains.
    pub count: u64,
    /// Of the series' kept outliers, percent.
    pub share_percent: f64,
    /// Median time the cause held the RT task back within an outlier, us.
    pub median_us: u64,
}

/// One outlier and why it happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExplainedOutlier {
    pub series: crate::Series,
    /// Since the start of the measured phase, ns (as in the series' outlier list).
    pub at_ns: u64,
    pub value_ns: u64,
    pub why: Why,
}

/// A chain, or why there is none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "verdict")]
pub enum Why {
    Explained(Box<Chain>),
    Unexplained {
        /// The wait of the RT tasks that overlapped the spike most, covering less than half
        /// of it (none: no wait of theirs during it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        largest_wait: Option<WaitShare>,
        /// Where the trace shows an RT task on its CPU for at least half of the spike with
        /// nothing holding it back: that share, percent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        on_cpu_percent: Option<f64>,
        /// The kernel lost trace events within 1 ms of the spike.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        events_lost_near: bool,
        /// What an older rtsoak wrote in words instead of the fields above (schema version 2
        /// and before); none from this one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
}

/// A wait that covered part of a spike.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WaitShare {
    pub cause: Cause,
    /// Of the spike, percent.
    pub share_percent: f64,
}

/// What held an RT task back during an outlier.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chain {
    /// The RT task held back.
    pub task: TaskRef,
    pub wait: Wait,
    /// How long this wait overlapped the outlier, us.
    pub blamed_us: u64,
    /// Of the outlier, percent.
    pub share_percent: f64,
}

/// How the RT task was held back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Wait {
    /// Blocked on a lock.
    Lock {
        lock: LockRef,
        /// Who held it, when priority inheritance named the owner.
        holder: Option<Holder>,
    },
    /// Runnable, and another task had its CPU.
    Preempted { by: TaskRef },
    /// Woken, and its CPU was busy with another task until it got it.
    WaitingForCpu { by: TaskRef },
    /// Woken while its CPU was idle, and not running until later: the idle-state exit, the
    /// wakeup IPI (or, in a VM, the host running the virtual CPU) lie in between.
    IdleWakeup { cpu: usize },
    /// Blocked in the kernel without a lock event (`D`): waiting for something else.
    Blocked { woken_by: Option<TaskRef> },
    /// A hard interrupt handler ran on its CPU.
    Interrupt { name: String },
    /// A softirq ran on its CPU.
    Softirq { action: String },
}

/// The lock an RT task blocked on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LockRef {
    /// What kind of lock.
    pub kind: LockKind,
    /// Kernel address of the lock (`lock:contention_begin`), hex.
    pub address: Option<String>,
    /// The futex word's user address (a PI futex), hex.
    pub futex_uaddr: Option<String>,
    /// The kernel function that took the lock, from the stack at contention.
    pub caller: Option<String>,
}

/// The task that held the lock, and what it was doing meanwhile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Holder {
    pub task: TaskRef,
    /// The priority inheritance gave it (`FIFO 80` etc.).
    pub boosted_to: Option<String>,
    /// Time it was runnable but off its CPU while the RT task waited, us.
    pub preempted_us: u64,
    /// The task that had its CPU longest meanwhile.
    pub preempted_by: Option<TaskRef>,
}

/// A task as the trace named it, with its part in the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRef {
    pub pid: i32,
    pub comm: String,
    pub role: TaskRole,
    /// `FIFO 50` for a real-time priority, `normal` otherwise (at the time of the event).
    pub priority: String,
}

/// Who a task is to rtsoak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskRole {
    RtPublisher,
    RtSubscriber,
    NoisePublisher,
    NoiseSubscriber,
    Burst,
    LoadGenerator,
    /// The coordinator or another rtsoak process.
    Rtsoak,
    /// A threaded interrupt handler (`irq/N-name`).
    InterruptThread,
    /// A kernel thread (ksoftirqd, kworker, rcu, migration, ktimers, ...).
    KernelThread,
    Idle,
    /// A task outside rtsoak.
    Other,
}
