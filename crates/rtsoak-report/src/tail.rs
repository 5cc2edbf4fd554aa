//! The "Tail estimates" block of `--details` and `report`: per run and series (and per
//! transport over its rounds pooled, where it ran several), the worst latency to expect in an
//! hour, a day and a year with their 95 % intervals beside the held-out check each passed, or
//! why there is no estimate. A model or a level whose figures contradict each other
//! ([`rtsoak_analysis::consistent`]) is shown as `-`, with the reason under the table. Pure: from
//! a result to a table and lines.

use super::comparison::Table;
use rtsoak_analysis::consistent;
use rtsoak_analysis::tail::{EXTRAPOLATION_MARK, SPANS_S};
use rtsoak_record::result::{ResultDoc, RunKey};
use rtsoak_record::{ReturnLevel, ReturnSpan, TailEstimate, TailModel};

/// The table of estimated series (absent when none was) and the lines under it (refusals with
/// their reasons, then the legend);
/// `None` when no run holds a tail estimate (older results, nothing measured).
pub(crate) fn tail_block(doc: &ResultDoc) -> Option<(Option<Table>, Vec<String>)> {
    let mut rows = Vec::new();
    let mut refusals = Vec::new();
    let mut withheld = Vec::new();
    let runs = doc.runs.iter().map(|run| {
        // A result written before the list kept the largest samples may fit a prefix.
        let span = (run.measured_ns / 1_000_000_000).max(1);
        let label = RunKey::of(run).label();
        (label, Some(span), &run.tail)
    });
    let pooled = doc.tail_pooled.iter().map(|pool| {
        let key = RunKey {
            transport: &pool.transport,
            ring_setup: pool.ring_setup,
        };
        let label = format!("{} ({} rounds)", key.label(), pool.rounds);
        (label, None, &pool.tail)
    });
    for (label, run_s, tail) in runs.chain(pooled) {
        for (series, estimate) in tail {
            let label = format!("{label} {series}");
            match estimate {
                TailEstimate::Estimated(model) => {
                    rows.push(row(label, model, run_s, &mut withheld))
                }
                TailEstimate::HeavyTail { reason, .. } => {
                    refusals.push(format!("  {label}: heavy tail: {reason}"));
                }
                TailEstimate::NotEstimable { reason, .. } => {
                    refusals.push(format!("  {label}: not estimable: {reason}"));
                }
            }
        }
    }
    if rows.is_empty() && refusals.is_empty() {
        return None;
    }
    let table = Table {
        heading: "Tail estimates (generalized Pareto fit of the cluster maxima; worst latency to \
                  expect per span, us, with 95 % interval)"
            .to_string(),
        header: [
            "run series",
            "threshold",
            "clusters",
            "xi [95 %]",
            "fit p",
            "held out",
            "1 hour",
            "1 day",
            "1 year",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    };
    let estimated = !table.rows.is_empty();
    let mut lines = vec!["Tail estimates refused:".to_string()];
    if refusals.is_empty() {
        lines.clear();
    }
    lines.extend(refusals);
    if !withheld.is_empty() {
        lines.push(
            "Tail figures not shown (the result's own figures contradict each other):".into(),
        );
        lines.extend(withheld);
    }
    if !estimated {
        return Some((None, lines));
    }
    lines.push(format!(
        "* extrapolates more than {EXTRAPOLATION_MARK:.0}x beyond the span measured: the figure \
         rests on the model, not on samples. held out: the run's second half's largest sample \
         and the range a fit on its first half alone predicted for it, then the first half's \
         from a fit on the second (99 % with the half's count of clusters). docs/tail.md \
         explains the method and when it refuses."
    ));
    Some((Some(table), lines))
}

/// The row of `model`; `run_s` is the run's measured time, s, when the row is one run's (a fit
/// that covers less of it says so). Where its figures contradict each other, `-` in every
/// figure (or in a level's cell) and the reason pushed on `withheld`.
fn row(
    label: String,
    model: &TailModel,
    run_s: Option<u64>,
    withheld: &mut Vec<String>,
) -> Vec<String> {
    let span_s = model.span_ns / 1_000_000_000;
    let label = match run_s {
        Some(run_s) if span_s < run_s => format!("{label} (first {span_s} s)"),
        _ => label,
    };
    if let Err(reason) = consistent::tail_model(model) {
        withheld.push(format!("  {label}: {}", reason.shown_as_dash()));
        let mut cells = vec![label];
        cells.extend(std::iter::repeat_n("-".to_string(), 5 + SPANS_S.len()));
        return cells;
    }
    let mut cells = vec![
        label.clone(),
        format!("{:.1}", model.threshold_ns as f64 / 1000.0),
        model.clusters.to_string(),
        format!(
            "{:.2} [{:.2}, {}]",
            model.xi,
            model.xi_low,
            model
                .xi_high
                .map_or("open".to_string(), |h| format!("{h:.2}"))
        ),
        format!("{:.2}", model.fit_test.p_value),
        held_out(model),
    ];
    // One cell per span of the header, found by name: a level a result lacks is `-`.
    for (span, _) in SPANS_S {
        let Some(return_level) = model.return_levels.iter().find(|l| l.span == span) else {
            cells.push("-".to_string());
            continue;
        };
        match consistent::return_level(model, return_level) {
            Ok(()) => cells.push(level(return_level)),
            Err(reason) => {
                let span = span_word(&span);
                withheld.push(format!("  {label} {span}: {}", reason.shown_as_dash()));
                cells.push("-".to_string());
            }
        }
    }
    cells
}

/// A span in words, as a withheld level names it.
fn span_word(span: &ReturnSpan) -> &str {
    match span {
        ReturnSpan::Hour => "hour",
        ReturnSpan::Day => "day",
        ReturnSpan::Year => "year",
        ReturnSpan::Unknown(id) => id,
    }
}

/// `182 in [95, 241], 170 in [90, 236]`: each half's largest sample in the range a fit on the
/// other half predicted (us, rounded: the check, not a figure), the second half's first; `-`
/// in results written before.
fn held_out(model: &TailModel) -> String {
    if model.held_out.is_empty() {
        return "-".to_string();
    }
    let us = |ns: f64| format!("{:.0}", ns / 1000.0);
    let checks: Vec<String> = model
        .held_out
        .iter()
        .map(|check| {
            format!(
                "{} in [{}, {}]",
                check.max_ns.map_or("none".to_string(), |m| us(m as f64)),
                check.max_low_ns.map_or("-".to_string(), us),
                check.max_high_ns.map_or("open".to_string(), us)
            )
        })
        .collect();
    checks.join(", ")
}

/// `182.3 [160.1, 240.9]*`, or `below threshold` when fewer than one cluster is expected.
fn level(level: &ReturnLevel) -> String {
    let us = |ns: f64| format!("{:.1}", ns / 1000.0);
    let Some(estimate) = level.level_ns else {
        return "below threshold".to_string();
    };
    let mark = if level.extrapolation > EXTRAPOLATION_MARK {
        "*"
    } else {
        ""
    };
    format!(
        "{} [{}, {}]{mark}",
        us(estimate),
        level.low_ns.map_or("?".to_string(), us),
        level.high_ns.map_or("open".to_string(), us)
    )
}
