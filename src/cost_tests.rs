//! What `report`, `diff` and every export cost grows with the result, no faster: a result of
//! 8,000 runs is rendered in every format, compared with itself, judged and read back, each
//! within a fixed multiple of the CPU time of the same on one of 2,000 (linear is 4; quadratic
//! would be 16). Each reader is held to it on its own, so work that grows with the runs in one
//! of them is not hidden by the linear work of the others.
//!
//! Measured as this thread's CPU time (`RUSAGE_THREAD`: other tests' threads and a loaded
//! machine do not count), the least of two passes of each size taken in turn, and held to a
//! generous 6x, so neither the noise of a shared 2-CPU machine nor a cache that favours one
//! size can fail it.

use std::time::Duration;

use nix::sys::resource::{UsageWho, getrusage};

use rtsoak_record::result::cause::Cause;
use rtsoak_record::result::explain::{CauseShare, Explanation, SeriesBlame, Tracing};
use rtsoak_record::result::{ResultDoc, RunResult};
use rtsoak_record::{Series, SeriesKey, TailEstimate, TailRefusal};
use rtsoak_report::FORMATS;
use rtsoak_testing::fixture::two_round_doc;

/// A histogram of a few samples on a small range, in the uncompressed V2 encoding (which
/// results may hold too): real and decodable, and cheap to decode in a debug build, so the
/// runs' own decoding does not drown what grows with their number.
fn small_histogram() -> String {
    use base64::Engine;
    use hdrhistogram::serialization::{Serializer, V2Serializer};
    let mut histogram = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 1 << 20, 1).unwrap();
    for value in [20_000, 30_000, 40_000, 150_000] {
        histogram.record(value).unwrap();
    }
    let mut bytes = Vec::new();
    V2Serializer::new()
        .serialize(&histogram, &mut bytes)
        .unwrap();
    let text = base64::engine::general_purpose::STANDARD.encode(bytes);
    assert!(rtsoak_analysis::stats::decode_histogram(&text).is_ok());
    text
}

/// An explanation of one run's spikes: two causes and the unexplained.
fn explanation() -> Explanation {
    let blame = SeriesBlame {
        over_threshold: 4,
        kept: 4,
        explained: 3,
        unexplained: 1,
        unexplained_on_cpu: 1,
        causes: ["TIMER", "NET_RX"]
            .iter()
            .map(|action| CauseShare {
                cause: Cause::Softirq {
                    action: action.to_string(),
                },
                count: 1,
                share_percent: 25.0,
                median_us: 40,
            })
            .collect(),
    };
    Explanation {
        tracing: Tracing::default(),
        series: [Series::SendCall, Series::Delivery]
            .map(|s| (SeriesKey::Rt(s), blame.clone()))
            .into(),
        outliers: Vec::new(),
        outliers_not_listed: 0,
        break_event: None,
    }
}

/// The series each run keeps: the two every format reports, and the floor's third.
const KEPT: [SeriesKey; 3] = [
    SeriesKey::Rt(Series::SendCall),
    SeriesKey::Rt(Series::Delivery),
    SeriesKey::Rt(Series::Timer),
];

/// The fixture's three measured transports in `runs / 3` rounds, each run beside its
/// `--floor` twin, with everything a run of a real comparison carries: every series, two
/// intervals, an explanation, a tail estimate refused with its reason, a failure's reason.
fn doc(runs: usize) -> ResultDoc {
    let mut doc = two_round_doc();
    let histogram = small_histogram();
    let measured: Vec<RunResult> = doc
        .runs
        .iter()
        .filter(|r| r.round == 1 && r.transport != "signalfd")
        .cloned()
        .map(|mut run| {
            run.series.retain(|key, _| KEPT.contains(key));
            for series in run.series.values_mut() {
                series.histogram = histogram.clone();
                series.outliers.truncate(2);
            }
            run.intervals.truncate(1);
            for interval in &mut run.intervals {
                interval.series.retain(|key, _| KEPT.contains(key));
                for series in interval.series.values_mut() {
                    series.histogram = series.histogram.as_ref().map(|_| histogram.clone());
                }
            }
            run.explanation = Some(explanation());
            let refused = TailEstimate::refused(
                TailRefusal::TooFewClusters,
                "too few clusters (3); run longer".to_string(),
            );
            run.tail = [(SeriesKey::Rt(Series::Delivery), refused)].into();
            run
        })
        .collect();
    doc.runs = (0..runs)
        .map(|i| {
            let mut run = measured[i % measured.len()].clone();
            run.round = (i / measured.len() + 1) as u32;
            // As a noise worker's failure names its pid: every run's is its own.
            run.noise.errors = vec![format!("load worker (pid {}) failed", 10_000 + i)];
            run
        })
        .collect();
    doc.plan.rounds = doc.runs.last().map_or(1, |r| r.round);
    doc.floor_runs = doc.runs.clone();
    doc.decision = Some(rtsoak_report::decision::worded(
        rtsoak_analysis::judge::decision::decide(&doc),
    ));
    doc.verdict = Some(rtsoak_analysis::judge::verdict(&doc));
    doc
}

