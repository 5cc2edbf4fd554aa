//! A small hand-built result for the exporters' tests: deterministic samples, a comparison of
//! four transports in two rounds (one failed run that lost messages, one unsupported transport,
//! one break event, one run whose transport failed, missed periods, a transport whose own wake
//! is not attributable) and a single-run result. Never used outside tests.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use rtsoak_record::plan::{RtPlan, RunPlan};

use rtsoak_analysis::stats::{encode_histogram, new_histogram};
use rtsoak_record::Support;
use rtsoak_record::result::{
    Interval, IntervalSeries, ResultDoc, RunResult, RunStatus, SeriesResult, Tool,
};
use rtsoak_record::{Attribution, Integrity, Outlier, SampleStats, Summary};
use rtsoak_record::{BreakEvent, TransportSupport};
use rtsoak_record::{HostFacts, Series, SeriesKey};
use rtsoak_record::{Policy, RingSetup};

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

/// A run whose series hold `values` (by series), split into two intervals.
fn run(transport: &str, round: u32, status: RunStatus, values: &[(Series, Vec<u64>)]) -> RunResult {
    let measured = status != RunStatus::Unsupported;
    RunResult {
        transport: transport.to_string(),
        ring_setup_requested: None,
        round,
        status,
        reason: None,
        break_event: None,
        explanation: None,
        tail: Default::default(),
        actions: None,
        started_at: format!("2026-11-30T12:00:{:02}Z", round * 10),
        measured_ns: if measured { 2 * INTERVAL_NS } else { 0 },
        ring_setup: measured.then_some(RingSetup::DeferTaskrun),
        integrity: integrity(values),
        series: values
            .iter()
            .map(|(name, values)| (SeriesKey::Rt(*name), series_result(values)))
            .collect(),
        intervals: if measured {
            intervals(values)
        } else {
            Vec::new()
        },
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
        coordinator: None,
    }
}

/// One series over the whole run: its summary, its histogram, and every sample over the
/// threshold as an outlier.
fn series_result(values: &[u64]) -> SeriesResult {
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
    SeriesResult {
        summary: rtsoak_analysis::stats::summarise(&histogram, &stats),
        histogram: encode_histogram(&histogram),
        outliers,
        outliers_dropped: 0,
        outliers_complete_over_ns: Some(THRESHOLD_NS),
    }
}

/// The run's two intervals: the first holds the first half of every series, the second the rest.
fn intervals(values: &[(Series, Vec<u64>)]) -> Vec<Interval> {
    let mut intervals: Vec<Interval> = (0..2)
        .map(|index| Interval {
            index,
            start_ns: u64::from(index) * INTERVAL_NS,
            length_ns: INTERVAL_NS,
            series: BTreeMap::new(),
        })
        .collect();
    for (name, values) in values {
        let (first, second) = values.split_at(values.len() / 2);
        for (interval, part) in intervals.iter_mut().zip([first, second]) {
            let (histogram, stats) = record(part);
            interval.series.insert(
                SeriesKey::Rt(*name),
                IntervalSeries {
                    stats,
                    // Every series, as results before diagnostic series lost theirs held them.
                    histogram: Some(encode_histogram(&histogram)),
                },
            );
        }
    }
    intervals
}

/// Every message the publisher sent was planned; those the subscriber did not deliver were lost.
fn integrity(values: &[(Series, Vec<u64>)]) -> Integrity {
    let count = |series: Series| {
        values
            .iter()
            .find(|(n, _)| *n == series)
            .map_or(0, |(_, v)| v.len() as u64)
    };
    let (sent, delivered) = (count(Series::SendCall), count(Series::Delivery));
    Integrity {
        sent,
        delivered,
        lost: sent - delivered,
        planned_periods: sent,
        ..Default::default()
    }
}

