//! Validation and resolution: a profile plus command-line overrides plus the machine's CPU
//! topology become one [`RunPlan`] with every value range-checked, every CPU chosen and every
//! time in nanoseconds.
//!
//! Owns: the allowed range of every key, overrides winning over the profile, and the plan
//! itself. The CPU layout is delegated to `layout`. Never reads the system.

use rtsoak_record::export::{ExportPlan, KCIDB_ORIGIN_SYNTAX, KcidbOrigin};
use rtsoak_record::plan::{Explain, LayoutNote, LayoutNoteKind, NoisePlan, RtPlan, RunPlan};
use rtsoak_record::transport::Name;

use rtsoak_record::{Policy, RingSetup};

use super::error::{FROM_CLI, ProfileError, in_range, invalid};
use super::layout::{noise_cpus, rt_cpus};
use super::overrides::Overrides;
use super::sections::{CpuTopology, DEFAULT_RT_PRIORITY, Profile, RunSection};

/// A time unit a profile key is written in.
struct Unit {
    ns: u64,
    name: &'static str,
}

const SECONDS: Unit = Unit {
    ns: 1_000_000_000,
    name: "seconds",
};
const MILLISECONDS: Unit = Unit {
    ns: 1_000_000,
    name: "milliseconds",
};
const MICROSECONDS: Unit = Unit {
    ns: 1_000,
    name: "microseconds",
};

/// `ns` written in `unit`, with a fraction only when it is not a whole number of units.
fn in_unit(ns: u64, unit: &Unit) -> String {
    if ns.is_multiple_of(unit.ns) {
        (ns / unit.ns).to_string()
    } else {
        (ns as f64 / unit.ns as f64).to_string()
    }
}

/// A duration key: the override (already in ns) wins over the profile value (in `unit`); either
/// must lie in `low..=high` units. Returns nanoseconds.
fn duration(
    key: &str,
    unit: &Unit,
    profile_value: u64,
    override_ns: Option<u64>,
    (low, high): (u64, u64),
) -> Result<u64, ProfileError> {
    let allowed = || format!("{low}..={high} ({})", unit.name);
    match override_ns {
        Some(ns) if (low * unit.ns..=high * unit.ns).contains(&ns) => Ok(ns),
        Some(ns) => Err(invalid(key, in_unit(ns, unit) + FROM_CLI, allowed())),
        None if (low..=high).contains(&profile_value) => Ok(profile_value * unit.ns),
        None => Err(invalid(key, profile_value.to_string(), allowed())),
    }
}

/// Fewest periods one round may measure: below this a round's figures say nothing.
const MIN_ROUND_PERIODS: u64 = 100;

/// `run.rounds` (or `--rounds`): 1..=1000. The duration is split evenly over the rounds.
fn rounds(profile_value: u32, override_value: Option<u32>) -> Result<u32, ProfileError> {
    let (value, source) = match override_value {
        Some(value) => (value, FROM_CLI),
        None => (profile_value, ""),
    };
    if (1..=1000).contains(&value) {
        Ok(value)
    } else {
        Err(invalid(
            "run.rounds",
            format!("{value}{source}"),
            "1..=1000 (rounds; the duration is split evenly over them)".to_string(),
        ))
    }
}

/// Validate and resolve. `known_transports` are the transports to choose from (the registry's,
/// in registry order).
///
/// The steps run in the order a user reads the profile (`[run]`, `[rt]`, `[cpus]`, `[noise]`,
/// `[verdict]`), so a profile with several errors always reports the same one first.
pub fn resolve(
    name: &str,
    profile: &Profile,
    overrides: &Overrides,
    topology: &CpuTopology,
    known_transports: &[Name],
) -> Result<RunPlan, ProfileError> {
    let ov = overrides;
    let run = run_settings(&profile.run, ov, known_transports)?;
    let (ring_setup, ring_setup_variants) = ring_setups(profile, ov)?;
    let layout = cpu_layout(profile, ov, topology)?;
    let verdict = super::verdict::resolve_limits(&profile.verdict)?;
    let export = export(profile, ov)?;
    let actions = super::actions::resolve_actions(&profile.actions, ov, run.timing.threshold_ns)?;

    Ok(RunPlan {
        profile: name.to_string(),
        transports: run.transports,
        transports_named: run.transports_named,
        duration_ns: run.timing.duration_ns,
        rounds: run.timing.rounds,
        warmup_ns: run.timing.warmup_ns,
        period_ns: run.timing.period_ns,
        threshold_ns: run.timing.threshold_ns,
        interval_ns: run.timing.interval_ns,
        delivery_timeout_ns: run.timing.delivery_timeout_ns,
        outliers_max: profile.run.outliers_max,
        rt: layout.rt,
        noise_cpus: layout.noise_cpus,
        housekeeping_cpus: layout.housekeeping_cpus,
        ring_setup,
        ring_setup_variants,
        transport_settings: rtsoak_measure::transport::overridden(
            &profile.rt.transport_settings,
            &ov.transport,
        ),
        noise: layout.noise,
        abi: profile.abi,
        break_on_ns: ov.break_on_ns,
        explain: layout.explain,
        break_on_continue: ov.break_on_continue,
        // A break is for reading the trace around it: the explainer keeps its own.
        keep_trace: (ov.keep_trace || ov.break_on_ns.is_some()) && layout.explain,
        inject_fault: ov.inject_fault,
        actions,
        layout_notes: layout.notes,
        hold_cpu_dma_latency: profile.system.hold_cpu_dma_latency && !ov.no_cpu_dma_latency,
        verdict,
        export,
        floor: false,
    })
}