/// This thread's CPU time so far.
fn cpu_time() -> Duration {
    let usage = getrusage(UsageWho::RUSAGE_THREAD).expect("getrusage(RUSAGE_THREAD)");
    let (user, system) = (usage.user_time(), usage.system_time());
    Duration::new(user.tv_sec() as u64, user.tv_usec() as u32 * 1000)
        + Duration::new(system.tv_sec() as u64, system.tv_usec() as u32 * 1000)
}

/// What a reader does with a result, given as the document and the bytes it was read from.
type Read = Box<dyn Fn(&ResultDoc, &[u8])>;

/// One thing `report`, `diff` or `baseline promote` does with a result.
struct Reader {
    name: &'static str,
    read: Read,
}

/// Every format, the terminal with `--details`, a comparison with itself (judged and rendered
/// both ways), the verdict, and reading the file.
fn readers() -> Vec<Reader> {
    let mut readers: Vec<Reader> = FORMATS
        .iter()
        .map(|format| Reader {
            name: format.name,
            read: Box::new(|doc, _| match format.render {
                rtsoak_report::Render::File(render) => {
                    std::hint::black_box(render(doc));
                }
                rtsoak_report::Render::Directory(render) => {
                    std::hint::black_box(render(doc));
                }
            }),
        })
        .collect();
    readers.push(Reader {
        name: "--details",
        read: Box::new(|doc, _| {
            std::hint::black_box(rtsoak_report::terminal::render(doc, true, None, "rtsoak"));
        }),
    });
    readers.push(Reader {
        name: "diff",
        read: Box::new(|doc, _| {
            let diff = rtsoak_analysis::judge::diff("baseline", doc, doc, &Default::default());
            std::hint::black_box(rtsoak_report::diff::render(&diff));
            std::hint::black_box(rtsoak_report::diff::markdown(&diff));
        }),
    });
    readers.push(Reader {
        name: "verdict",
        read: Box::new(|doc, _| {
            std::hint::black_box(rtsoak_analysis::judge::verdict(doc));
        }),
    });
    readers.push(Reader {
        name: "load",
        read: Box::new(|_, bytes| {
            std::hint::black_box(crate::store::from_bytes(bytes).unwrap());
        }),
    });
    readers
}

/// A result of `runs` runs and its bytes.
fn result_of(runs: usize) -> (ResultDoc, Vec<u8>) {
    let doc = doc(runs);
    let bytes = rtsoak_report::json::render(&doc);
    (doc, bytes)
}

/// The CPU time of one pass of `reader` over `result`.
fn cpu_time_of(reader: &Reader, (doc, bytes): &(ResultDoc, Vec<u8>)) -> Duration {
    let start = cpu_time();
    (reader.read)(doc, bytes);
    cpu_time() - start
}

#[test]
fn a_result_of_8000_runs_costs_at_most_6_times_one_of_2000_in_every_reader() {
    let (small_result, large_result) = (result_of(2_000), result_of(8_000));
    let mut too_slow = Vec::new();
    for reader in readers() {
        // Each size twice, in turn, the least of each: a burst of load on the machine or a
        // cold cache spoils one pass, not the figure.
        let (mut small, mut large) = (Duration::MAX, Duration::MAX);
        for _ in 0..2 {
            small = small.min(cpu_time_of(&reader, &small_result));
            large = large.min(cpu_time_of(&reader, &large_result));
        }
        let ratio = large.as_secs_f64() / small.as_secs_f64().max(1e-6);
        eprintln!(
            "{:<11} 2000 runs {small:>10.3?}, 8000 runs {large:>10.3?}: {ratio:.2}x",
            reader.name
        );
        if ratio > 6.0 {
            too_slow.push(format!("{} {ratio:.2}x", reader.name));
        }
    }
    assert!(
        too_slow.is_empty(),
        "8000 runs took more than 6 times the CPU time of 2000 in {too_slow:?}: something \
         grows faster than the runs"
    );
}
