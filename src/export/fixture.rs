//! A small hand-built result for the exporters' tests: deterministic samples, a comparison of
//! three transports in two rounds (one failed run, one unsupported transport, one break event)
//! and a single-run result. Never used outside tests.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use crate::plan::{FutexWake, Policy, RingSetup, RtPlan, RunPlan};
use crate::result::{
    BreakEvent, BreakSeries, Interval, IntervalSeries, ResultDoc, RunResult, RunStatus, Series,
    Tool, TransportSupport,
};
use crate::stats::{Integrity, Outlier, SampleStats, Summary, encode_histogram, new_histogram};
use crate::sysinfo::{HostFacts, SysRoot, host_facts};
use crate::transport::Support;

const THRESHOLD_NS: u64 = 100_000;
const PERIOD_NS: u64 = 500_000;
/// Each fixture run measures 1 s in two 0.5 s intervals.
const INTERVAL_NS: u64 = 500_000_000;

/// Deterministic pseudo-random samples in `low_ns..low_ns + spread_ns`, plus `spikes` appended.
fn samples(seed: u64, count: usize, low_ns: u64, spread_ns: u64, spikes: &[u64]) -> Vec<u64> {
    let mut state = seed;
    let mut values: Vec<u64> = (0..count)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            low_ns + (state >> 33) % spread_ns
        })
        .collect();
    values.extend_from_slice(spikes);
    values
}

fn record(values: &[u64]) -> (Histogram<u64>, SampleStats) {
    let mut histogram = new_histogram();
    let mut stats = SampleStats::default();
    for &value in values {
        histogram.saturating_record(value);
        stats.add(value, THRESHOLD_NS);
    }
    (histogram, stats)
}

/// A run whose series hold `values` (by series name), split into two intervals.
fn run(transport: &str, round: u32, status: RunStatus, values: &[(&str, Vec<u64>)]) -> RunResult {
    let mut series = BTreeMap::new();
    let mut intervals: Vec<Interval> = (0..2)
        .map(|index| Interval {
            index,
            start_ns: u64::from(index) * INTERVAL_NS,
            length_ns: INTERVAL_NS,
            series: BTreeMap::new(),
        })
        .collect();
    for (name, values) in values {
        let (histogram, stats) = record(values);
        let outliers = values
            .iter()
            .enumerate()
            .filter(|(_, v)| **v > THRESHOLD_NS)
            .map(|(i, v)| Outlier {
                at_ns: i as u64 * PERIOD_NS,
                value_ns: *v,
            })
            .collect();
        series.insert(
            name.to_string(),
            Series {
                summary: Summary::new(&histogram, &stats),
                histogram: encode_histogram(&histogram),
                outliers,
                outliers_dropped: 0,
            },
        );
        let (first, second) = values.split_at(values.len() / 2);
        for (interval, part) in intervals.iter_mut().zip([first, second]) {
            let (histogram, stats) = record(part);
            interval.series.insert(
                name.to_string(),
                IntervalSeries {
                    stats,
                    histogram: encode_histogram(&histogram),
                },
            );
        }
    }
    let sent = values
        .iter()
        .find(|(n, _)| *n == "send_call")
        .map_or(0, |(_, v)| v.len() as u64);
    let delivered = values
        .iter()
        .find(|(n, _)| *n == "delivery")
        .map_or(0, |(_, v)| v.len() as u64);
    let measured = status != RunStatus::Unsupported;
    RunResult {
        transport: transport.to_string(),
        ring_setup_requested: None,
        round,
        status,
        reason: None,
        break_event: None,
        started_at: format!("2026-11-30T12:00:{:02}Z", round * 10),
        measured_ns: if measured { 2 * INTERVAL_NS } else { 0 },
        ring_setup: measured.then_some(RingSetup::DeferTaskrun),
        integrity: Integrity {
            sent,
            delivered,
            lost: sent - delivered,
            ..Default::default()
        },
        series,
        intervals: if measured { intervals } else { Vec::new() },
        workers: Vec::new(),
        noise: if measured {
            noise()
        } else {
            Default::default()
        },
        cpu_busy_percent: if measured {
            [(0, 61.5), (1, 58.0), (2, 0.4), (3, 0.3), (4, 4.1), (5, 3.9)].into()
        } else {
            Default::default()
        },
    }
}

/// Queue noise that churned: enough for the table's noise column to say "on".
fn noise() -> crate::result::NoiseActivity {
    crate::result::NoiseActivity {
        enabled: true,
        cpus: vec![0, 1, 2, 3],
        cpus_observed: vec![0, 1],
        queue: crate::result::QueueNoiseActivity {
            publishers_started: 24,
            publishers_stopped: 24,
            subscribers_started: 23,
            subscribers_stopped: 23,
            messages_sent: 12_000,
            messages_received: 23_000,
            ..Default::default()
        },
        ..Default::default()
    }
}

