//! The resolved plan of an invocation: every knob decided, every CPU chosen, all times in
//! nanoseconds. Built once by `profile::resolve` from a profile, the command-line overrides and
//! the machine's CPU topology; copied verbatim into every result so a figure can always be
//! traced back to the exact conditions it was measured under.
//!
//! Nothing here reads the system or validates input: by the time a `RunPlan` exists, it is valid.

use serde::{Deserialize, Serialize};

use crate::{Policy, RingSetup, RtCpus};

/// Whether a run traces itself to explain its spikes (`run.explain`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Explain {
    /// Where the coordinator, whose thread reads the trace, has a CPU outside the RT pair:
    /// reading the trace on an RT CPU delays the RT tasks' wakeups (on a 2-CPU machine it
    /// raised the delivery samples over 100 us by about 40 %).
    Auto,
    /// Always (`--explain`).
    On,
    /// Never (`--no-explain`).
    Off,
}

/// Where the coordinator (and the spike explainer's trace reader) runs, off the RT pair: the
/// online CPUs that are neither isolated, an RT CPU nor a noise CPU, so it disturbs neither; if
/// there are none, the noise CPUs that are not RT CPUs. Empty when every CPU is an RT CPU.
pub fn housekeeping_cpus(
    online: &[usize],
    isolated: &[usize],
    noise_cpus: &[usize],
    rt_cpus: [usize; 2],
) -> Vec<usize> {
    let spare: Vec<usize> = online
        .iter()
        .copied()
        .filter(|cpu| {
            !isolated.contains(cpu) && !rt_cpus.contains(cpu) && !noise_cpus.contains(cpu)
        })
        .collect();
    if !spare.is_empty() {
        return spare;
    }
    noise_cpus
        .iter()
        .copied()
        .filter(|cpu| !rt_cpus.contains(cpu))
        .collect()
}

/// Where and how the real-time pair runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RtPlan {
    /// CPU of the RT publisher.
    pub publisher_cpu: usize,
    /// CPU of the RT subscriber's event loop.
    pub subscriber_cpu: usize,
    /// Scheduling policy of both RT workers.
    pub policy: Policy,
    /// Priority of the RT publisher (1..=99 for real-time policies, 0 for `other`).
    pub publisher_priority: u8,
    /// Priority of the RT subscriber.
    pub subscriber_priority: u8,
}

/// A note the layout left for the reader: what it says, and what kind of thing it is, which
/// is what the caveats and anything else reading it go by (the text is only ever shown).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayoutNote {
    /// What kind of note.
    pub kind: LayoutNoteKind,
    /// The note in words.
    pub text: String,
}

impl LayoutNote {
    /// A note of `kind` saying `text`.
    pub fn new(kind: LayoutNoteKind, text: impl Into<String>) -> Self {
        LayoutNote {
            kind,
            text: text.into(),
        }
    }
}

/// What a layout note is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LayoutNoteKind {
    /// The plan puts noise (and the coordinator) on RT CPUs: what really shared them is said
    /// from the runs, not from this intent.
    SharesRtCpus,
    /// FIFO bursts run on the RT pair's CPUs (`noise.bursts.on_rt_cpus`).
    BurstsOnRtCpus,
    /// No FIFO bursts: every noise CPU is an RT CPU.
    NoBursts,
    /// An RT thread at priority 99, beside the kernel's watchdog and migration threads.
    RtPriority99,
    /// The explainer is off: no CPU of its own for its trace reader.
    ExplainOff,
    /// A note of a kind this build does not know (a newer result).
    #[serde(other)]
    Other,
}

