//! The "Tail estimates" block of `--details` and `report`: per run and series, the worst
//! latency to expect in an hour, a day and a year with their 95 % intervals, or why there is
//! no estimate. A model or a level whose figures contradict each other
//! ([`rtsoak_analysis::consistent`]) is shown as `-`, with the reason under the table. Pure: from
//! a result to a table and lines.

use super::comparison::Table;
use rtsoak_analysis::consistent;
use rtsoak_analysis::tail::{EXTRAPOLATION_MARK, SPANS_S};
use rtsoak_record::result::{ResultDoc, RunKey};
use rtsoak_record::{ReturnLevel, TailEstimate, TailModel};

/// The table of estimated series (absent when none was) and the lines under it (refusals with
/// their reasons, then the legend);
/// `None` when no run holds a tail estimate (older results, nothing measured).
pub(crate) fn tail_block(doc: &ResultDoc) -> Option<(Option<Table>, Vec<String>)> {
    let mut rows = Vec::new();
    let mut refusals = Vec::new();
    let mut withheld = Vec::new();
    for run in &doc.runs {
        for (series, estimate) in &run.tail {
            let label = format!("{} {series}", RunKey::of(run).label());
            match estimate {
                TailEstimate::Estimated(model) => rows.push(row(label, model, &mut withheld)),
                TailEstimate::HeavyTail { reason, .. } => {
                    refusals.push(format!("  {label}: heavy tail: {reason}"));
                }
                TailEstimate::NotEstimable { reason } => {
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
         rests on the model, not on samples. docs/tail.md explains the method and when it refuses."
    ));
    Some((Some(table), lines))
}

/// The row of `model`; where its figures contradict each other, `-` in every figure (or in a
/// level's cell) and the reason pushed on `withheld`.
fn row(label: String, model: &TailModel, withheld: &mut Vec<String>) -> Vec<String> {
    if let Err(reason) = consistent::tail_model(model) {
        withheld.push(format!("  {label}: {}", reason.shown_as_dash()));
        let mut cells = vec![label];
        cells.extend(std::iter::repeat_n("-".to_string(), 4 + SPANS_S.len()));
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
                withheld.push(format!("  {label} {span}: {}", reason.shown_as_dash()));
                cells.push("-".to_string());
            }
        }
    }
    cells
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
