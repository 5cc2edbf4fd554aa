//! The coordinator's own share of the RT CPUs, as the result records it (`coordinator`). With
//! no CPU of its own it wakes far less often than the 10 ms tick it had (100 a second, every one
//! on an RT CPU), whole periods apart, and not at all while a floor run measures; with one, it
//! never wakes on an RT CPU. These are counts rtsoak controls, not latencies, so they hold on a
//! loaded machine. On a 2-CPU machine (`--rt-cpus 0,1`) the first case runs; where the machine
//! has a CPU to spare, the second.
//!
//! It starts RT workers: run it serialised with the other soak tests,
//! `flock /tmp/rtsoak-soak-tests.lock cargo test --test coordinator_pace`.

mod common;

use std::collections::BTreeSet;

use common::{is_root, saved_run, serial, skip};
use rtsoak_record::CoordinatorActivity;
use rtsoak_record::plan::RunPlan;
use rtsoak_record::result::RunResult;

/// The coordinator's wakeups a second before it was paced: a 10 ms tick.
const OLD_WAKEUPS_PER_S: f64 = 100.0;
/// Its longest tick without queue noise: the frame rings and the watchdog are served at least
/// this often.
const QUIET_TICK_MAX_NS: u64 = 1_000_000_000;
/// Its tick with a CPU of its own, as before.
const OWN_CPU_TICK_NS: u64 = 10_000_000;

fn activity(plan: &RunPlan, run: &RunResult, what: &str) -> CoordinatorActivity {
    let activity = run
        .coordinator
        .clone()
        .unwrap_or_else(|| panic!("{what} {}: no `coordinator` record", run.transport));
    let rt_cpus = BTreeSet::from([plan.rt.publisher_cpu, plan.rt.subscriber_cpu]);
    assert!(
        activity
            .wakeups_per_s_on_rt_cpus
            .keys()
            .copied()
            .eq(rt_cpus),
        "{what}: one figure for each RT CPU: {activity:?}"
    );
    activity
}

/// The record of a harness run and of its floor run, where the coordinator shared the RT CPUs.
fn assert_shared_rt_cpus(
    plan: &RunPlan,
    harness: &CoordinatorActivity,
    floor: &CoordinatorActivity,
) {
    // Quiet and without a progress display (`-q`), it serves the frame rings twice an interval,
    // and at most once a second: whole periods apart.
    let quiet_tick_ns = QUIET_TICK_MAX_NS.min(plan.interval_ns / 2);
    for (what, activity) in [("harness", harness), ("floor", floor)] {
        assert!(activity.phase_locked, "{what}: {activity:?}");
        assert_eq!(
            activity.tick_ns,
            quiet_tick_ns / plan.period_ns * plan.period_ns,
            "{what}: {activity:?}"
        );
    }
    let woke: f64 = harness.wakeups_per_s_on_rt_cpus.values().sum();
    // Once a tick, and once more at most where a signal or the measured phase's edges fall
    // between two ticks: well under the old tick's 100 (which, a relative sleep plus the work,
    // came to a little under 100 a second).
    let most_per_s = 2e9 / harness.tick_ns as f64;
    assert!(
        woke <= most_per_s && woke < OLD_WAKEUPS_PER_S,
        "the harness run's coordinator woke {woke}/s on the RT CPUs, more than {most_per_s}/s: \
         {harness:?}"
    );
    // Its tick is at most half an interval, so it woke while the run measured, and, having no
    // other CPU, on an RT CPU: a count of 0 would be a count that does not count.
    assert!(woke > 0.0, "no wakeup counted: {harness:?}");
    assert!(
        floor
            .wakeups_per_s_on_rt_cpus
            .values()
            .all(|&per_s| per_s == 0.0),
        "a floor run is left alone until its planned end: {floor:?}"
    );
}

/// The record where the coordinator had a CPU of its own: the 10 ms tick, none on the RT CPUs.
fn assert_own_cpu(activity: &CoordinatorActivity, what: &str) {
    assert!(!activity.phase_locked, "{what}: {activity:?}");
    assert_eq!(activity.tick_ns, OWN_CPU_TICK_NS, "{what}: {activity:?}");
    assert!(
        activity
            .wakeups_per_s_on_rt_cpus
            .values()
            .all(|&per_s| per_s == 0.0),
        "{what}: pinned to its own CPUs, it never woke on an RT CPU: {activity:?}"
    );
}

#[test]
fn the_coordinator_wakes_on_the_rt_cpus_only_rarely_and_never_during_a_floor_run() {
    if !is_root() {
        skip("real-time workers need root");
        return;
    }
    let _serial = serial();
    let (_dir, doc) = saved_run(&[
        "run",
        "-t",
        "eventfd",
        "--no-noise",
        "--floor",
        "--rt-cpus",
        "0,1",
        "-q",
        "--profile",
        "ci",
        "--duration",
        "2s",
    ]);
    let (run, floor) = (&doc.runs[0], &doc.floor_runs[0]);
    let (harness, floor) = (
        activity(&doc.plan, run, "harness"),
        activity(&doc.plan, floor, "floor"),
    );
    if doc.plan.housekeeping_cpus.is_empty() {
        assert_shared_rt_cpus(&doc.plan, &harness, &floor);
    } else {
        assert_own_cpu(&harness, "harness");
        assert_own_cpu(&floor, "floor");
    }
}