/// What `[run]` chooses: the transports to measure (and whether any were named) and its times.
struct RunSettings {
    transports: Vec<Name>,
    transports_named: bool,
    timing: Timing,
}

/// `[run]` checked key by key: the transports, the times, then the outlier lists' capacity.
fn run_settings(
    run: &RunSection,
    ov: &Overrides,
    known_transports: &[Name],
) -> Result<RunSettings, ProfileError> {
    let requested = ov.transports.as_deref().unwrap_or(&run.transports);
    let settings = RunSettings {
        transports_named: !requested.is_empty(),
        transports: transports(requested, known_transports)?,
        timing: timing(run, ov)?,
    };
    // Each outlier list's capacity.
    in_range(
        "run.outliers_max",
        run.outliers_max,
        (0, 100_000),
        " (samples)",
    )?;
    Ok(settings)
}

/// Where everything runs, and what follows from it: the RT pair, the noise CPUs and the noise
/// on them, the CPUs left to the coordinator, whether the run explains its spikes, and the
/// notes a reader of the result must see about all of it.
struct CpuLayout {
    rt: RtPlan,
    noise_cpus: Vec<usize>,
    noise: NoisePlan,
    housekeeping_cpus: Vec<usize>,
    explain: bool,
    notes: Vec<LayoutNote>,
}

/// `[rt]`, `[cpus]` and `[noise]` in that order; then the explainer, which needs a CPU they
/// leave free.
fn cpu_layout(
    profile: &Profile,
    ov: &Overrides,
    topology: &CpuTopology,
) -> Result<CpuLayout, ProfileError> {
    let mut notes = Vec::new();
    let rt = rt_pair(profile, ov, topology, &mut notes)?;
    let rt_cpus = [rt.publisher_cpu, rt.subscriber_cpu];
    let noise_cpus = noise_cpus(profile, ov, topology, rt_cpus, &mut notes)?;
    let noise =
        super::noise::resolve_noise(&profile.noise, ov.no_noise, &rt, &noise_cpus, &mut notes)?;
    let housekeeping_cpus = rtsoak_record::plan::housekeeping_cpus(
        &topology.online,
        &topology.isolated,
        &noise_cpus,
        rt_cpus,
    );
    let explain = explain(
        profile.run.explain,
        ov,
        housekeeping_cpus.is_empty(),
        &mut notes,
    );
    Ok(CpuLayout {
        rt,
        noise_cpus,
        noise,
        housekeeping_cpus,
        explain,
        notes,
    })
}

/// `[export]`: the command line's origin (checked as it was parsed) wins over the profile's,
/// which must be one KCIDB takes.
fn export(profile: &Profile, ov: &Overrides) -> Result<ExportPlan, ProfileError> {
    let kcidb_origin = match (&ov.kcidb_origin, &profile.export.kcidb_origin) {
        (Some(origin), _) => origin.clone(),
        (None, Some(text)) => KcidbOrigin::new(text).map_err(|_| {
            invalid(
                "export.kcidb_origin",
                format!("{text:?}"),
                KCIDB_ORIGIN_SYNTAX.to_string(),
            )
        })?,
        (None, None) => KcidbOrigin::default(),
    };
    Ok(ExportPlan { kcidb_origin })
}

/// The `[run]` times, each in nanoseconds, and the rounds they are split over.
struct Timing {
    duration_ns: u64,
    rounds: u32,
    warmup_ns: u64,
    period_ns: u64,
    threshold_ns: u64,
    interval_ns: u64,
    delivery_timeout_ns: u64,
}

