//! Folding what one noise worker left behind into the run's [`NoiseOutcome`]: its reported
//! latency series merged, its counters added, and its setup (the burst worker's: each thread's)
//! judged against what it was asked, each shortfall counted as a noise failure. A run's noise
//! is then a few counts per kind, however many short-lived processes it started.
//!
//! Pure: it takes frames and a report already read from the worker and never touches a process.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use crate::protocol::{Work, WorkerReport, WorkerSpec, frame};

use crate::noise::{burst, load};
use crate::result::NoiseOutcome;
use rtsoak_analysis::stats::new_histogram;
use rtsoak_record::SampleStats;
use rtsoak_record::plan::RunPlan;
use rtsoak_record::result::NoiseActivity;
use rtsoak_record::result::noise_setup::{NoiseKind, NoiseSetup, failure};
use rtsoak_record::{Role, RtSetup, Series, SeriesKey};

/// Noise series kept in the result (the others a noise worker records are dropped): the noise
/// publishers' send call and every message the noise subscribers received.
const REPORTED: [SeriesKey; 2] = [
    SeriesKey::Noise(Series::SendCall),
    SeriesKey::Noise(Series::OtherDelivery),
];
/// Distinct failure messages kept.
const MAX_ERRORS: usize = 10;

/// What the profile asked of the kind of noise `spec` starts, as the spec carries it: a burst
/// worker's threads each take the burst policy and priority on one of its CPUs.
pub(super) fn asked(spec: &WorkerSpec) -> Option<(NoiseKind, NoiseSetup)> {
    let kind = NoiseKind::of(spec.role)?;
    let asked = match &spec.work {
        Work::Burst(bursts) => NoiseSetup::asking(burst::POLICY, bursts.priority, &spec.cpus),
        _ => NoiseSetup::asking(spec.policy, spec.priority, &spec.cpus),
    };
    Some((kind, asked))
}

/// Add one interval frame of a noise worker (whose series are `keys`) to the run's histogram
/// and counters of its series, if that series is reported: decoded straight into the run's
/// histogram. A frame whose histogram holds a different number of samples than its exact count
/// is an error (after it was added).
pub(crate) fn fold_frame(
    payload: &[u8],
    keys: &[SeriesKey],
    series: &mut BTreeMap<SeriesKey, (Histogram<u64>, SampleStats)>,
) -> anyhow::Result<()> {
    let (header, buckets) = frame::read_header(payload)?;
    let Some(&name) = keys
        .get(header.series as usize)
        .filter(|key| REPORTED.contains(key))
    else {
        return Ok(());
    };
    let (histogram, stats) = series
        .entry(name)
        .or_insert_with(|| (new_histogram(), SampleStats::default()));
    let samples = buckets.add_to(histogram)?;
    stats.merge(&header.stats);
    anyhow::ensure!(
        samples == header.stats.count,
        "{name} holds {samples} samples in its histogram but counted {}",
        header.stats.count
    );
    Ok(())
}

/// Fold the final report of the noise worker started with `spec` (process `pid`), its absence
/// or the error reading it, into `outcome`.
pub(crate) fn fold_report(
    outcome: &mut NoiseOutcome,
    spec: &WorkerSpec,
    pid: u32,
    report: anyhow::Result<Option<WorkerReport>>,
) {
    let role = spec.role;
    let activity = &mut outcome.activity;
    // What was asked is on record even if no worker of the kind ever reports.
    if let Some((kind, asked)) = asked(spec) {
        activity.setup.entry(kind).or_insert(asked);
    }
    let report = match report {
        Ok(Some(report)) => report,
        Ok(None) => {
            return failed(
                activity,
                format!("a {} (pid {pid}) left no report", role.name()),
            );
        }
        Err(error) => {
            return failed(
                activity,
                format!("reading a {} report: {error:#}", role.name()),
            );
        }
    };
    if let Some(error) = &report.error {
        failed(activity, format!("{}: {error}", role.name()));
    }
    let setups: &[RtSetup] = if role == Role::Burst {
        &report.thread_setups
    } else {
        std::slice::from_ref(&report.setup)
    };
    record_setups(activity, role, setups);
    for &cpu in &report.setup.cpus_observed {
        if !activity.cpus_observed.contains(&cpu) {
            activity.cpus_observed.push(cpu);
        }
    }
    let c = report.counters;
    match role {
        Role::NoisePublisher => {
            activity.queue.messages_sent += c.messages;
            activity.queue.wake_errors += c.wake_errors;
            activity.queue.departed_wakes += c.departed_wakes;
        }
        Role::NoiseSubscriber => {
            activity.queue.messages_received += c.other_messages;
            activity.queue.member_misses += c.member_misses;
        }
        Role::Burst => {
            let mut bursts = report.bursts.unwrap_or_default();
            // The cap is the plan's: the worker only keeps to it.
            if let Work::Burst(plan) = &spec.work {
                bursts.duty_cap_percent = plan.duty_cap_percent;
            }
            activity.bursts = Some(bursts);
        }
        Role::Load => activity.load = report.load,
        Role::Publisher | Role::Subscriber => {}
    }
}