/// A fully resolved invocation. Every duration is in nanoseconds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunPlan {
    /// Name of the profile it came from (`default`, `ci`, or a file path).
    pub profile: String,
    /// Transports to run, in order (`msg-ring`).
    pub transports: Vec<crate::transport::Name>,
    /// True when the transports were named (`-t`, or the profile's `run.transports`): one of
    /// them that is not measured leaves the verdict inconclusive. False: every transport rtsoak
    /// knows, and those this kernel lacks are skipped.
    #[serde(default)]
    pub transports_named: bool,
    /// Measured time per transport, after warm-up, split evenly over the rounds.
    pub duration_ns: u64,
    /// Rounds of a comparison: every transport runs once per round, for
    /// `duration_ns / rounds` (results written before rounds existed have 1).
    #[serde(default = "one_round")]
    pub rounds: u32,
    /// Time per run whose samples are discarded, before the measured time.
    pub warmup_ns: u64,
    /// Publisher period.
    pub period_ns: u64,
    /// Samples above this are counted as over threshold and kept in the outlier list.
    pub threshold_ns: u64,
    /// Length of one per-interval histogram.
    pub interval_ns: u64,
    /// A message not seen by a subscriber this long after it was sent is counted lost.
    pub delivery_timeout_ns: u64,
    /// Capacity of each over-threshold sample list (the count is kept beyond it).
    pub outliers_max: u32,
    /// The real-time pair.
    pub rt: RtPlan,
    /// CPUs for noise.
    pub noise_cpus: Vec<usize>,
    /// CPUs for the coordinator and the explainer's trace reader ([`housekeeping_cpus`]);
    /// empty: it runs wherever the scheduler puts it. Absent in older results.
    #[serde(default)]
    pub housekeeping_cpus: Vec<usize>,
    /// Subscriber ring setup flags as requested.
    pub ring_setup: RingSetup,
    /// When a comparison runs several ring setups: all of them, in order (each transport runs
    /// once per setup and is reported as its own row). Empty otherwise.
    #[serde(default)]
    pub ring_setup_variants: Vec<RingSetup>,
    /// Every transport's own settings (`futex_wake`), flattened: each is a key of the plan.
    #[serde(flatten)]
    pub transport_settings: crate::transport::Settings,
    /// Everything that competes with the RT pair, on `noise_cpus`.
    pub noise: NoisePlan,
    /// Assumed constants of unmerged kernel patches (`persistent-futex`, `doorbell`).
    pub abi: crate::abi::PatchedAbi,
    /// `--break-on`: a send call or delivery longer than this marks the ftrace buffer and stops
    /// tracing (and the run, unless `break_on_continue`). A flag only, not a profile key.
    #[serde(default)]
    pub break_on_ns: Option<u64>,
    /// Trace the run and explain its spikes (`run.explain` resolved: `auto` is on only where
    /// the coordinator has a CPU outside the RT pair; `--explain`, `--no-explain`).
    #[serde(default)]
    pub explain: bool,
    /// `--keep-trace`: keep the explainer's trace of each run in the result directory. A flag
    /// only, not a profile key.
    #[serde(default)]
    pub keep_trace: bool,
    /// `--break-on-continue`: carry on after the break.
    #[serde(default)]
    pub break_on_continue: bool,
    /// A fault rtsoak injects into its own runs (hidden `--inject-fault`, for tests that prove
    /// a broken transport cannot pass). Recorded so that such a result is never mistaken for a
    /// real one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inject_fault: Option<Fault>,
    /// `--on-threshold` and `--on-end` (`[actions]`): what the coordinator does when a watched
    /// sample crosses the limit, and at the end. Absent when no action is asked for, and in
    /// results written before actions existed.
    #[serde(default, skip_serializing_if = "crate::action::ActionPlan::is_off")]
    pub actions: crate::action::ActionPlan,
    /// Things about the layout a reader of the result must know (for example that noise shares
    /// CPU 1 with the RT subscriber because only 2 CPUs are online), each with its kind.
    pub layout_notes: Vec<LayoutNote>,
    /// Hold `/dev/cpu_dma_latency` at 0 during the runs (`system.hold_cpu_dma_latency`).
    /// Results written before this key existed read as `false`: they held nothing.
    #[serde(default)]
    pub hold_cpu_dma_latency: bool,
    /// Pass/fail limits (`[verdict]`); results written before verdicts existed read as "judge
    /// lost messages only".
    #[serde(default)]
    pub verdict: Limits,
    /// How the exports name this invocation (`[export]`, `--kcidb-origin`); results written
    /// before it existed read as the defaults, which they used.
    #[serde(default)]
    pub export: crate::export::ExportPlan,
    /// Run the floor pair (`--floor`'s reference runs) instead of the harness: the same
    /// processes, CPUs, priorities, memory locking and wake calls, and nothing else. Set only
    /// on the copy of the plan a floor run gets, so a saved plan never carries it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub floor: bool,
}