/// Every `[run]` time checked against its own range, then against each other: a round must hold
/// enough periods, and the delivery timeout enough periods to tell a late message from a lost
/// one.
fn timing(run: &RunSection, ov: &Overrides) -> Result<Timing, ProfileError> {
    let timing = Timing {
        duration_ns: duration(
            "run.duration_s",
            &SECONDS,
            run.duration_s,
            ov.duration_ns,
            (1, 604_800),
        )?,
        rounds: rounds(run.rounds, ov.rounds)?,
        warmup_ns: duration(
            "run.warmup_ms",
            &MILLISECONDS,
            run.warmup_ms,
            ov.warmup_ns,
            (0, 60_000),
        )?,
        period_ns: duration(
            "run.period_us",
            &MICROSECONDS,
            run.period_us,
            ov.period_ns,
            (50, 1_000_000),
        )?,
        threshold_ns: duration(
            "run.threshold_us",
            &MICROSECONDS,
            run.threshold_us,
            ov.threshold_ns,
            (1, 10_000_000),
        )?,
        interval_ns: duration(
            "run.interval_s",
            &SECONDS,
            run.interval_s,
            ov.interval_ns,
            (1, 3600),
        )?,
        // No flag overrides the delivery timeout: only the profile sets it.
        delivery_timeout_ns: duration(
            "run.delivery_timeout_ms",
            &MILLISECONDS,
            run.delivery_timeout_ms,
            None,
            (10, 60_000),
        )?,
    };
    round_length(&timing)?;
    delivery_timeout(run.delivery_timeout_ms, &timing)?;
    Ok(timing)
}

/// Each round must measure at least [`MIN_ROUND_PERIODS`] periods; the error says how many
/// rounds this duration and period allow.
fn round_length(timing: &Timing) -> Result<(), ProfileError> {
    let &Timing {
        duration_ns,
        rounds,
        period_ns,
        ..
    } = timing;
    let min_round_ns = MIN_ROUND_PERIODS * period_ns;
    if duration_ns / u64::from(rounds) >= min_round_ns {
        return Ok(());
    }
    Err(invalid(
        "run.rounds",
        rounds.to_string(),
        format!(
            "at most {} with this duration and period: each round must measure at least \
             {MIN_ROUND_PERIODS} periods ({} ms)",
            (duration_ns / min_round_ns).max(1),
            min_round_ns.div_ceil(MILLISECONDS.ns)
        ),
    ))
}

/// The delivery timeout must span at least 4 periods: a message not delivered within it counts
/// as lost, so a shorter one would call a delivery only a few periods late a loss.
fn delivery_timeout(delivery_timeout_ms: u64, timing: &Timing) -> Result<(), ProfileError> {
    let min_timeout_ns = 4 * timing.period_ns;
    if timing.delivery_timeout_ns >= min_timeout_ns {
        return Ok(());
    }
    Err(invalid(
        "run.delivery_timeout_ms",
        delivery_timeout_ms.to_string(),
        format!(
            "at least 4 periods, {} ms or more with a {} us period",
            min_timeout_ns.div_ceil(MILLISECONDS.ns),
            in_unit(timing.period_ns, &MICROSECONDS)
        ),
    ))
}

/// `rt.ring_setup` (or `--ring-setup`): the first setup, and every setup when there are several
/// to compare (none when there is one, so a single-setup run has no variant rows).
fn ring_setups(
    profile: &Profile,
    ov: &Overrides,
) -> Result<(RingSetup, Vec<RingSetup>), ProfileError> {
    let ring_setups = match &ov.ring_setup {
        Some(list) => super::sections::RingSetupChoice::Many(list.clone()).to_vec(),
        None => profile.rt.ring_setup.to_vec(),
    };
    let Some(&first) = ring_setups.first() else {
        return Err(invalid(
            "rt.ring_setup",
            "[]".to_string(),
            "a ring setup name or a non-empty list of: defer-taskrun, coop-taskrun, none"
                .to_string(),
        ));
    };
    let variants = if ring_setups.len() > 1 {
        ring_setups
    } else {
        Vec::new()
    };
    Ok((first, variants))
}

