//! The spike explainer: why each over-threshold send call and delivery happened, from a kernel
//! trace of the run. A tracefs instance of rtsoak's own ([`tracefs`]) records the scheduler,
//! priority-inheritance, lock, interrupt and futex events that concern the RT tasks; a thread of
//! the coordinator (off the RT CPUs) reads it as the run goes and keeps only the RT tasks' waits
//! ([`episodes`](rtsoak_analysis::explain::episodes)); after the run each outlier is laid over
//! those waits ([`blame`]).
//!
//! Tracefs rather than eBPF: every kernel rtsoak runs on has it (no BPF toolchain, BTF or
//! verifier differences across the board's 5.15 and the 6.x kernels), the events needed are all
//! tracepoints, and a filtered instance costs the RT tasks only the events they emit themselves.
//!
//! Nothing here runs in, or adds anything to, the measuring loops.

use std::fs::File;
use std::io::{BufWriter, ErrorKind, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

pub mod calibrate;
pub mod tracefs;

use rtsoak_analysis::explain::blame;
use rtsoak_analysis::explain::episodes::Episodes;
use rtsoak_analysis::explain::event::{self, Pid};
use rtsoak_record::result::explain::{Explanation, Tracing};

/// How often the reader looks at an empty pipe.
const POLL: Duration = Duration::from_millis(5);

/// A trace being recorded and read.
pub(crate) struct Tracer {
    instance: Option<tracefs::Instance>,
    stop: Arc<AtomicBool>,
    reader: Option<JoinHandle<Read>>,
}

/// What the reader made of the trace.
pub(crate) struct Read {
    pub(crate) episodes: Episodes,
    pub(crate) lines: u64,
    pub(crate) error: Option<String>,
    /// The file every line was written to (`Options::keep`), when all of it was.
    pub(crate) kept: Option<PathBuf>,
    keep_error: Option<String>,
}

/// The finished trace: the RT tasks' waits and what the trace could see.
pub(crate) struct Trace {
    pub(crate) episodes: Episodes,
    pub(crate) tracing: Tracing,
}

/// What the tracer is asked to do besides explaining.
#[derive(Debug, Clone, Default)]
pub(crate) struct Options {
    /// Shortest wait worth keeping, us (half the threshold: a cause must cover half a spike).
    pub(crate) min_wait_us: u64,
    /// Also write every trace line read into this file (`--keep-trace`).
    pub(crate) keep: Option<PathBuf>,
}

impl Tracer {
    /// Trace the RT tasks `watched` from now on. The error says why tracing is unavailable.
    pub(crate) fn start(watched: &[Pid], options: Options) -> Result<Tracer, String> {
        let instance = tracefs::Instance::start(watched)?;
        let pipe = instance.pipe()?;
        let keep =
            match &options.keep {
                Some(path) => Some((
                    path.clone(),
                    BufWriter::new(create_trace_file(path).map_err(|e| {
                        format!("creating the trace file {}: {e:#}", path.display())
                    })?),
                )),
                None => None,
            };
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        let episodes = Episodes::new(watched, options.min_wait_us);
        let reader = std::thread::Builder::new()
            .name("rtsoak-trace".into())
            .spawn(move || read(pipe, &stopping, episodes, keep))
            .map_err(|e| format!("starting the trace reader: {e}"))?;
        Ok(Tracer {
            instance: Some(instance),
            stop,
            reader: Some(reader),
        })
    }

    /// Stop tracing, read what is left and remove the instance.
    pub(crate) fn finish(mut self) -> Trace {
        let instance = self
            .instance
            .take()
            .expect("a started tracer has its instance");
        instance.stop();
        self.stop.store(true, Ordering::Release);
        let read = self
            .reader
            .take()
            .and_then(|reader| reader.join().ok())
            .unwrap_or_else(|| Read {
                episodes: Episodes::default(),
                lines: 0,
                error: Some("the trace reader panicked".into()),
                kept: None,
                keep_error: None,
            });
        let missing = instance.missing.clone();
        drop(instance);
        let tracing = Tracing {
            unavailable: read.error,
            events_missing: missing,
            events_lost: read.episodes.losses.iter().map(|(_, n)| n).sum(),
            lines: read.lines,
            trace_file: read
                .kept
                .as_ref()
                .and_then(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned()),
            trace_file_error: read.keep_error.clone(),
            episodes: read.episodes.done.len() as u64,
        };
        Trace {
            episodes: read.episodes,
            tracing,
        }
    }
}

/// The reader thread: take what the pipe has, feed each line to `episodes` (and to the kept
/// file), sleep a moment when it is empty, until stopped and drained.
fn read(
    mut pipe: File,
    stopping: &AtomicBool,
    mut episodes: Episodes,
    mut keep: Option<(PathBuf, BufWriter<File>)>,
) -> Read {
    let mut buffer = Vec::new();
    let mut lines = 0u64;
    let mut error = None;
    let mut keep_error = None;
    loop {
        let stopping_now = stopping.load(Ordering::Acquire);
        match tracefs::read_some(&mut pipe, &mut buffer) {
            Ok(true) => {}
            Ok(false) if stopping_now => break,
            Ok(false) => std::thread::sleep(POLL),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => {
                error = Some(format!("reading the trace: {e}"));
                break;
            }
        }
        let Some(end) = buffer.iter().rposition(|&b| b == b'\n') else {
            continue;
        };
        if let Some((path, file)) = &mut keep
            && let Err(e) = file.write_all(&buffer[..=end])
        {
            keep_error = Some(format!("writing the trace file {}: {e}", path.display()));
            keep = None;
        }
        for line in String::from_utf8_lossy(&buffer[..end]).lines() {
            lines += 1;
            if let Some(record) = event::parse(line) {
                episodes.feed(&record);
            }
        }
        buffer.drain(..=end);
    }
    episodes.finish();
    let kept = keep.and_then(|(path, mut file)| match file.flush() {
        Ok(()) => Some(path),
        Err(e) => {
            keep_error = Some(format!("writing the trace file {}: {e}", path.display()));
            None
        }
    });
    Read {
        episodes,
        lines,
        error,
        kept,
        keep_error,
    }
}

impl Drop for Tracer {
    /// A run that ended early still stops its reader and removes its instance.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

/// A new file name in `dir` for the kept trace of one run of `transport` with `setup`:
/// `trace-futex-defer-taskrun-1.txt`, numbered past those earlier runs (rounds) left.
pub(crate) fn trace_file(dir: &std::path::Path, transport: &str, setup: &str) -> PathBuf {
    (1..)
        .map(|n| dir.join(format!("trace-{transport}-{setup}-{n}.txt")))
        .find(|path| !path.exists())
        .expect("some number is free")
}

/// The `--keep-trace` file, created through its directory's fd under a fresh name (a link
/// planted under its name is replaced, never followed), 0644.
fn create_trace_file(path: &std::path::Path) -> anyhow::Result<File> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| anyhow::anyhow!("{} names no file", path.display()))?;
    Ok(rtsoak_sys::safe_dir::SafeDir::open(dir)?.create_file(name, 0o644)?)
}

