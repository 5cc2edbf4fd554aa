//! The `[noise]` section: what competes with the RT pair, and how it resolves into a
//! [`NoisePlan`]. Every generator is selectable and sized here; every range is checked.
//!
//! Owns: the noise keys, their defaults and their allowed values. Never reads the system.

use serde::{Deserialize, Serialize};

use super::error::{ProfileError, in_range, invalid};
use rtsoak_record::Policy;
use rtsoak_record::plan::{
    BurstPlan, LayoutNote, LayoutNoteKind, LoadPlan, NoisePlan, QueueNoisePlan, RtPlan,
};

/// `[noise]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct NoiseSection {
    /// False: no noise at all (as `--no-noise`).
    pub(crate) enabled: bool,
    /// `[noise.queue]`.
    pub(crate) queue: QueueNoiseSection,
    /// `[noise.bursts]`.
    pub(crate) bursts: BurstSection,
    /// `[noise.load]`.
    pub(crate) load: LoadSection,
}

impl Default for NoiseSection {
    fn default() -> Self {
        NoiseSection {
            enabled: true,
            queue: QueueNoiseSection::default(),
            bursts: BurstSection::default(),
            load: LoadSection::default(),
        }
    }
}

/// `[noise.queue]`: lower-priority publishers and subscribers on the RT pair's queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct QueueNoiseSection {
    /// Noise publishers alive at once.
    pub(crate) publishers: u32,
    /// Noise subscribers alive at once.
    subscribers: u32,
    /// `fifo`, `rr` or `other`.
    pub(crate) policy: Policy,
    /// Below both RT priorities; absent = 20 for real-time policies, 0 for `other`.
    pub(crate) priority: Option<u8>,
    /// Noise publisher period, microseconds.
    pub(crate) period_us: u64,
    /// Shortest life of a noise process, milliseconds.
    pub(crate) lifetime_min_ms: u64,
    /// Longest life of a noise process, milliseconds.
    lifetime_max_ms: u64,
    /// Noise publishers wake the RT subscriber too (false: they contend on the same queue and
    /// transport objects but wake only the noise subscribers).
    wake_rt_subscriber: bool,
}

impl Default for QueueNoiseSection {
    fn default() -> Self {
        QueueNoiseSection {
            publishers: 2,
            subscribers: 2,
            policy: Policy::Fifo,
            priority: None,
            period_us: 200,
            lifetime_min_ms: 50,
            lifetime_max_ms: 500,
            wake_rt_subscriber: true,
        }
    }
}

/// `[noise.bursts]`: SCHED_FIFO busy loops, one thread per noise CPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct BurstSection {
    /// False: no bursts.
    pub(crate) enabled: bool,
    /// SCHED_FIFO priority.
    pub(crate) priority: u8,
    /// Shortest burst, microseconds.
    min_us: u64,
    /// Longest burst, microseconds.
    max_us: u64,
    /// Cap on each thread's busy share, percent.
    pub(crate) duty_cap_percent: u8,
    /// Also run bursts on noise CPUs the RT pair uses (only a machine with too few CPUs to
    /// keep them apart needs this; the RT pair then waits for every burst there).
    pub(crate) on_rt_cpus: bool,
}

impl Default for BurstSection {
    fn default() -> Self {
        BurstSection {
            enabled: true,
            priority: 50,
            min_us: 20,
            max_us: 1000,
            duty_cap_percent: 50,
            on_rt_cpus: false,
        }
    }
}

/// `[noise.load]`: system and interrupt load; 0 turns a generator off.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct LoadSection {
    /// hackbench-style pipe/socket sender-receiver pairs.
    sched_pairs: u32,
    /// Loopback TCP streams.
    net_streams: u32,
    /// mmap/touch/munmap threads.
    mm_threads: u32,
    /// Periodic short timers.
    pub(crate) timers: u32,
    /// Write + fsync threads.
    file_writers: u32,
    /// External command as an argv, e.g. `["stress-ng", "--cpu", "2"]`; empty = none.
    pub(crate) external: Vec<String>,
}

impl Default for LoadSection {
    fn default() -> Self {
        LoadSection {
            sched_pairs: 1,
            net_streams: 1,
            mm_threads: 1,
            timers: 4,
            file_writers: 1,
            external: Vec::new(),
        }
    }
}

/// Most noise publishers or subscribers alive at once (the shared region's slots).
pub(crate) const MAX_QUEUE_NOISE: u32 = 16;
/// Most threads of one load generator.
pub(crate) const MAX_LOAD: u32 = 64;

