//! The comparison table's content, shared by the terminal and Markdown layouts: a title; a "runs
//! and integrity" table (one row per transport, its rounds merged) with one line per problem
//! under it; one table per latency series with the same columns for every transport; which
//! transports' over-threshold rates differ; with several rounds, a table of every run; a legend
//! and the caveats.
//!
//! Every column means one thing in every row (docs/figures.md defines each figure): a figure a
//! transport cannot give is `-`, never a number meaning something else. Pure: builds text cells
//! from a [`ResultDoc`], decides no layout.

use super::text::{noise_ran, seconds, us};
use rtsoak_analysis::judge::rates::rates_differ_p_value;
use rtsoak_analysis::merge::{MergedSeries, TransportRuns, by_transport};
use rtsoak_analysis::stats::{clopper_pearson_95, rests_on_few_samples};
use rtsoak_record::result::{ResultDoc, RunKey, RunResult, RunStatus};
use rtsoak_record::{Integrity, Role, Summary};
use rtsoak_record::{Series, SeriesKey};

/// Everything a comparison shows, as text.
pub(crate) struct Comparison {
    /// One line: the command, kernel, RT pair, period and duration.
    pub title: String,
    /// Runs and integrity, one row per transport.
    pub integrity: Table,
    /// One line per problem, under the integrity table: lost messages, transport failures, how
    /// long a run waited for the RT CPUs and behind whom, why a run did not complete, where
    /// `--break-on` fired.
    pub problems: Vec<String>,
    /// One table per latency series, one row per measured transport.
    pub series: Vec<Table>,
    /// Which transports' over-threshold rates differ significantly (a heading line first);
    /// empty with fewer than two measured transports.
    pub differences: Vec<String>,
    /// Why the spikes happened, per transport and series (a heading line first); empty when
    /// no run was explained.
    pub causes: Vec<String>,
    /// One row per run; none when every transport ran once.
    pub rounds: Option<Table>,
    /// What each column means, in short.
    pub legend: Vec<String>,
    /// What the figures are worth.
    pub caveats: Vec<String>,
}

/// One table: a heading line, column names and rows of cells.
pub(crate) struct Table {
    /// Says what one row and one sample are.
    pub heading: String,
    /// Column names.
    pub header: Vec<String>,
    /// Rows of cells, as many as the header.
    pub rows: Vec<Vec<String>>,
}

/// Number of leading text columns (left-aligned in the terminal layout): the transport.
pub(crate) const TEXT_COLUMNS: usize = 1;

/// Two-sided p-value under which two transports' over-threshold rates are said to differ.
const SIGNIFICANCE: f64 = 0.01;

/// A latency series as the comparison shows it.
struct Shown {
    /// The series (its key in `RunResult::series`).
    series: Series,
    /// Name in the table.
    label: &'static str,
    /// What one sample is.
    sample: &'static str,
}

/// The latency series of the comparison, in the order of the RT pair's timeline.
const SHOWN_SERIES: [Shown; 6] = [
    Shown {
        series: Series::Timer,
        label: "timer",
        sample: "the RT publisher's wake time - its deadline",
    },
    Shown {
        series: Series::SendCall,
        label: "send call",
        sample: "the RT publisher's call that wakes the RT subscriber",
    },
    Shown {
        series: Series::Fanout,
        label: "fan-out",
        sample: "the RT publisher from before its first wake call to after its last",
    },
    Shown {
        series: Series::Delivery,
        label: "delivery",
        sample: "the RT subscriber's event loop first sees the message - its send timestamp",
    },
    Shown {
        series: Series::OwnWake,
        label: "own wake",
        sample: "the completion of the RT publisher's own wake - the send timestamp",
    },
    Shown {
        series: Series::Handling,
        label: "handling",
        sample: "the RT subscriber from its wakeup to waiting again",
    },
];

/// A percentile column of a series table.
struct Percentile {
    /// Column name.
    name: &'static str,
    /// Its quantile, for the "few samples beyond" mark.
    quantile: f64,
    /// Reads it from a summary.
    figure: fn(&Summary) -> u64,
}