/// Judge each setup a worker of `role` recorded (one per process; the burst worker's, one per
/// thread) and fold it under its kind; one that fell short is a noise failure.
fn record_setups(activity: &mut NoiseActivity, role: Role, setups: &[RtSetup]) {
    let Some(kind) = NoiseKind::of(role) else {
        return;
    };
    for setup in setups {
        let Some(noise) = activity.setup.get_mut(&kind) else {
            return;
        };
        if let Some(reason) = noise.record(setup) {
            failed(activity, failure(kind, setup, &reason));
        }
    }
}

/// The noise `plan` asked for that did no work in a run, one sentence each: queue noise that
/// started no process or moved no message, bursts that never ran, load generators without a
/// single operation. A quiet run must never pass for a noisy one.
pub(super) fn idle(plan: &RunPlan, activity: &NoiseActivity) -> Vec<String> {
    let noise = &plan.noise;
    let queue = &activity.queue;
    let mut idle = Vec::new();
    if noise.queue.publishers > 0 && queue.messages_sent == 0 {
        idle.push(format!(
            "the {} noise publishers ({} started) sent no message",
            noise.queue.publishers, queue.publishers_started
        ));
    }
    if noise.queue.subscribers > 0 && queue.subscribers_started == 0 {
        idle.push(format!(
            "none of the {} noise subscribers started",
            noise.queue.subscribers
        ));
    }
    if noise.bursts.enabled
        && !noise.bursts.cpus.is_empty()
        && activity.bursts.is_none_or(|b| b.bursts == 0)
    {
        idle.push("the FIFO bursts never ran".to_string());
    }
    for generator in load::GENERATORS {
        let threads = (generator.threads)(&noise.load);
        let worked = activity
            .load
            .get(generator.name)
            .is_some_and(|l| l.operations > 0);
        if threads > 0 && !worked {
            idle.push(format!(
                "the load generator `{}` ({threads} thread{}) did no work",
                generator.name,
                if threads == 1 { "" } else { "s" }
            ));
        }
    }
    idle
}