/// Resolve `[noise]`. `rt` is the RT pair: queue noise must stay below both its priorities,
/// and bursts keep off its CPUs unless told otherwise. `disabled` is `--no-noise`; the noise
/// runs on `noise_cpus`.
///
/// Every key is checked even when the noise is off, so a profile that is wrong stays wrong
/// whether or not `--no-noise` is given. The checks run per kind (queue, bursts, load), in the
/// order the keys are written, so the first error reported does not change.
pub(crate) fn resolve_noise(
    section: &NoiseSection,
    disabled: bool,
    rt: &RtPlan,
    noise_cpus: &[usize],
    notes: &mut Vec<LayoutNote>,
) -> Result<NoisePlan, ProfileError> {
    let queue = queue_noise(&section.queue, rt)?;
    let mut bursts = bursts(&section.bursts)?;
    let load = load(&section.load)?;
    let external = external(&section.load)?;

    if disabled || !section.enabled {
        let mut off = NoisePlan::off();
        off.queue.policy = queue.policy;
        return Ok(off);
    }
    // Placed only once the noise is known to run: the notes it may add concern a run with
    // bursts.
    bursts.cpus = burst_cpus(&section.bursts, noise_cpus, rt, bursts.priority, notes);
    Ok(NoisePlan {
        enabled: true,
        queue,
        bursts,
        load,
        external,
    })
}

/// `[noise.queue]`, times in nanoseconds.
fn queue_noise(q: &QueueNoiseSection, rt: &RtPlan) -> Result<QueueNoisePlan, ProfileError> {
    let publishers = queue_processes("noise.queue.publishers", q.publishers)?;
    let subscribers = queue_processes("noise.queue.subscribers", q.subscribers)?;
    let priority = queue_priority(q, rt)?;
    let period_us = in_range(
        "noise.queue.period_us",
        q.period_us,
        (50, 1_000_000),
        " (microseconds)",
    )?;
    let lifetime_min_ms = in_range(
        "noise.queue.lifetime_min_ms",
        q.lifetime_min_ms,
        (10, 600_000),
        " (milliseconds)",
    )?;
    let lifetime_max_ms = in_range(
        "noise.queue.lifetime_max_ms",
        q.lifetime_max_ms,
        (lifetime_min_ms, 600_000),
        " (milliseconds), and not below noise.queue.lifetime_min_ms",
    )?;
    Ok(QueueNoisePlan {
        publishers,
        subscribers,
        policy: q.policy,
        priority,
        period_ns: period_us * 1_000,
        lifetime_min_ns: lifetime_min_ms * 1_000_000,
        lifetime_max_ns: lifetime_max_ms * 1_000_000,
        wake_rt_subscriber: q.wake_rt_subscriber,
    })
}

/// Noise publishers or subscribers alive at once: 0..=[`MAX_QUEUE_NOISE`], the shared region's
/// slots.
fn queue_processes(key: &str, count: u32) -> Result<u32, ProfileError> {
    in_range(key, count, (0, MAX_QUEUE_NOISE), "")
}

/// `[noise.bursts]`, times in nanoseconds. The CPUs are left empty: `burst_cpus` fills them in
/// once the noise is known to run.
fn bursts(b: &BurstSection) -> Result<BurstPlan, ProfileError> {
    let priority = in_range("noise.bursts.priority", b.priority, (1, 99), "")?;
    let min_us = in_range(
        "noise.bursts.min_us",
        b.min_us,
        (1, 100_000),
        " (microseconds)",
    )?;
    let max_us = in_range(
        "noise.bursts.max_us",
        b.max_us,
        (min_us, 100_000),
        " (microseconds), and not below noise.bursts.min_us",
    )?;
    // Below 100: a burst thread that may take its whole CPU starves everything else there.
    let duty_cap_percent = in_range(
        "noise.bursts.duty_cap_percent",
        b.duty_cap_percent,
        (1, 95),
        " (percent)",
    )?;
    Ok(BurstPlan {
        enabled: b.enabled,
        priority,
        min_ns: min_us * 1_000,
        max_ns: max_us * 1_000,
        duty_cap_percent,
        cpus: Vec::new(),
    })
}

/// `[noise.load]`'s generators, each 0..=[`MAX_LOAD`] threads (0 turns it off).
fn load(l: &LoadSection) -> Result<LoadPlan, ProfileError> {
    Ok(LoadPlan {
        sched_pairs: load_threads("noise.load.sched_pairs", l.sched_pairs)?,
        net_streams: load_threads("noise.load.net_streams", l.net_streams)?,
        mm_threads: load_threads("noise.load.mm_threads", l.mm_threads)?,
        timers: load_threads("noise.load.timers", l.timers)?,
        file_writers: load_threads("noise.load.file_writers", l.file_writers)?,
    })
}