/// An explanation that could not be made: every spike is unexplained for `reason`.
pub(crate) fn unavailable(reason: String) -> Explanation {
    Explanation {
        tracing: Tracing {
            unavailable: Some(reason),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// Explain `run`'s send-call and delivery outliers from `trace`. `measure_start_ns` is the
/// start of the measured phase (the outliers' time origin); `publisher` and `subscriber` the RT
/// tasks. The chains of at most `max_listed` outliers are listed, the longest.
pub(crate) fn explain_run(
    trace: &Trace,
    run: &rtsoak_record::result::RunResult,
    measure_start_ns: u64,
    [publisher, subscriber]: [Pid; 2],
    max_listed: usize,
) -> Explanation {
    use rtsoak_record::{Series, SeriesKey};
    let mut explanation = Explanation {
        tracing: trace.tracing.clone(),
        ..Default::default()
    };
    let both = [publisher, subscriber];
    // A send call is the publisher's alone; a delivery waits on either RT task.
    let tasks_of = |series: Series| match series {
        Series::SendCall => &both[..1],
        _ => &both[..],
    };
    for series in [Series::SendCall, Series::Delivery] {
        let tasks = tasks_of(series);
        let Some(recorded) = run.series.get(&SeriesKey::Rt(series)) else {
            continue;
        };
        let target = blame::Target {
            series,
            outliers: &recorded.outliers,
            over_threshold: recorded.summary.over_threshold,
            tasks,
        };
        let (summary, outliers) = blame::explain(&target, &trace.episodes, measure_start_ns);
        explanation.series.insert(SeriesKey::Rt(series), summary);
        explanation.outliers.extend(outliers);
    }
    // A long result lists the chains of its longest spikes only; the counts cover every one.
    if explanation.outliers.len() > max_listed {
        explanation
            .outliers
            .sort_by_key(|o| std::cmp::Reverse(o.value_ns));
        explanation.outliers_not_listed = (explanation.outliers.len() - max_listed) as u64;
        explanation.outliers.truncate(max_listed);
    }
    explanation.outliers.sort_by_key(|o| o.at_ns);
    // The sample that fired --break-on, whether or not it was over the threshold.
    if let Some(event) = run.break_event {
        let tasks = tasks_of(event.series);
        let outlier = rtsoak_record::Outlier {
            at_ns: event.at_ns,
            value_ns: event.value_ns,
        };
        let target = blame::Target {
            series: event.series,
            outliers: std::slice::from_ref(&outlier),
            over_threshold: 1,
            tasks,
        };
        let (_, mut explained) = blame::explain(&target, &trace.episodes, measure_start_ns);
        explanation.break_event = explained.pop();
    }
    explanation
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsoak_record::{Series, SeriesKey};

    #[test]
    fn a_run_lists_the_chains_of_its_longest_spikes_and_counts_every_one() {
        let run = rtsoak_testing::fixture::two_round_doc().runs.remove(0);
        let kept = |series: Series| {
            run.series
                .get(&SeriesKey::Rt(series))
                .map_or(0, |s| s.outliers.len())
        };
        let all = kept(Series::SendCall) + kept(Series::Delivery);
        assert!(all >= 3, "the fixture keeps {all} outliers");
        let trace = Trace {
            episodes: Episodes::default(),
            tracing: Tracing::default(),
        };
        let full = explain_run(&trace, &run, 0, [1, 2], usize::MAX);
        assert_eq!(full.outliers.len(), all);
        assert_eq!(full.outliers_not_listed, 0);
        let short = explain_run(&trace, &run, 0, [1, 2], 2);
        assert_eq!(short.outliers.len(), 2);
        assert_eq!(short.outliers_not_listed, (all - 2) as u64);
        // The longest two, in time order; the counts still cover every kept outlier.
        let mut values: Vec<u64> = full.outliers.iter().map(|o| o.value_ns).collect();
        values.sort_unstable_by(|a, b| b.cmp(a));
        let shortest_listed = short.outliers.iter().map(|o| o.value_ns).min().unwrap();
        assert_eq!(shortest_listed, values[1]);
        assert!(short.outliers.windows(2).all(|w| w[0].at_ns <= w[1].at_ns));
        assert_eq!(short.series, full.series);
    }
}