const PERCENTILES: [Percentile; 4] = [
    Percentile {
        name: "p50",
        quantile: 0.5,
        figure: |s| s.p50_ns,
    },
    Percentile {
        name: "p99",
        quantile: 0.99,
        figure: |s| s.p99_ns,
    },
    Percentile {
        name: "p99.9",
        quantile: 0.999,
        figure: |s| s.p99_9_ns,
    },
    Percentile {
        name: "p99.99",
        quantile: 0.9999,
        figure: |s| s.p99_99_ns,
    },
];

/// Build the comparison of `doc`.
pub(crate) fn comparison(doc: &ResultDoc) -> Comparison {
    let merged = by_transport(doc);
    let measured: Vec<&TransportRuns<'_>> = merged
        .iter()
        .filter(|t| t.status != RunStatus::Unsupported)
        .collect();
    let threshold = format!(">{}us", us(doc.plan.threshold_ns));
    let mut problems: Vec<String> = merged.iter().flat_map(problems).collect();
    problems.extend(notes(doc));
    Comparison {
        title: title(doc),
        integrity: integrity_table(doc, &merged),
        problems,
        series: SHOWN_SERIES
            .iter()
            .map(|shown| series_table(shown, &measured, &threshold))
            .collect(),
        differences: differences(&measured),
        causes: super::causes::lines(&measured, &threshold),
        rounds: merged
            .iter()
            .any(|t| t.runs.len() > 1)
            .then(|| rounds_table(doc)),
        legend: legend(&threshold),
        caveats: doc.caveats.iter().map(|c| c.text.clone()).collect(),
    }
}

pub(super) fn title(doc: &ResultDoc) -> String {
    let host = &doc.host;
    let plan = &doc.plan;
    let rounds = if plan.rounds > 1 {
        format!(" in {} rounds", plan.rounds)
    } else {
        String::new()
    };
    format!(
        "rtsoak {}: {} {}{}, RT pair on CPUs {} and {} ({} {}{}), period {} us, {} s per transport{rounds}; latencies in us",
        doc.command,
        host.kernel_release.as_deref().unwrap_or("unknown kernel"),
        host.arch,
        if host.preempt_rt { " PREEMPT_RT" } else { "" },
        plan.rt.publisher_cpu,
        plan.rt.subscriber_cpu,
        plan.rt.policy.name(),
        plan.rt.publisher_priority,
        ran_otherwise(doc),
        us(plan.period_ns),
        seconds(plan.duration_ns),
    )
}

/// What the title adds where an RT worker of some run did not get the policy and priority the
/// plan asked for (no privilege): ` asked, ran other 0`, so the title's scheduling is not read
/// as what the pair had. Empty where every RT worker got what it asked for.
fn ran_otherwise(doc: &ResultDoc) -> String {
    doc.runs
        .iter()
        .flat_map(|run| &run.workers)
        .filter(|w| matches!(w.role, Role::Publisher | Role::Subscriber))
        .map(|w| &w.setup)
        .find(|s| s.policy != s.policy_requested || s.priority != s.priority_requested)
        .map(|s| format!(" asked, ran {} {}", s.policy, s.priority))
        .unwrap_or_default()
}

/// One word for how a transport (or run) ended, worst first: a failed run, lost messages, a
/// transport failure, an interruption. The lines under the table say what happened.
pub(super) fn status_word(status: RunStatus, integrity: &Integrity) -> &'static str {
    match status {
        RunStatus::Unsupported => "unsupported",
        RunStatus::Failed => "FAILED",
        _ if integrity.lost > 0 => "LOST",
        _ if !integrity.transport_failures().is_empty() => "TRANSPORT",
        RunStatus::Interrupted => "interrupted",
        RunStatus::Completed => "ok",
    }
}

/// Why a transport has no figures, in one word: `unsupported` by this kernel, or `not
/// permitted` where a privilege or a limit refused its probe.
pub(super) fn not_run_word(doc: &ResultDoc, transport: &str) -> &'static str {
    doc.support
        .iter()
        .find(|s| s.transport == transport)
        .map_or("unsupported", |s| s.support.word())
}