/// Queue noise that churned: enough for the table's noise column to say "on".
fn noise() -> rtsoak_record::result::NoiseActivity {
    rtsoak_record::result::NoiseActivity {
        enabled: true,
        cpus: vec![0, 1, 2, 3],
        cpus_observed: vec![0, 1],
        queue: rtsoak_record::result::QueueNoiseActivity {
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

/// How a fixture transport tells its own wake apart, and how many of its messages another
/// wakeup carried.
#[derive(Clone, Copy)]
enum Wake {
    /// Every message has its own wake (`own_wake` for all of them).
    Exact { piggybacked: u64 },
    /// Own wakes carry the messages published before them (`own_wake` for those they carried).
    Covering { piggybacked: u64 },
    /// Not attributable: no `own_wake` series, no piggybacked count.
    None,
}

/// What makes one made-up run's figures differ from another's.
#[derive(Debug, Clone, Copy)]
struct Draw {
    /// Seeds every series of the run (each adds its own offset).
    seed: u64,
    /// The shortest send call.
    send_low_ns: u64,
    /// The shortest delivery.
    delivery_low_ns: u64,
}

/// Every RT series of one run: 2001 messages with a 150 us send call and deliveries of 120 and
/// 250 us over the 100 us threshold; a futex's fan-out is its send call (one call wakes every
/// waiter), others' fan-out adds the noise subscribers' calls.
fn publisher_and_subscriber(draw: Draw, wake: Wake) -> Vec<(Series, Vec<u64>)> {
    let Draw {
        seed,
        send_low_ns,
        delivery_low_ns,
    } = draw;
    let send_call = samples(seed, 2000, send_low_ns, 4_000, &[150_000]);
    let fanout = match wake {
        Wake::Exact { .. } => samples(seed + 5, 2000, send_low_ns + 3_000, 9_000, &[160_000]),
        Wake::Covering { .. } | Wake::None => send_call.clone(),
    };
    let delivered = 2001;
    let mut series = vec![
        (Series::SendCall, send_call),
        (Series::Fanout, fanout),
        (Series::Timer, samples(seed + 2, 2001, 2_000, 8_000, &[])),
        (
            Series::MemberRefresh,
            samples(seed + 3, 47, 20_000, 40_000, &[]),
        ),
        (
            Series::Delivery,
            samples(seed + 1, 1999, delivery_low_ns, 20_000, &[120_000, 250_000]),
        ),
        (
            Series::Handling,
            samples(seed + 4, 2000, 1_500, 3_000, &[110_000]),
        ),
    ];
    let own_wakes = match wake {
        Wake::Exact { .. } => Some(delivered),
        Wake::Covering { piggybacked } => Some(delivered - piggybacked as usize),
        Wake::None => None,
    };
    if let Some(count) = own_wakes {
        let own_low_ns = delivery_low_ns + 1_000;
        series.push((
            Series::OwnWake,
            samples(seed + 6, count - 1, own_low_ns, 20_000, &[250_000]),
        ));
    }
    series
}

/// Set the run's own-wake figures as its subscriber would have reported them: 400 warm-up own
/// wakes beside the measured ones.
fn attribute(run: &mut RunResult, wake: Wake) {
    let integrity = &mut run.integrity;
    let warmup_wakes = 400;
    match wake {
        Wake::Exact { piggybacked } => {
            integrity.own_wake = Attribution::Exact;
            integrity.own_wakes = Some(integrity.sent + warmup_wakes);
            integrity.wakes_missing = Some(0);
            integrity.piggybacked = Some(piggybacked);
        }
        Wake::Covering { piggybacked } => {
            integrity.own_wake = Attribution::Covering;
            integrity.own_wakes = Some(integrity.sent - piggybacked + warmup_wakes);
            integrity.piggybacked = Some(piggybacked);
        }
        Wake::None => integrity.own_wake = Attribution::None,
    }
}

/// A measured run of `transport` with every RT series and its own-wake figures.
fn measured(transport: &str, round: u32, status: RunStatus, draw: Draw, wake: Wake) -> RunResult {
    let values = publisher_and_subscriber(draw, wake);
    let mut run = run(transport, round, status, &values);
    attribute(&mut run, wake);
    run
}

/// `missed` periods skipped: planned, but no message was sent for them.
fn miss(run: &mut RunResult, missed: u64) {
    run.integrity.missed_periods = missed;
    run.integrity.planned_periods = run.integrity.sent + missed;
}

fn plan(transports: &[&str], rounds: u32) -> RunPlan {
    RunPlan {
        profile: "ci".to_string(),
        transports: transports
            .iter()
            .map(|t| rtsoak_record::transport::Name::lookup(t).expect("a registered transport"))
            .collect(),
        transports_named: false,
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
        housekeeping_cpus: vec![0, 1, 2, 3],
        ring_setup: RingSetup::DeferTaskrun,
        ring_setup_variants: Vec::new(),
        transport_settings: rtsoak_record::transport::Settings::default(),
        noise: rtsoak_record::plan::NoisePlan::off(),
        abi: Default::default(),
        hold_cpu_dma_latency: true,
        break_on_ns: Some(200_000),
        explain: true,
        keep_trace: false,
        break_on_continue: true,
        inject_fault: None,
        actions: Default::default(),
        layout_notes: Vec::new(),
        verdict: Default::default(),
        export: Default::default(),
        floor: false,
    }
}

/// The host facts of the `tests/fixtures/sys/rt-board-6cpu` machine as `sysinfo` reads them
/// (a test of the binary holds the two equal), on aarch64: the build's architecture would make
/// the snapshots depend on the test machine.
pub const HOST_FACTS_JSON: &str = include_str!("rt-board-6cpu.json");

fn doc(command: &str, plan: RunPlan, runs: Vec<RunResult>) -> ResultDoc {
    ResultDoc {
        schema_version: rtsoak_record::result::SCHEMA_VERSION,
        tool: Tool {
            name: "rtsoak".to_string(),
            version: "0.0.0-fixture".to_string(),
        },
        command: command.to_string(),
        argv: vec!["rtsoak".to_string(), command.to_string()],
        started_at: "2026-11-30T12:00:00Z".to_string(),
        finished_at: Some("2026-11-30T12:01:00Z".to_string()),
        interrupted: false,
        host: serde_json::from_str::<HostFacts>(HOST_FACTS_JSON).expect("the fixture's host facts"),
        support: vec![
            TransportSupport {
                transport: "futex".to_string(),
                support: Support::Supported,
            },
            TransportSupport {
                transport: "signalfd".to_string(),
                support: Support::Unsupported {
                    feature: "IORING_OP_READ".to_string(),
                    probe: "io_uring opcode probe".to_string(),
                    errno: None,
                },
            },
        ],
        caveats: vec![rtsoak_record::Caveat::new(
            rtsoak_record::Severity::Distorts,
            rtsoak_record::CheckId::CpuSmt,
            "RT CPUs 4-5 share a core with CPU 3 (fixture caveat)",
        )],
        plan,
        runs,
        system_check: None,
        cpu_dma_latency: None,
        cpu_wait: None,
        tracefs_mounted: None,
        decision: None,
        verdict: None,
        floor_runs: Vec::new(),
        tail_pooled: Vec::new(),
        end_actions: Vec::new(),
    }
}

/// Futex, eventfd, futex-syscall and signalfd in two rounds: eventfd fails in round 1 and
/// loses 3 messages there, signalfd is unsupported, futex is slower in round 2, crosses
/// `--break-on`, misses 5 periods and has 12 messages only the fallback poll delivered there,
/// futex-syscall (its own wake not attributable) misses 2 periods in round 1 and delivers a
/// quarter of its messages over the threshold.
pub fn two_round_doc() -> ResultDoc {
    let futex = |round: u32| Wake::Covering {
        piggybacked: 40 + u64::from(round),
    };
    let eventfd = Wake::Exact { piggybacked: 30 };
    let futex_1 = measured(
        "futex",
        1,
        RunStatus::Completed,
        Draw {
            seed: 1,
            send_low_ns: 1_000,
            delivery_low_ns: 5_000,
        },
        futex(1),
    );
    let mut eventfd_1 = measured(
        "eventfd",
        1,
        RunStatus::Failed,
        Draw {
            seed: 11,
            send_low_ns: 2_000,
            delivery_low_ns: 6_000,
        },
        eventfd,
    );
    eventfd_1.reason = Some("the Subscriber worker (pid 4242) ended early: signal 9".to_string());
    eventfd_1.integrity.lost = 3;
    let mut syscall_1 = measured(
        "futex-syscall",
        1,
        RunStatus::Completed,
        Draw {
            seed: 51,
            send_low_ns: 1_200,
            delivery_low_ns: 85_000,
        },
        Wake::None,
    );
    miss(&mut syscall_1, 2);
    let mut signalfd = run("signalfd", 1, RunStatus::Unsupported, &[]);
    signalfd.reason = Some("IORING_OP_READ missing (io_uring opcode probe)".to_string());
    let mut futex_2 = measured(
        "futex",
        2,
        RunStatus::Completed,
        Draw {
            seed: 21,
            send_low_ns: 1_500,
            delivery_low_ns: 40_000,
        },
        futex(2),
    );
    futex_2.break_event = Some(BreakEvent {
        series: rtsoak_record::Series::Delivery,
        seq: 812,
        value_ns: 250_000,
        at_ns: 406_000_000,
        limit_ns: 200_000,
        marker_written: true,
        trace_stopped: true,
        continued: true,
    });
    miss(&mut futex_2, 5);
    futex_2.integrity.fallback_deliveries = 12;
    let eventfd_2 = measured(
        "eventfd",
        2,
        RunStatus::Completed,
        Draw {
            seed: 31,
            send_low_ns: 2_000,
            delivery_low_ns: 6_000,
        },
        eventfd,
    );
    let syscall_2 = measured(
        "futex-syscall",
        2,
        RunStatus::Completed,
        Draw {
            seed: 61,
            send_low_ns: 1_200,
            delivery_low_ns: 85_000,
        },
        Wake::None,
    );
    doc(
        "compare",
        plan(&["futex", "eventfd", "futex-syscall", "signalfd"], 2),
        vec![
            futex_1, eventfd_1, syscall_1, signalfd, futex_2, eventfd_2, syscall_2,
        ],
    )
}

/// One completed eventfd run.
pub fn one_run_doc() -> ResultDoc {
    let eventfd = measured(
        "eventfd",
        1,
        RunStatus::Completed,
        Draw {
            seed: 41,
            send_low_ns: 2_000,
            delivery_low_ns: 6_000,
        },
        Wake::Exact { piggybacked: 25 },
    );
    doc("run", plan(&["eventfd"], 1), vec![eventfd])
}

/// One eventfd run's result turned into one run per `(transport, over, count)`: its send call
/// and its delivery each with `over` of `count` samples over the threshold. What a decision
/// ranks, and nothing else changed.
pub fn doc_with_rates(rates: &[(&str, u64, u64)]) -> ResultDoc {
    let mut doc = one_run_doc();
    let template = doc.runs.remove(0);
    for &(transport, over, count) in rates {
        let mut run = template.clone();
        run.transport = transport.to_string();
        for name in ["send_call", "delivery"] {
            let series = run.series.get_mut(name).expect("an RT series");
            series.summary = Summary {
                count,
                over_threshold: over,
                ..series.summary
            };
        }
        doc.runs.push(run);
    }
    doc
}

/// `summary` with its p99 at `p99_ns` and the rest moved only as far as keeps it consistent
/// (percentiles in order between the shortest and the longest sample), as a real run's would be.
pub fn set_p99(summary: &mut Summary, p99_ns: u64) {
    summary.p99_ns = p99_ns;
    summary.p90_ns = summary.p90_ns.min(p99_ns);
    summary.p50_ns = summary.p50_ns.min(summary.p90_ns);
    summary.min_ns = summary.min_ns.min(summary.p50_ns);
    summary.p99_9_ns = summary.p99_9_ns.max(p99_ns);
    summary.p99_99_ns = summary.p99_99_ns.max(summary.p99_9_ns);
    summary.max_ns = summary.max_ns.max(summary.p99_99_ns);
}

/// `summary` with every latency at `share` of what it was: a faster run of the same shape.
pub fn scale(summary: &mut Summary, share: f64) {
    for ns in [
        &mut summary.min_ns,
        &mut summary.p50_ns,
        &mut summary.p90_ns,
        &mut summary.p99_ns,
        &mut summary.p99_9_ns,
        &mut summary.p99_99_ns,
        &mut summary.max_ns,
    ] {
        *ns = (*ns as f64 * share) as u64;
    }
}

/// `doc` with `text` appended to every text it holds that may hold any text (names, reasons,
/// messages, the host's strings, the command line; not the histograms, and not what is an
/// enum or a number written as text): each field, found by its path with the array indices
/// left out, is kept where the document still reads back with it.
pub fn with_foreign_text(doc: &ResultDoc, text: &str) -> ResultDoc {
    use serde_json::Value;
    fn paths(value: &Value, path: &str, out: &mut std::collections::BTreeSet<String>) {
        match value {
            Value::String(_) => {
                out.insert(path.to_string());
            }
            Value::Array(items) => items
                .iter()
                .for_each(|v| paths(v, &format!("{path}/*"), out)),
            Value::Object(map) => {
                for (key, v) in map.iter().filter(|(key, _)| *key != "histogram") {
                    paths(v, &format!("{path}/{key}"), out);
                }
            }
            _ => {}
        }
    }
    fn append(value: &mut Value, path: &[&str], text: &str) {
        match (value, path.split_first()) {
            (Value::String(s), None) => s.push_str(text),
            (Value::Array(items), Some((&"*", rest))) => {
                items.iter_mut().for_each(|v| append(v, rest, text));
            }
            (Value::Object(map), Some((key, rest))) => {
                if let Some(v) = map.get_mut(*key) {
                    append(v, rest, text);
                }
            }
            _ => {}
        }
    }
    let original = serde_json::to_value(doc).unwrap();
    let mut all = std::collections::BTreeSet::new();
    paths(&original, "", &mut all);
    let mut hostile = original.clone();
    for path in all {
        let parts: Vec<&str> = path.split('/').skip(1).collect();
        let mut trial = hostile.clone();
        append(&mut trial, &parts, text);
        if serde_json::from_value::<ResultDoc>(trial.clone()).is_ok() {
            hostile = trial;
        }
    }
    serde_json::from_value(hostile).unwrap()
}