/// Count a noise failure, keeping the first few distinct messages.
pub(super) fn failed(activity: &mut NoiseActivity, message: String) {
    activity.failures += 1;
    if activity.errors.len() < MAX_ERRORS && !activity.errors.contains(&message) {
        activity.errors.push(message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::{burst_spec, load_spec, queue_noise_spec};
    use crate::protocol::WorkerReport;
    use rtsoak_record::BurstReport;
    use rtsoak_record::plan::RunPlan;

    const EPERM: &str = "sched_setscheduler failed: EPERM: Operation not permitted: run as root, \
                         or grant CAP_SYS_NICE or an RLIMIT_RTPRIO of at least the priority";

    /// The `ci` profile on a 2-CPU machine, as a run on the PREEMPT_RT VM saved it: every kind
    /// of noise on CPUs 0-1, queue noise at FIFO 20, bursts at FIFO 50.
    fn ci_plan() -> RunPlan {
        let saved = include_str!("../../../../../tests/fixtures/results/explained-6.12-rt-vm.json");
        // Only its plan: the saved document is a version 2 result, which the store upgrades
        // and this crate does not read.
        let doc: serde_json::Value = serde_json::from_str(saved).unwrap();
        let plan: RunPlan = serde_json::from_value(doc["plan"].clone()).unwrap();
        assert_eq!(
            (plan.profile.as_str(), &plan.noise_cpus[..]),
            ("ci", &[0, 1][..])
        );
        plan
    }

    fn spec(plan: &RunPlan, role: Role) -> WorkerSpec {
        match role {
            Role::Burst => burst_spec(plan, 4),
            Role::Load => load_spec(plan, 4, &std::env::temp_dir()),
            _ => queue_noise_spec(
                plan,
                rtsoak_record::transport::Name::lookup("eventfd").unwrap(),
                role,
                4,
                1,
                2,
                50_000_000,
            ),
        }
    }

    /// What a worker pinned to `cpus` records when it asked for `policy`/`priority` and got
    /// `got` (an error: SCHED_OTHER and that error).
    fn setup(cpus: &[usize], asked: (&str, u8), got: Result<(), &str>) -> RtSetup {
        let (policy, priority, policy_error) = match got {
            Ok(()) => (asked.0, asked.1, None),
            Err(error) => ("other", 0, Some(error.to_string())),
        };
        RtSetup {
            cpus_requested: cpus.to_vec(),
            cpus_allowed: cpus.to_vec(),
            cpus_observed: cpus[..1].to_vec(),
            policy_requested: asked.0.into(),
            priority_requested: asked.1,
            policy: policy.into(),
            priority,
            policy_error,
            ..Default::default()
        }
    }

    /// The report a worker of `spec` leaves when it records `got` for itself.
    fn reported(spec: &WorkerSpec, got: Result<(), &str>) -> anyhow::Result<Option<WorkerReport>> {
        let asked = (spec.policy.name(), spec.priority);
        Ok(Some(WorkerReport {
            setup: setup(&spec.cpus, asked, got),
            ..Default::default()
        }))
    }

    #[test]
    fn queue_noise_that_got_its_fifo_is_counted_as_asked_and_is_no_failure() {
        let plan = ci_plan();
        let mut outcome = NoiseOutcome::default();
        let publisher = spec(&plan, Role::NoisePublisher);
        for pid in 0..3 {
            fold_report(&mut outcome, &publisher, pid, reported(&publisher, Ok(())));
        }
        let activity = &outcome.activity;
        let noise = &activity.setup[&NoiseKind::NoisePublisher];
        assert_eq!(noise.asked(), "fifo 20 on CPUs 0-1");
        assert_eq!(
            (noise.recorded, noise.as_asked, noise.not_as_asked),
            (3, 3, 0)
        );
        assert_eq!(activity.failures, 0, "{:?}", activity.errors);
    }

    #[test]
    fn every_noise_publisher_without_its_fifo_is_a_noise_failure_in_one_message() {
        let plan = ci_plan();
        let mut outcome = NoiseOutcome::default();
        let publisher = spec(&plan, Role::NoisePublisher);
        for pid in 0..200 {
            fold_report(
                &mut outcome,
                &publisher,
                pid,
                reported(&publisher, Err(EPERM)),
            );
        }
        let activity = &outcome.activity;
        let noise = &activity.setup[&NoiseKind::NoisePublisher];
        assert_eq!(
            (noise.recorded, noise.as_asked, noise.not_as_asked),
            (200, 0, 200)
        );
        assert_eq!(noise.got(), "other (200) on CPU 0");
        assert_eq!(activity.failures, 200);
        assert_eq!(
            activity.errors,
            [format!(
                "a noise publisher asked for fifo 20 on CPUs 0-1 and got other: {EPERM}"
            )]
        );
    }

    #[test]
    fn each_burst_thread_is_judged_on_its_own_cpu_and_priority() {
        let plan = ci_plan();
        let mut outcome = NoiseOutcome::default();
        let burst = spec(&plan, Role::Burst);
        assert_eq!(burst.cpus, [0, 1]);
        let report = WorkerReport {
            thread_setups: vec![
                setup(&[0], ("fifo", 50), Ok(())),
                setup(&[1], ("fifo", 50), Err(EPERM)),
            ],
            bursts: Some(BurstReport {
                threads: 2,
                bursts: 10,
                ..Default::default()
            }),
            ..Default::default()
        };
        fold_report(&mut outcome, &burst, 7, Ok(Some(report)));
        let activity = &outcome.activity;
        let threads = &activity.setup[&NoiseKind::BurstThread];
        assert_eq!(threads.asked(), "fifo 50 on CPUs 0-1");
        assert_eq!(
            (threads.recorded, threads.as_asked, threads.not_as_asked),
            (2, 1, 1)
        );
        assert_eq!(threads.got(), "fifo 50 (1), other (1) on CPUs 0-1");
        assert_eq!(activity.failures, 1);
        assert_eq!(
            activity.errors,
            [format!(
                "a burst thread asked for fifo 50 on CPU 1 and got other: {EPERM}"
            )]
        );
        assert_eq!(activity.bursts.unwrap().duty_cap_percent, 10);
    }

    #[test]
    fn a_load_worker_seen_outside_its_cpus_is_a_noise_failure() {
        let plan = ci_plan();
        let mut outcome = NoiseOutcome::default();
        let load = spec(&plan, Role::Load);
        let mut report = reported(&load, Ok(())).unwrap();
        report.as_mut().unwrap().setup.cpus_observed = vec![0, 5];
        fold_report(&mut outcome, &load, 9, Ok(report));
        let activity = &outcome.activity;
        let noise = &activity.setup[&NoiseKind::Load];
        assert_eq!(noise.asked(), "other on CPUs 0-1");
        assert_eq!(noise.not_as_asked, 1);
        assert_eq!(activity.cpus_observed, [0, 5]);
        assert_eq!(
            activity.errors,
            [
                "a load worker asked for other on CPUs 0-1 and got other: it was seen running on \
              CPU 5, outside CPUs 0-1"
            ]
        );
    }

    #[test]
    fn what_was_asked_is_on_record_even_when_no_worker_of_the_kind_reported() {
        let plan = ci_plan();
        let mut outcome = NoiseOutcome::default();
        let subscriber = spec(&plan, Role::NoiseSubscriber);
        fold_report(&mut outcome, &subscriber, 11, Ok(None));
        let activity = &outcome.activity;
        let noise = &activity.setup[&NoiseKind::NoiseSubscriber];
        assert_eq!(
            (noise.recorded, noise.asked()),
            (0, "fifo 20 on CPUs 0-1".into())
        );
        assert_eq!(activity.failures, 1);
        assert_eq!(
            activity.errors,
            ["a noise subscriber (pid 11) left no report"]
        );
    }
}