fn publisher_and_subscriber(
    seed: u64,
    send_low_ns: u64,
    delivery_low_ns: u64,
) -> Vec<(&'static str, Vec<u64>)> {
    vec![
        (
            "send_call",
            samples(seed, 2000, send_low_ns, 4_000, &[150_000]),
        ),
        (
            "delivery",
            samples(seed + 1, 1999, delivery_low_ns, 20_000, &[120_000, 250_000]),
        ),
        ("timer", samples(seed + 2, 2001, 2_000, 8_000, &[])),
    ]
}

fn plan(transports: &[&str], rounds: u32) -> RunPlan {
    RunPlan {
        profile: "ci".to_string(),
        transports: transports.iter().map(|t| t.to_string()).collect(),
        duration_ns: u64::from(rounds) * 2 * INTERVAL_NS,
        rounds,
        warmup_ns: 200_000_000,
        period_ns: PERIOD_NS,
        threshold_ns: THRESHOLD_NS,
        interval_ns: INTERVAL_NS,
        delivery_timeout_ns: 1_000_000_000,
        outliers_max: 1000,
        rt: RtPlan {
            publisher_cpu: 4,
            subscriber_cpu: 5,
            policy: Policy::Fifo,
            publisher_priority: 40,
            subscriber_priority: 40,
        },
        noise_cpus: vec![0, 1, 2, 3],
        ring_setup: RingSetup::DeferTaskrun,
        ring_setup_variants: Vec::new(),
        futex_wake: FutexWake::Syscall,
        noise: crate::plan::NoisePlan::off(),
        abi: Default::default(),
        hold_cpu_dma_latency: true,
        break_on_ns: Some(200_000),
        break_on_continue: true,
        inject_fault: None,
        layout_notes: Vec::new(),
        verdict: Default::default(),
    }
}

fn doc(command: &str, plan: RunPlan, runs: Vec<RunResult>) -> ResultDoc {
    let root = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sys/rt-board-6cpu"
    );
    ResultDoc {
        schema_version: crate::result::SCHEMA_VERSION,
        tool: Tool {
            name: "rtsoak".to_string(),
            version: "0.0.0-fixture".to_string(),
        },
        command: command.to_string(),
        argv: vec!["rtsoak".to_string(), command.to_string()],
        started_at: "2026-11-30T12:00:00Z".to_string(),
        finished_at: Some("2026-11-30T12:01:00Z".to_string()),
        interrupted: false,
        host: HostFacts {
            // The build's architecture would make the snapshots depend on the test machine.
            arch: "aarch64".to_string(),
            ..host_facts(&SysRoot::at(root))
        },
        support: vec![
            TransportSupport {
                transport: "futex".to_string(),
                support: Support::Supported,
            },
            TransportSupport {
                transport: "signalfd".to_string(),
                support: Support::missing("IORING_OP_READ", "io_uring opcode probe", None),
            },
        ],
        caveats: vec!["RT CPUs 4-5 share a core with CPU 3 (fixture caveat)".to_string()],
        plan,
        runs,
        system_check: None,
        cpu_dma_latency: None,
        verdict: None,
    }
}

/// Futex, eventfd and signalfd in two rounds: eventfd fails in round 1, signalfd is
/// unsupported, futex is slower in round 2 and crosses `--break-on` there.
pub fn two_round_doc() -> ResultDoc {
    let futex_1 = run(
        "futex",
        1,
        RunStatus::Completed,
        &publisher_and_subscriber(1, 1_000, 5_000),
    );
    let mut eventfd_1 = run(
        "eventfd",
        1,
        RunStatus::Failed,
        &publisher_and_subscriber(11, 2_000, 6_000),
    );
    eventfd_1.reason = Some("the Subscriber worker (pid 4242) ended early: signal 9".to_string());
    eventfd_1.integrity.lost = 3;
    let mut signalfd = run("signalfd", 1, RunStatus::Unsupported, &[]);
    signalfd.reason = Some("IORING_OP_READ missing (io_uring opcode probe)".to_string());
    let mut futex_2 = run(
        "futex",
        2,
        RunStatus::Completed,
        &publisher_and_subscriber(21, 1_500, 40_000),
    );
    futex_2.break_event = Some(BreakEvent {
        series: BreakSeries::Delivery,
        seq: 812,
        value_ns: 250_000,
        at_ns: 406_000_000,
        limit_ns: 200_000,
        marker_written: true,
        trace_stopped: true,
        continued: true,
    });
    let eventfd_2 = run(
        "eventfd",
        2,
        RunStatus::Completed,
        &publisher_and_subscriber(31, 2_000, 6_000),
    );
    doc(
        "compare",
        plan(&["futex", "eventfd", "signalfd"], 2),
        vec![futex_1, eventfd_1, signalfd, futex_2, eventfd_2],
    )
}

/// One completed eventfd run.
pub fn one_run_doc() -> ResultDoc {
    let eventfd = run(
        "eventfd",
        1,
        RunStatus::Completed,
        &publisher_and_subscriber(41, 2_000, 6_000),
    );
    doc("run", plan(&["eventfd"], 1), vec![eventfd])
}