fn load_threads(key: &str, count: u32) -> Result<u32, ProfileError> {
    in_range(key, count, (0, MAX_LOAD), "")
}

/// `noise.load.external`: empty, or an argv whose first element names a program (a blank one
/// could never be started).
fn external(l: &LoadSection) -> Result<Vec<String>, ProfileError> {
    if let Some(program) = l.external.first()
        && program.trim().is_empty()
    {
        return Err(invalid(
            "noise.load.external",
            format!("{:?}", l.external),
            "an argv whose first element names a program, e.g. [\"stress-ng\", \"--cpu\", \"2\"]"
                .into(),
        ));
    }
    Ok(l.external.clone())
}

/// The CPUs that get a burst thread (of `burst_priority`), with a note when the RT pair's CPUs
/// change the answer.
fn burst_cpus(
    b: &BurstSection,
    noise_cpus: &[usize],
    rt: &RtPlan,
    burst_priority: u8,
    notes: &mut Vec<LayoutNote>,
) -> Vec<usize> {
    if !b.enabled {
        return Vec::new();
    }
    let rt_cpus = [rt.publisher_cpu, rt.subscriber_cpu];
    let shared = noise_cpus.iter().any(|cpu| rt_cpus.contains(cpu));
    if b.on_rt_cpus {
        let rt_priority = rt.publisher_priority.min(rt.subscriber_priority);
        if shared && rt.policy.is_realtime() && burst_priority > rt_priority {
            notes.push(LayoutNote::new(
                LayoutNoteKind::BurstsOnRtCpus,
                format!(
                    "FIFO {burst_priority} bursts also run on the RT pair's CPUs \
                     (noise.bursts.on_rt_cpus): there the RT pair waits for every burst"
                ),
            ));
        }
        return noise_cpus.to_vec();
    }
    let cpus: Vec<usize> = noise_cpus
        .iter()
        .copied()
        .filter(|cpu| !rt_cpus.contains(cpu))
        .collect();
    if cpus.is_empty() {
        notes.push(LayoutNote::new(
            LayoutNoteKind::NoBursts,
            "no FIFO bursts: every noise CPU is an RT CPU, and a burst there would preempt the RT \
             pair itself (set noise.bursts.on_rt_cpus = true to run them anyway)",
        ));
    }
    cpus
}