fn dash() -> String {
    "-".to_string()
}

fn count_or_dash(count: Option<u64>) -> String {
    count.map_or_else(dash, |c| c.to_string())
}

fn integrity_table(doc: &ResultDoc, merged: &[TransportRuns<'_>]) -> Table {
    let header = [
        "transport",
        "runs",
        "planned",
        "messages",
        "missed",
        "lost",
        "piggybacked",
        "fallback",
        "wake errors",
        "cqe errors",
        "own wakes",
        "attribution",
        "noise",
        "status",
    ];
    Table {
        heading: "Runs and integrity (counts of the RT pair's messages and periods):".to_string(),
        header: header.map(str::to_string).to_vec(),
        rows: merged.iter().map(|t| integrity_row(doc, t)).collect(),
    }
}

fn integrity_row(doc: &ResultDoc, t: &TransportRuns<'_>) -> Vec<String> {
    let mut row = vec![t.label.clone(), t.measured_runs().to_string()];
    if t.status == RunStatus::Unsupported {
        row.extend(std::iter::repeat_n(dash(), 11));
        row.push(not_run_word(doc, t.transport).to_string());
        return row;
    }
    let i = &t.integrity;
    // Results written before planned periods were recorded hold 0: unknown, not none.
    let planned = (i.planned_periods > 0).then_some(i.planned_periods);
    row.extend([
        count_or_dash(planned),
        i.sent.to_string(),
        i.missed_periods.to_string(),
        i.lost.to_string(),
        count_or_dash(i.piggybacked),
        i.fallback_deliveries.to_string(),
        i.wake_errors.to_string(),
        i.cqe_errors.to_string(),
        count_or_dash(i.own_wakes),
        i.own_wake.name().to_string(),
        noise_of(t).to_string(),
        status_word(t.status, i).to_string(),
    ]);
    row
}

fn noise_of(t: &TransportRuns<'_>) -> &'static str {
    let noise: Vec<&str> = t.runs.iter().map(|r| noise_ran(r)).collect();
    if noise.windows(2).all(|w| w[0] == w[1]) {
        noise.first().copied().unwrap_or("-")
    } else {
        "mixed"
    }
}

/// The series as this transport can give it: none where it was not recorded, or where it is
/// the own wake and the transport cannot tell its own wake apart.
fn shown_series<'t>(t: &'t TransportRuns<'_>, shown: &Shown) -> Option<&'t MergedSeries> {
    if shown.series == Series::OwnWake && !t.integrity.own_wake.attributable() {
        return None;
    }
    t.series.get(&SeriesKey::Rt(shown.series))
}

fn series_table(shown: &Shown, measured: &[&TransportRuns<'_>], threshold: &str) -> Table {
    let mut header: Vec<String> = [
        "transport",
        "count",
        threshold,
        "per million",
        "95% interval",
    ]
    .map(str::to_string)
    .to_vec();
    header.extend(PERCENTILES.map(|p| p.name.to_string()));
    header.push("longest".to_string());
    let rows = measured
        .iter()
        .map(|t| {
            let mut row = vec![t.label.clone()];
            let series = shown_series(t, shown);
            row.extend(series_cells(
                series.map(|s| s.summary),
                series.is_some_and(MergedSeries::percentiles_known),
            ));
            row
        })
        .collect();
    Table {
        heading: format!("{}: {} (us):", shown.label, shown.sample),
        header,
        rows,
    }
}

/// Count, over threshold, its rate per million with the exact 95 % interval, percentiles (`*`
/// where fewer than ten samples lie beyond; `-` where a histogram did not decode, so they are
/// not `percentiles_known`) and the longest; `-` where there is no figure.
fn series_cells(summary: Option<Summary>, percentiles_known: bool) -> Vec<String> {
    let columns = 5 + PERCENTILES.len();
    let Some(s) = summary else {
        return vec![dash(); columns];
    };
    let mut cells = vec![s.count.to_string(), s.over_threshold.to_string()];
    match clopper_pearson_95(s.over_threshold, s.count) {
        Some(interval) => cells.extend([
            per_million(s.over_threshold as f64 / s.count as f64),
            format!(
                "{}-{}",
                per_million(interval.low),
                per_million(interval.high)
            ),
        ]),
        None => cells.extend([dash(), dash()]),
    }
    for p in &PERCENTILES {
        let figure = (p.figure)(&s);
        cells.push(if s.count == 0 || !percentiles_known {
            dash()
        } else if rests_on_few_samples(s.count, p.quantile) {
            format!("{}*", us(figure))
        } else {
            us(figure)
        });
    }
    cells.push(if s.count == 0 { dash() } else { us(s.max_ns) });
    cells
}

/// A fraction as a rate per million, to three significant digits without an exponent (`0`,
/// `0.0512`, `3.47`, `999.5`, `2557`).
fn per_million(fraction: f64) -> String {
    let rate = fraction * 1e6;
    if rate == 0.0 {
        "0".to_string()
    } else if rate >= 100.0 {
        format!("{rate:.0}")
    } else {
        // Three significant digits: 12.3, 1.23, 0.123, 0.0123, ...
        let decimals = (2 - rate.log10().floor() as i32).clamp(1, 12) as usize;
        format!("{rate:.decimals$}")
    }
}

/// Lost messages and transport failures of each measured transport, one line each.
fn problems(t: &TransportRuns<'_>) -> Vec<String> {
    if t.status == RunStatus::Unsupported {
        return Vec::new();
    }
    let name = &t.label;
    t.integrity
        .loss()
        .into_iter()
        .chain(t.integrity.transport_failures())
        .map(|problem| format!("{name}: {problem}"))
        .collect()
}

/// How long runs waited for the RT CPUs and behind whom, why runs did not complete, where
/// `--break-on` fired, and what the actions did.
fn notes(doc: &ResultDoc) -> Vec<String> {
    let several_rounds = doc.plan.rounds > 1;
    let name = |run: &RunResult| {
        if several_rounds {
            format!("{} round {}", RunKey::of(run).label(), run.round)
        } else {
            RunKey::of(run).label()
        }
    };
    let mut notes = super::cpu_wait::lines(doc.cpu_wait.as_ref());
    for run in &doc.runs {
        if let Some(reason) = &run.reason {
            notes.push(format!("{}: {reason}", name(run)));
        }
        if let Some(event) = &run.break_event {
            notes.push(format!(
                "{}: --break-on {} us crossed by {} {} us (message {}, {:.3} s into the measured phase); {}; {}",
                name(run),
                us(event.limit_ns),
                event.series.name(),
                us(event.value_ns),
                event.seq,
                event.at_ns as f64 / 1e9,
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
            let why = run
                .explanation
                .as_ref()
                .and_then(|e| e.break_event.as_ref());
            if let Some(why) = why {
                notes.push(format!("  why: {}", crate::why::why(&why.why)));
            }
        }
        if let Some(actions) = &run.actions {
            let limit_ns = doc.plan.actions.limit_ns;
            notes.extend(super::actions::run_lines(&name(run), actions, limit_ns));
        }
    }
    notes.extend(super::actions::end_lines(&doc.end_actions));
    notes
}

/// Per series and transport, the transports whose over-threshold rate is significantly lower
/// (exact two-sided conditional test, p < [`SIGNIFICANCE`]): one line per series and higher
/// transport, so eight transports make at most a few lines per series.
fn differences(measured: &[&TransportRuns<'_>]) -> Vec<String> {
    if measured.len() < 2 {
        return Vec::new();
    }
    let test = format!("exact two-sided test of two rates, p < {SIGNIFICANCE}");
    let rate = |s: &Summary| s.over_threshold as f64 / s.count as f64;
    let mut lines = Vec::new();
    for shown in &SHOWN_SERIES {
        let rates: Vec<(&str, Summary)> = measured
            .iter()
            .filter_map(|t| Some((t.label.as_str(), shown_series(t, shown)?.summary)))
            .filter(|(_, s)| s.count > 0)
            .collect();
        for (high, h) in &rates {
            let lower: Vec<String> = rates
                .iter()
                .filter(|(_, l)| rate(l) < rate(h))
                .filter_map(|(low, l)| {
                    let p =
                        rates_differ_p_value(h.over_threshold, h.count, l.over_threshold, l.count);
                    (p < SIGNIFICANCE)
                        .then(|| format!("{low} {} (p = {p:.1e})", per_million(rate(l))))
                })
                .collect();
            if !lower.is_empty() {
                lines.push(format!(
                    "  {}: {high} {} per million > {}",
                    shown.label,
                    per_million(rate(h)),
                    lower.join(", ")
                ));
            }
        }
    }
    if lines.is_empty() {
        return vec![format!(
            "Over-threshold rates: no significant difference between transports ({test})."
        )];
    }
    lines.insert(
        0,
        format!("Over-threshold rates that differ ({test}, each pair tested on its own):"),
    );
    lines
}

fn rounds_table(doc: &ResultDoc) -> Table {
    let mut header: Vec<String> = ["transport", "round", "messages", "missed", "lost", "status"]
        .map(str::to_string)
        .to_vec();
    header.extend(SHOWN_SERIES.iter().map(|s| s.label.to_string()));
    let rows = doc
        .runs
        .iter()
        .map(|run| {
            let i = &run.integrity;
            let measured = run.status != RunStatus::Unsupported;
            let figure = |value: String| if measured { value } else { dash() };
            let mut row = vec![
                RunKey::of(run).label(),
                run.round.to_string(),
                figure(i.sent.to_string()),
                figure(i.missed_periods.to_string()),
                figure(i.lost.to_string()),
                status_word(run.status, i).to_string(),
            ];
            row.extend(SHOWN_SERIES.iter().map(|shown| {
                let attributable = shown.series != Series::OwnWake || i.own_wake.attributable();
                run.series
                    .get(&SeriesKey::Rt(shown.series))
                    .filter(|s| attributable && s.summary.count > 0)
                    .map_or_else(dash, |s| us(s.summary.max_ns))
            }));
            row
        })
        .collect();
    Table {
        heading: "Per round (the longest sample of each series, us):".to_string(),
        header,
        rows,
    }
}

/// One line per item, each short enough for a 150-column terminal and read on its own (the
/// Markdown layout makes each a bullet).
fn legend(threshold: &str) -> Vec<String> {
    [
        "Legend (docs/figures.md defines every figure):".to_string(),
        "  planned: measured periods; missed: deadlines that passed before the publisher could \
         send, skipped and counted (no sample); messages: sent"
            .to_string(),
        "  lost: not seen within the delivery timeout; fallback: wake sent, seen only by the \
         poll; wake errors, cqe errors: failed calls, error completions"
            .to_string(),
        "  status: FAILED (a worker failed), LOST (lost messages), TRANSPORT (fallback, wake or \
         cqe errors, own wakes that never came): each fails the run"
            .to_string(),
        "  attribution: how far the RT subscriber tells the RT publisher's own wake apart: \
         exact, covering or none"
            .to_string(),
        "  own wakes (warm-up included), piggybacked (messages another wakeup carried), own \
         wake: - where the attribution is none; elsewhere - means no figure"
            .to_string(),
        "  send call = fan-out for futex, futex-syscall and persistent-futex (one futex call wakes \
         every waiter); the others make one call per subscriber"
            .to_string(),
        format!(
            "  {threshold}: samples over the threshold, per million with its exact \
             (Clopper-Pearson) 95% interval; *: fewer than ten samples beyond this percentile"
        ),
    ]
    .to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsoak_testing::fixture::{one_run_doc, two_round_doc};

    fn row<'t>(table: &'t Table, transport: &str) -> &'t [String] {
        table
            .rows
            .iter()
            .find(|r| r[0] == transport)
            .unwrap_or_else(|| panic!("no {transport} row"))
    }

    fn cell<'t>(table: &'t Table, transport: &str, column: &str) -> &'t str {
        let index = table.header.iter().position(|h| h == column).unwrap();
        &row(table, transport)[index]
    }

    fn series<'c>(c: &'c Comparison, label: &str) -> &'c Table {
        let i = SHOWN_SERIES.iter().position(|s| s.label == label).unwrap();
        &c.series[i]
    }

    #[test]
    fn the_title_says_what_the_rt_pair_ran_at_where_it_was_not_what_it_asked() {
        use rtsoak_record::RtSetup;
        use rtsoak_record::result::WorkerRecord;
        let worker = |role, policy: &str, priority| WorkerRecord {
            role,
            pid: 4321,
            setup: RtSetup {
                policy_requested: "fifo".into(),
                priority_requested: 40,
                policy: policy.into(),
                priority,
                ..Default::default()
            },
            hygiene: Default::default(),
            counters: Default::default(),
            exit: "exit status: 0".into(),
            error: None,
        };
        let mut doc = one_run_doc();
        doc.runs[0].workers = vec![
            worker(Role::Publisher, "fifo", 40),
            worker(Role::Subscriber, "fifo", 40),
            // Noise that did not get its priority is not the pair's scheduling.
            worker(Role::NoisePublisher, "other", 0),
        ];
        assert!(title(&doc).contains("(fifo 40), period"), "{}", title(&doc));
        doc.runs[0].workers[1] = worker(Role::Subscriber, "other", 0);
        assert!(
            title(&doc).contains("(fifo 40 asked, ran other 0), period"),
            "{}",
            title(&doc)
        );
    }

    #[test]
    fn every_row_of_a_table_has_a_cell_for_every_column() {
        let c = comparison(&two_round_doc());
        let tables = std::iter::once(&c.integrity)
            .chain(&c.series)
            .chain(c.rounds.as_ref());
        for table in tables {
            assert!(!table.rows.is_empty(), "{}", table.heading);
            for row in &table.rows {
                assert_eq!(row.len(), table.header.len(), "{}: {row:?}", table.heading);
            }
        }
    }

    #[test]
    fn the_integrity_table_shows_missed_periods_failures_and_attribution() {
        let c = comparison(&two_round_doc());
        let t = &c.integrity;
        assert_eq!(cell(t, "futex", "planned"), "4007");
        assert_eq!(cell(t, "futex", "missed"), "5");
        assert_eq!(cell(t, "futex", "fallback"), "12");
        assert_eq!(cell(t, "futex", "piggybacked"), "83");
        assert_eq!(cell(t, "futex", "attribution"), "covering");
        assert_eq!(cell(t, "futex", "status"), "TRANSPORT");
        assert_eq!(cell(t, "eventfd", "status"), "FAILED");
        assert_eq!(cell(t, "eventfd", "lost"), "3");
        assert_eq!(cell(t, "futex-syscall", "piggybacked"), "-");
        assert_eq!(cell(t, "futex-syscall", "own wakes"), "-");
        assert_eq!(cell(t, "futex-syscall", "attribution"), "none");
        assert_eq!(cell(t, "futex-syscall", "status"), "ok");
        assert_eq!(cell(t, "signalfd", "status"), "unsupported");
    }

    #[test]
    fn each_problem_is_one_line_naming_its_transport() {
        let c = comparison(&two_round_doc());
        assert_eq!(
            c.problems[..2],
            [
                "futex: 12 messages were delivered only by the fallback poll (no wakeup came)",
                "eventfd: 3 of 4002 messages lost (never delivered within the delivery timeout)",
            ]
        );
    }

    #[test]
    fn lost_messages_outrank_a_transport_failure_in_the_status() {
        let mut doc = one_run_doc();
        doc.runs[0].integrity.wake_errors = 2;
        assert_eq!(
            cell(&comparison(&doc).integrity, "eventfd", "status"),
            "TRANSPORT"
        );
        doc.runs[0].integrity.lost = 1;
        assert_eq!(
            cell(&comparison(&doc).integrity, "eventfd", "status"),
            "LOST"
        );
    }

    #[test]
    fn an_unattributable_own_wake_is_a_dash_in_every_column() {
        let c = comparison(&two_round_doc());
        let own_wake = series(&c, "own wake");
        assert!(row(own_wake, "futex-syscall")[1..].iter().all(|c| c == "-"));
        assert_eq!(cell(own_wake, "futex", "count"), (1960 + 1959).to_string());
        assert_eq!(cell(own_wake, "eventfd", "count"), "4002");
    }

    #[test]
    fn futex_fan_out_is_its_send_call_and_every_transport_has_both() {
        let c = comparison(&two_round_doc());
        let (send, fanout) = (series(&c, "send call"), series(&c, "fan-out"));
        assert_eq!(row(send, "futex")[1..], row(fanout, "futex")[1..]);
        assert_ne!(row(send, "eventfd")[1..], row(fanout, "eventfd")[1..]);
        for table in [send, fanout] {
            let names: Vec<&str> = table.rows.iter().map(|r| r[0].as_str()).collect();
            assert_eq!(
                names,
                ["futex", "eventfd", "futex-syscall"],
                "measured only"
            );
        }
    }

    #[test]
    fn the_rate_comes_with_its_exact_interval_and_thin_percentiles_are_marked() {
        let c = comparison(&two_round_doc());
        let delivery = series(&c, "delivery");
        // 4 of 4002: 999.5 per million, SciPy's Clopper-Pearson interval 272.4..2557.1.
        assert_eq!(cell(delivery, "futex", "per million"), "1000");
        assert_eq!(cell(delivery, "futex", "95% interval"), "272-2557");
        // 4002 samples: p99 has 40 beyond it, p99.9 4, p99.99 none.
        assert!(!cell(delivery, "futex", "p99").ends_with('*'));
        assert!(cell(delivery, "futex", "p99.9").ends_with('*'));
        assert_eq!(cell(delivery, "futex", "p99.99"), "250.0*");
        assert_eq!(cell(delivery, "futex", "longest"), "250.0");
    }

    #[test]
    fn rates_per_million_keep_three_significant_digits() {
        assert_eq!(per_million(0.0), "0");
        assert_eq!(per_million(4.0 / 4002.0), "1000");
        assert_eq!(per_million(998.4e-6), "998");
        assert_eq!(per_million(0.001_841_8), "1842");
        assert_eq!(per_million(12.34e-6), "12.3");
        assert_eq!(per_million(3.471e-6), "3.47");
        assert_eq!(per_million(1.0 / 7_200_000.0), "0.139");
        assert_eq!(per_million(3.516e-9), "0.00352");
    }

    #[test]
    fn a_significant_rate_difference_names_the_pair_and_equal_rates_say_none() {
        let c = comparison(&two_round_doc());
        assert_eq!(c.differences.len(), 2, "{:#?}", c.differences);
        assert!(c.differences[0].starts_with("Over-threshold rates that differ"));
        let line = &c.differences[1];
        let higher = "  delivery: futex-syscall 247626 per million > futex 1000 (p = ";
        assert!(line.starts_with(higher), "{line}");
        assert!(line.contains("), eventfd 1000 (p = "), "{line}");
        let mut same = two_round_doc();
        same.runs.retain(|r| r.transport != "futex-syscall");
        assert_eq!(
            comparison(&same).differences,
            [
                "Over-threshold rates: no significant difference between transports (exact \
              two-sided test of two rates, p < 0.01)."
            ]
        );
        assert!(
            comparison(&one_run_doc()).differences.is_empty(),
            "one transport, no test"
        );
    }

    #[test]
    fn one_round_has_no_per_round_table_and_two_have_one_row_per_run() {
        assert!(comparison(&one_run_doc()).rounds.is_none());
        let doc = two_round_doc();
        let rounds = comparison(&doc).rounds.unwrap();
        assert_eq!(rounds.rows.len(), doc.runs.len());
        let syscall = rounds
            .rows
            .iter()
            .find(|r| r[0] == "futex-syscall")
            .unwrap();
        assert_eq!(syscall[3], "2", "missed in round 1");
        assert_eq!(syscall[6 + 4], "-", "own wake not attributable");
    }
}