/// A fault injected into the measurement itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum Fault {
    /// The RT publisher publishes every message but never makes its wake call to the RT
    /// subscriber (it still wakes the noise subscribers): a wake path that silently reaches
    /// nobody.
    #[cfg_attr(
        feature = "clap",
        value(help = "The RT publisher never wakes the RT subscriber.")
    )]
    RtWakeLost,
    /// The RT publisher holds some measured messages back from their wake calls for one and a
    /// half of the subscriber's poll intervals after publishing them: the subscriber's fallback
    /// poll finds each before its wake was sent. A publisher held up in its send call, not a
    /// wake path that fails.
    #[cfg_attr(
        feature = "clap",
        value(help = "The RT publisher wakes the RT subscriber late, after its fallback poll.")
    )]
    RtWakeLate,
}

/// Pass/fail limits from the profile's `[verdict]` section, resolved: latencies in ns, `None` =
/// not judged. Judged on each transport's merged rounds by `result::verdict`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Limits {
    /// Longest RT send call allowed.
    pub max_send_call_ns: Option<u64>,
    /// Longest RT delivery allowed.
    pub max_delivery_ns: Option<u64>,
    /// Send calls, and separately deliveries, over the threshold allowed per transport.
    pub max_over_threshold: Option<u64>,
    /// The same as a rate: over-threshold samples per million samples of the series.
    pub max_over_threshold_per_million: Option<u64>,
    /// Worst send call, and separately delivery, to expect once a day (the tail estimate's
    /// one-day return level).
    pub max_expected_per_day_ns: Option<u64>,
    /// Fewest messages a transport must have sent for its figures to count.
    pub min_messages: Option<u64>,
    /// Most measured periods a transport may miss (its rounds added): a missed period is a
    /// sample no histogram holds.
    pub max_missed_periods: Option<u64>,
    /// More missed periods than this percent of those planned make the verdict inconclusive
    /// (`None` in results written before the third verdict: not judged).
    pub inconclusive_missed_percent: Option<u8>,
    /// The kernel must be PREEMPT_RT.
    pub require_preempt_rt: bool,
    /// Every RT worker must have obtained the real-time policy and priority it asked for.
    pub require_rt_priority: bool,
    /// Both RT CPUs must be isolated (`/sys/devices/system/cpu/isolated`).
    pub require_isolated_cpus: bool,
    /// No noise may run on the RT pair's CPUs.
    pub require_noise_apart: bool,
    /// A development machine's profile: the conditions that would invalidate the figures as
    /// real-time figures and that describe the machine itself (a kernel without PREEMPT_RT,
    /// noise on the RT CPUs) are accepted instead of making the verdict inconclusive, and a PASS
    /// names them.
    pub development: bool,
}

/// The noise of a run: lower-priority queue participants that come and go, real-time busy
/// bursts, and system and interrupt load, all pinned to the noise CPUs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoisePlan {
    /// False: a quiet baseline (`--no-noise`); nothing below runs.
    pub enabled: bool,
    /// Noise publishers and subscribers on the RT pair's queue and transport objects.
    pub queue: QueueNoisePlan,
    /// Real-time busy bursts.
    pub bursts: BurstPlan,
    /// System and interrupt load generators.
    pub load: LoadPlan,
    /// An external load command as an argv (run pinned to the noise CPUs, never by a shell).
    pub external: Vec<String>,
}