/// The RT pair: its scheduling first, then its two CPUs.
fn rt_pair(
    profile: &Profile,
    ov: &Overrides,
    topology: &CpuTopology,
    notes: &mut Vec<LayoutNote>,
) -> Result<RtPlan, ProfileError> {
    let scheduling = scheduling(profile, ov, notes)?;
    let (publisher_cpu, subscriber_cpu) = rt_cpus(profile, ov, topology)?;
    Ok(RtPlan {
        publisher_cpu,
        subscriber_cpu,
        policy: scheduling.policy,
        publisher_priority: scheduling.publisher,
        subscriber_priority: scheduling.subscriber,
    })
}

/// Requested names checked against the registry, duplicates dropped, order kept; none = all.
fn transports(requested: &[String], known: &[Name]) -> Result<Vec<Name>, ProfileError> {
    if requested.is_empty() {
        return Ok(known.to_vec());
    }
    let mut chosen: Vec<Name> = Vec::new();
    for text in requested {
        let Some(name) = known.iter().copied().find(|name| name.as_str() == text) else {
            return Err(ProfileError::UnknownTransport {
                name: text.clone(),
                known: known.iter().map(|k| k.to_string()).collect(),
            });
        };
        if !chosen.contains(&name) {
            chosen.push(name);
        }
    }
    Ok(chosen)
}

/// The RT pair's scheduling: one policy, a priority per worker.
struct Scheduling {
    policy: Policy,
    publisher: u8,
    subscriber: u8,
}

/// Policy and the two priorities. A command-line policy of a different kind (real-time vs
/// `other`) discards the profile's priorities, which were written for the profile's policy.
fn scheduling(
    profile: &Profile,
    ov: &Overrides,
    notes: &mut Vec<LayoutNote>,
) -> Result<Scheduling, ProfileError> {
    let rt = &profile.rt;
    let policy = ov.policy.unwrap_or(rt.policy);
    let workers = [
        ("rt.publisher_priority", "publisher", rt.publisher_priority),
        (
            "rt.subscriber_priority",
            "subscriber",
            rt.subscriber_priority,
        ),
    ];
    let mut chosen = [0u8; 2];
    for (slot, (key, role, from_profile)) in chosen.iter_mut().zip(workers) {
        let (value, suffix) = match ov.priority {
            Some(p) => (Some(p), FROM_CLI),
            None if policy.is_realtime() != rt.policy.is_realtime() => (None, ""),
            None => (from_profile, ""),
        };
        *slot = priority(key, policy, value, suffix)?;
        if *slot == 99 {
            notes.push(LayoutNote::new(
                LayoutNoteKind::RtPriority99,
                format!(
                    "RT {role} runs at priority 99, the level of the kernel's watchdog and \
                     migration threads: it can starve them; 98 or lower is safer"
                ),
            ));
        }
    }
    let [publisher, subscriber] = chosen;
    Ok(Scheduling {
        policy,
        publisher,
        subscriber,
    })
}

fn priority(
    key: &str,
    policy: Policy,
    value: Option<u8>,
    suffix: &str,
) -> Result<u8, ProfileError> {
    let name = policy.name();
    match (policy.is_realtime(), value) {
        (true, None) => Ok(DEFAULT_RT_PRIORITY),
        (true, Some(p @ 1..=99)) => Ok(p),
        (true, Some(p)) => Err(invalid(
            key,
            format!("{p}{suffix}"),
            format!(
                "1..=99 for policy `{name}` (99 is allowed but competes with kernel watchdogs)"
            ),
        )),
        (false, None | Some(0)) => Ok(0),
        (false, Some(p)) => Err(invalid(
            key,
            format!("{p}{suffix}"),
            format!("0 or no value for policy `{name}`, which takes no priority"),
        )),
    }
}

/// Whether the run traces itself: the flags win, then the profile; `auto` only where the
/// coordinator has a CPU outside the RT pair (a note says why not, otherwise).
fn explain(
    profile: Explain,
    ov: &Overrides,
    no_housekeeping_cpu: bool,
    notes: &mut Vec<LayoutNote>,
) -> bool {
    match (ov.explain, ov.no_explain, profile) {
        (true, _, _) => true,
        (_, true, _) | (_, _, Explain::Off) => false,
        (_, _, Explain::On) => true,
        (_, _, Explain::Auto) if no_housekeeping_cpu => {
            notes.push(LayoutNote::new(
                LayoutNoteKind::ExplainOff,
                "spikes not explained: every CPU is an RT CPU, and the explainer's trace reader \
                 there would delay the RT wakeups it explains (`--explain` runs it anyway)",
            ));
            false
        }
        (_, _, Explain::Auto) => true,
    }
}

#[cfg(test)]
#[path = "resolve_tests.rs"]
mod tests;