/// Queue noise priority: below both RT workers' when both are real-time.
fn queue_priority(q: &QueueNoiseSection, rt: &RtPlan) -> Result<u8, ProfileError> {
    let key = "noise.queue.priority";
    let value = match (q.policy.is_realtime(), q.priority) {
        (true, None) => 20,
        (true, Some(p @ 1..=99)) => p,
        (true, Some(p)) => {
            return Err(invalid(
                key,
                p.to_string(),
                "1..=99 for a real-time policy".into(),
            ));
        }
        (false, None | Some(0)) => return Ok(0),
        (false, Some(p)) => {
            return Err(invalid(
                key,
                p.to_string(),
                "0 or no value for policy `other`".into(),
            ));
        }
    };
    let rt_floor = rt.publisher_priority.min(rt.subscriber_priority);
    if rt.policy.is_realtime() && value >= rt_floor {
        return Err(invalid(
            key,
            value.to_string(),
            format!(
                "below the RT pair's priority ({rt_floor}): queue noise is the lower-priority side"
            ),
        ));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The RT pair of these tests: FIFO 40 on CPUs 4 and 5.
    fn rt_pair() -> RtPlan {
        RtPlan {
            publisher_cpu: 4,
            subscriber_cpu: 5,
            policy: Policy::Fifo,
            publisher_priority: 40,
            subscriber_priority: 40,
        }
    }

    fn resolve(section: &NoiseSection) -> Result<NoisePlan, ProfileError> {
        resolve_noise(section, false, &rt_pair(), &[0, 1], &mut Vec::new())
    }

    #[test]
    fn the_defaults_are_the_seed_setup() {
        let plan = resolve(&NoiseSection::default()).unwrap();
        assert!(plan.enabled);
        assert_eq!((plan.queue.publishers, plan.queue.subscribers), (2, 2));
        assert_eq!((plan.queue.policy, plan.queue.priority), (Policy::Fifo, 20));
        assert_eq!(plan.queue.period_ns, 200_000);
        assert_eq!(
            (plan.queue.lifetime_min_ns, plan.queue.lifetime_max_ns),
            (50_000_000, 500_000_000)
        );
        assert_eq!(
            (plan.bursts.priority, plan.bursts.min_ns, plan.bursts.max_ns),
            (50, 20_000, 1_000_000)
        );
        assert_eq!(plan.bursts.duty_cap_percent, 50);
    }

    #[test]
    fn no_noise_turns_everything_off() {
        let plan = resolve_noise(
            &NoiseSection::default(),
            true,
            &rt_pair(),
            &[0, 1],
            &mut Vec::new(),
        )
        .unwrap();
        assert!(!plan.enabled);
    }

    #[test]
    fn queue_noise_must_stay_below_the_rt_pair() {
        let mut section = NoiseSection::default();
        section.queue.priority = Some(40);
        let error = resolve(&section).unwrap_err().to_string();
        assert!(
            error.contains("noise.queue.priority") && error.contains("below the RT pair"),
            "{error}"
        );
    }

    #[test]
    fn sched_other_queue_noise_takes_no_priority() {
        let mut section = NoiseSection::default();
        section.queue.policy = Policy::Other;
        assert_eq!(resolve(&section).unwrap().queue.priority, 0);
        section.queue.priority = Some(5);
        assert!(
            resolve(&section)
                .unwrap_err()
                .to_string()
                .contains("noise.queue.priority")
        );
    }

    #[test]
    fn the_duty_cycle_cap_cannot_reach_a_full_cpu() {
        let mut section = NoiseSection::default();
        section.bursts.duty_cap_percent = 100;
        let error = resolve(&section).unwrap_err().to_string();
        assert!(
            error.contains("noise.bursts.duty_cap_percent") && error.contains("1..=95"),
            "{error}"
        );
    }

    #[test]
    fn ranges_that_run_backwards_are_refused() {
        let mut section = NoiseSection::default();
        section.bursts.min_us = 500;
        section.bursts.max_us = 100;
        assert!(
            resolve(&section)
                .unwrap_err()
                .to_string()
                .contains("noise.bursts.max_us")
        );
        let mut section = NoiseSection::default();
        section.queue.lifetime_min_ms = 600;
        assert!(
            resolve(&section)
                .unwrap_err()
                .to_string()
                .contains("noise.queue.lifetime_max_ms")
        );
    }

    #[test]
    fn too_many_queue_participants_or_load_threads_are_refused() {
        let mut section = NoiseSection::default();
        section.queue.publishers = 17;
        assert!(
            resolve(&section)
                .unwrap_err()
                .to_string()
                .contains("noise.queue.publishers")
        );
        let mut section = NoiseSection::default();
        section.load.timers = 65;
        assert!(
            resolve(&section)
                .unwrap_err()
                .to_string()
                .contains("noise.load.timers")
        );
    }

    #[test]
    fn an_external_command_needs_a_program() {
        let mut section = NoiseSection::default();
        section.load.external = vec![" ".into()];
        assert!(
            resolve(&section)
                .unwrap_err()
                .to_string()
                .contains("noise.load.external")
        );
    }

    #[test]
    fn bursts_keep_off_the_rt_cpus_unless_told_otherwise() {
        let resolve = |section: &NoiseSection, noise: &[usize], notes: &mut Vec<LayoutNote>| {
            resolve_noise(section, false, &rt_pair(), noise, notes).unwrap()
        };
        let mut notes = Vec::new();
        let plan = resolve(&NoiseSection::default(), &[0, 1, 4], &mut notes);
        assert_eq!(plan.bursts.cpus, [0, 1], "not on RT CPU 4");
        assert!(
            notes.is_empty(),
            "bursts on other CPUs are the intended noise: {notes:?}"
        );

        let mut notes = Vec::new();
        let plan = resolve(&NoiseSection::default(), &[4, 5], &mut notes);
        assert!(plan.bursts.cpus.is_empty());
        assert_eq!(notes[0].kind, LayoutNoteKind::NoBursts, "{notes:?}");

        let mut section = NoiseSection::default();
        section.bursts.on_rt_cpus = true;
        let mut notes = Vec::new();
        let plan = resolve(&section, &[4, 5], &mut notes);
        assert_eq!(plan.bursts.cpus, [4, 5]);
        assert_eq!(notes[0].kind, LayoutNoteKind::BurstsOnRtCpus, "{notes:?}");
        assert!(
            notes[0]
                .text
                .contains("FIFO 50 bursts also run on the RT pair's CPUs"),
            "{notes:?}"
        );
    }
}