/// Lower-priority publishers and subscribers that keep joining and leaving.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueNoisePlan {
    /// Noise publishers alive at once.
    pub publishers: u32,
    /// Noise subscribers alive at once.
    pub subscribers: u32,
    /// Their scheduling policy.
    pub policy: Policy,
    /// Their priority (below the RT pair's).
    pub priority: u8,
    /// Period of a noise publisher.
    pub period_ns: u64,
    /// Shortest life of one noise process.
    pub lifetime_min_ns: u64,
    /// Longest life of one noise process.
    pub lifetime_max_ns: u64,
    /// Noise publishers wake the RT subscriber too; false: only the noise subscribers (they
    /// still contend on the same queue and transport objects). Results written before this key
    /// existed read as true, which is what those runs did.
    #[serde(default = "yes")]
    pub wake_rt_subscriber: bool,
}

/// Busy-looping real-time threads, one per noise CPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BurstPlan {
    /// False: no bursts.
    pub enabled: bool,
    /// Their SCHED_FIFO priority (50 by default: above the RT pair, as interrupt threads are).
    pub priority: u8,
    /// Shortest burst.
    pub min_ns: u64,
    /// Longest burst.
    pub max_ns: u64,
    /// Busy time never exceeds this share of each thread's time, percent.
    pub duty_cap_percent: u8,
    /// CPUs with a burst thread: the noise CPUs, less the RT pair's unless
    /// `noise.bursts.on_rt_cpus` put them there too.
    #[serde(default)]
    pub cpus: Vec<usize>,
}

/// System and interrupt load generators; 0 turns one off.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadPlan {
    /// hackbench-style sender/receiver pairs over pipes and sockets (scheduler load).
    pub sched_pairs: u32,
    /// Loopback TCP streams (network softirqs).
    pub net_streams: u32,
    /// Threads mapping, touching and unmapping memory (page faults, TLB-shootdown IPIs).
    pub mm_threads: u32,
    /// Short periodic timers firing (hrtimer interrupts).
    pub timers: u32,
    /// Threads writing a file and calling fsync (block I/O and its interrupts).
    pub file_writers: u32,
}

impl NoisePlan {
    /// No noise at all.
    pub fn off() -> Self {
        NoisePlan {
            enabled: false,
            queue: QueueNoisePlan {
                publishers: 0,
                subscribers: 0,
                policy: Policy::Other,
                priority: 0,
                period_ns: 200_000,
                lifetime_min_ns: 50_000_000,
                lifetime_max_ns: 500_000_000,
                wake_rt_subscriber: true,
            },
            bursts: BurstPlan {
                enabled: false,
                priority: 50,
                min_ns: 20_000,
                max_ns: 1_000_000,
                duty_cap_percent: 50,
                cpus: Vec::new(),
            },
            load: LoadPlan {
                sched_pairs: 0,
                net_streams: 0,
                mm_threads: 0,
                timers: 0,
                file_writers: 0,
            },
            external: Vec::new(),
        }
    }
}

fn one_round() -> u32 {
    1
}

fn yes() -> bool {
    true
}

/// Most over-threshold samples a result document keeps, over all its runs and series: about
/// 2.6 MB of JSON when every list is full. The default comparison's 8 transports keep the
/// profile's 1,000 per list; an 8-hour nightly of 30 runs (six transports in five rounds) 266.
pub(crate) const MAX_DOCUMENT_OUTLIERS: usize = 64_000;
/// Outlier lists in one run: every series of the RT publisher and the RT subscriber.
const OUTLIER_LISTS_PER_RUN: usize =
    crate::Series::PUBLISHER.len() + crate::Series::SUBSCRIBER.len();

impl RunPlan {
    /// The CPUs the system check judges for this plan.
    pub fn rt_cpus(&self) -> RtCpus {
        RtCpus {
            publisher: self.rt.publisher_cpu,
            subscriber: self.rt.subscriber_cpu,
            noise: self.noise_cpus.clone(),
        }
    }

    /// The ring setups each transport runs under: the variants, or just `ring_setup`.
    pub fn ring_setups(&self) -> Vec<RingSetup> {
        if self.ring_setup_variants.is_empty() {
            vec![self.ring_setup]
        } else {
            self.ring_setup_variants.clone()
        }
    }

