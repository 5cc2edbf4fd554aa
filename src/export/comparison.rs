//! The comparison table's content, shared by the terminal and Markdown layouts: a title, one
//! row per transport (its rounds merged), one row per run when there was more than one round,
//! notes (why a run did not complete, where `--break-on` fired) and the caveats.

use super::{noise_ran, seconds, us};
use crate::result::merge::{TransportRuns, by_transport};
use crate::result::{ResultDoc, RunResult, RunStatus};
use crate::stats::{Integrity, Summary};

/// Everything a comparison table shows, as text cells.
pub struct Comparison {
    /// One line: the command, kernel, RT pair, period and duration.
    pub title: String,
    /// Column names of both tables (the per-round table says `round` where this says `runs`).
    pub header: Vec<String>,
    /// One row per transport.
    pub rows: Vec<Vec<String>>,
    /// One row per run; empty when every transport ran once.
    pub round_rows: Vec<Vec<String>>,
    /// Why runs did not complete, and where `--break-on` fired.
    pub notes: Vec<String>,
    /// What the figures are worth.
    pub caveats: Vec<String>,
}

/// Index of the `runs`/`round` column.
pub const RUNS_COLUMN: usize = 2;

/// Number of leading text columns (left-aligned in the terminal layout).
pub const TEXT_COLUMNS: usize = 2;

/// Build the comparison of `doc`.
pub fn comparison(doc: &ResultDoc) -> Comparison {
    let threshold = us(doc.plan.threshold_ns);
    let header = [
        "transport".to_string(),
        "kernel".to_string(),
        "runs".to_string(),
        "messages".to_string(),
        format!("sends>{threshold}us"),
        "longest send".to_string(),
        "send p99.9".to_string(),
        "send p99.99".to_string(),
        format!("deliveries>{threshold}us"),
        "longest delivery".to_string(),
        "delivery p99.9".to_string(),
        "delivery p99.99".to_string(),
        "lost".to_string(),
        "noise".to_string(),
        "status".to_string(),
    ];
    let kernel = doc
        .host
        .kernel_release
        .clone()
        .unwrap_or_else(|| "unknown".to_string());
    let merged = by_transport(doc);
    let rows = merged.iter().map(|t| transport_row(t, &kernel)).collect();
    let round_rows = if merged.iter().any(|t| t.runs.len() > 1) {
        doc.runs.iter().map(|run| run_row(run, &kernel)).collect()
    } else {
        Vec::new()
    };
    Comparison {
        title: title(doc),
        header: header.to_vec(),
        rows,
        round_rows,
        notes: notes(doc),
        caveats: doc.caveats.clone(),
    }
}

fn title(doc: &ResultDoc) -> String {
    let host = &doc.host;
    let plan = &doc.plan;
    let rounds = if plan.rounds > 1 {
        format!(" in {} rounds", plan.rounds)
    } else {
        String::new()
    };
    format!(
        "rtsoak {}: {} {}{}, RT pair on CPUs {} and {} ({} {}), period {} us, {} s per transport{rounds}; latencies in us",
        doc.command,
        host.kernel_release.as_deref().unwrap_or("unknown kernel"),
        host.arch,
        if host.preempt_rt { " PREEMPT_RT" } else { "" },
        plan.rt.publisher_cpu,
        plan.rt.subscriber_cpu,
        plan.rt.policy.name(),
        plan.rt.publisher_priority,
        us(plan.period_ns),
        seconds(plan.duration_ns),
    )
}

fn status_word(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Completed => "ok",
        RunStatus::Interrupted => "interrupted",
        RunStatus::Failed => "FAILED",
        RunStatus::Unsupported => "unsupported",
    }
}

/// The figures of a row, from either a merged transport or a single run.
fn figures(
    first: [String; 3],
    status: RunStatus,
    integrity: &Integrity,
    send: Summary,
    delivery: Summary,
    noise: &str,
) -> Vec<String> {
    let mut row = first.to_vec();
    if status == RunStatus::Unsupported {
        row.extend(std::iter::repeat_n("-".to_string(), 11));
        row.push(status_word(status).to_string());
        return row;
    }
    row.extend([
        integrity.sent.to_string(),
        send.over_threshold.to_string(),
        us(send.max_ns),
        us(send.p99_9_ns),
        us(send.p99_99_ns),
        delivery.over_threshold.to_string(),
        us(delivery.max_ns),
        us(delivery.p99_9_ns),
        us(delivery.p99_99_ns),
        integrity.lost.to_string(),
        noise.to_string(),
        status_word(status).to_string(),
    ]);
    row
}

fn transport_row(t: &TransportRuns<'_>, kernel: &str) -> Vec<String> {
    let noise: Vec<&str> = t.runs.iter().map(|r| noise_ran(r)).collect();
    let noise = if noise.windows(2).all(|w| w[0] == w[1]) {
        noise.first().copied().unwrap_or("-")
    } else {
        "mixed"
    };
    figures(
        [
            t.transport.to_string(),
            kernel.to_string(),
            t.measured_runs().to_string(),
        ],
        t.status,
        &t.integrity,
        t.summary("send_call"),
        t.summary("delivery"),
        noise,
    )
}

fn run_row(run: &RunResult, kernel: &str) -> Vec<String> {
    let summary = |name: &str| run.series.get(name).map(|s| s.summary).unwrap_or_default();
    figures(
        [
            run.transport.clone(),
            kernel.to_string(),
            run.round.to_string(),
        ],
        run.status,
        &run.integrity,
        summary("send_call"),
        summary("delivery"),
        noise_ran(run),
    )
}

fn notes(doc: &ResultDoc) -> Vec<String> {
    let several_rounds = doc.plan.rounds > 1;
    let name = |run: &RunResult| {
        if several_rounds {
            format!("{} round {}", run.transport, run.round)
        } else {
            run.transport.clone()
        }
    };
    let mut notes = Vec::new();
    for run in &doc.runs {
        if let Some(reason) = &run.reason {
            notes.push(format!("{}: {reason}", name(run)));
        }
        if let Some(event) = &run.break_event {
            notes.push(format!(
                "{}: --break-on {} us crossed by {} {} us (message {}, {} s into the measured phase); {}; {}",
                name(run),
                us(event.limit_ns),
                event.series.name(),
                us(event.value_ns),
                event.seq,
                seconds_3(event.at_ns),
                match (event.marker_written, event.trace_stopped) {
                    (true, true) => "marker written to the trace buffer and tracing stopped",
                    (false, true) => "tracing stopped (the marker did not reach the buffer)",
                    (true, false) => "marker written, but tracing could not be stopped",
                    (false, false) => "the trace could not be marked or stopped",
                },
                if event.continued {
                    "the run carried on"
                } else {
                    "the run stopped there"
                },
            ));
        }
    }
    notes
}

fn seconds_3(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e9)
}