    /// Runs the plan makes: every transport, under every ring setup, in every round.
    pub fn planned_runs(&self) -> usize {
        self.transports.len().max(1) * self.ring_setups().len() * self.rounds.max(1) as usize
    }

    /// The capacity of every outlier list of every run: `outliers_max`, or, where the plan has
    /// more runs than that leaves room for, its equal share of [`MAX_DOCUMENT_OUTLIERS`]. The
    /// samples over the threshold go on being counted beyond it (`outliers_dropped`).
    pub fn outliers_per_list(&self) -> u32 {
        let lists = self.planned_runs() * OUTLIER_LISTS_PER_RUN;
        let share = (MAX_DOCUMENT_OUTLIERS / lists).max(1);
        self.outliers_max
            .min(u32::try_from(share).unwrap_or(u32::MAX))
    }

    /// Measured time of one run (one transport in one round).
    pub fn round_duration_ns(&self) -> u64 {
        self.duration_ns / u64::from(self.rounds.max(1))
    }

    /// Number of periods the publisher runs in the measured phase of one run.
    pub fn measured_periods(&self) -> u64 {
        self.round_duration_ns() / self.period_ns
    }

    /// Number of warm-up periods before the measured phase.
    pub fn warmup_periods(&self) -> u64 {
        self.warmup_ns / self.period_ns
    }
}

/// The kernel layer's name for a policy.
#[cfg(test)]
mod housekeeping_tests {
    use super::housekeeping_cpus;

    #[test]
    fn the_coordinator_takes_cpus_nobody_else_uses_else_the_noise_cpus_off_the_rt_pair() {
        let all: Vec<usize> = (0..6).collect();
        // The PREEMPT_RT VM: RT pair on the isolated 4-5, noise on 0-1, 2-3 free.
        assert_eq!(housekeeping_cpus(&all, &[4, 5], &[0, 1], [4, 5]), [2, 3]);
        // The board: noise on every CPU but the RT pair.
        assert_eq!(
            housekeeping_cpus(&all, &[4, 5], &[0, 1, 2, 3], [4, 5]),
            [0, 1, 2, 3]
        );
        // An isolated CPU outside the layout is left to whoever isolated it.
        assert_eq!(housekeeping_cpus(&all, &[3, 4, 5], &[0, 1], [4, 5]), [2]);
        // Two CPUs, both RT CPUs: nowhere.
        assert!(housekeeping_cpus(&[0, 1], &[], &[0, 1], [0, 1]).is_empty());
    }
}

#[cfg(test)]
mod outlier_budget_tests {
    use super::RunPlan;
    use crate::transport::Name;
    use serde::Deserialize;

    #[test]
    fn a_plan_shares_the_documents_outliers_among_its_runs_and_lists() {
        // A real saved plan. The document is of schema version 2, whose layout notes were
        // sentences; the binary's store upgrades them when it reads a result, and the notes
        // play no part in the outlier budget, so here they are left out.
        let saved = include_str!("../../../tests/fixtures/results/compare-vm-2cpu.json");
        let mut saved: serde_json::Value = serde_json::from_str(saved).unwrap();
        saved["plan"]["layout_notes"] = serde_json::json!([]);
        let mut plan = RunPlan::deserialize(&saved["plan"]).unwrap();
        plan.outliers_max = 1_000;
        plan.ring_setup_variants.clear();
        // The default comparison: every transport, one round.
        plan.transports = Name::all();
        plan.rounds = 1;
        assert!(plan.planned_runs() <= 8, "{}", plan.planned_runs());
        assert_eq!(plan.outliers_per_list(), 1_000);
        // An 8-hour nightly: six transports in five rounds.
        plan.transports.truncate(6);
        plan.rounds = 5;
        assert_eq!(plan.planned_runs(), 30);
        assert_eq!(plan.outliers_per_list(), 266);
        // A profile's smaller list stands.
        plan.outliers_max = 100;
        assert_eq!(plan.outliers_per_list(), 100);
    }
}
