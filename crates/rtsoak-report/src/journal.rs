//! The lines a scheduled run leaves on stderr (the journal, under systemd): one per transport,
//! then the verdict with one line per failure, breach and regression. Every line is escaped
//! for the terminal as it is made ([`fn@line`]): the journal shows text as a terminal would.

use crate::escape::terminal;
use rtsoak_analysis::merge::by_transport;
use rtsoak_record::Series;
use rtsoak_record::result::verdict::Verdict;
use rtsoak_record::result::{ResultDoc, RunStatus};

/// One line per transport, for the journal.
pub fn transport_lines(doc: &ResultDoc) -> Vec<String> {
    let threshold_us = doc.plan.threshold_ns as f64 / 1e3;
    by_transport(doc)
        .iter()
        .map(|t| {
            if t.status == RunStatus::Unsupported {
                return line(format!("rtsoak {}: unsupported on this kernel", t.label));
            }
            let (send, delivery) = (t.summary(Series::SendCall), t.summary(Series::Delivery));
            line(format!(
                "rtsoak {}: {} messages, sends>{threshold_us}us {} (longest {:.1} us), \
                 deliveries>{threshold_us}us {} (longest {:.1} us), lost {}, {:?}",
                t.label,
                t.integrity.sent,
                send.over_threshold,
                send.max_ns as f64 / 1e3,
                delivery.over_threshold,
                delivery.max_ns as f64 / 1e3,
                t.integrity.lost,
                t.status
            ))
        })
        .collect()
}

/// `text` as one journal line.
fn line(text: String) -> String {
    terminal(&text).into_owned()
}

/// The decision's key facts in one line, for the journal: per series, the transport with the
/// fewest spikes and those that do not differ from it.
pub fn decision_line(decision: &rtsoak_record::result::decision::Decision) -> Option<String> {
    let parts: Vec<String> = decision
        .series
        .iter()
        .filter_map(|s| {
            let best = s.ranking.first()?;
            let others = match s.fewest.len() {
                0 | 1 => String::new(),
                _ => format!(", not different: {}", s.fewest[1..].join(", ")),
            };
            Some(format!(
                "{} fewest {} ({} per million{others})",
                s.series,
                best.label,
                super::decision::per_million(best.per_million)
            ))
        })
        .collect();
    (!parts.is_empty()).then(|| line(format!("rtsoak decision: {}", parts.join("; "))))
}

/// The verdict line, then one line per failure, per breach, per reason it is inconclusive and
/// per regression.
pub fn verdict_lines(verdict: &Verdict) -> Vec<String> {
    let parts = verdict_parts(verdict);
    [parts.head, parts.inconclusive, parts.regressions].concat()
}

/// The verdict's lines in the three parts the headline treats apart: the verdict line with the
/// failures and breaches, the reasons it is inconclusive, and the regressions with the baseline
/// comparison's summary.
pub(crate) struct VerdictParts {
    pub(crate) head: Vec<String>,
    pub(crate) inconclusive: Vec<String>,
    pub(crate) regressions: Vec<String>,
}

/// [`verdict_lines`], in its parts.
pub(crate) fn verdict_parts(verdict: &Verdict) -> VerdictParts {
    let regression_count = verdict
        .baseline
        .as_ref()
        .map_or(0, |d| d.regressions().count());
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let reasons_inconclusive = match verdict.inconclusive.len() {
        0 => String::new(),
        n => format!(
            ", {}",
            plural(n, "reason inconclusive", "reasons inconclusive")
        ),
    };
    let mut lines = vec![format!(
        "rtsoak verdict: {} ({}, {}{reasons_inconclusive}, {})",
        super::verdict_text::status_phrase(verdict),
        plural(verdict.failures.len(), "failure", "failures"),
        plural(verdict.breaches.len(), "breach", "breaches"),
        match &verdict.baseline {
            Some(diff) => format!("{regression_count} regression(s) against {}", diff.baseline),
            None => "no baseline".to_string(),
        }
    )];
    lines.extend(
        verdict
            .failures
            .iter()
            .map(|f| format!("  failure: {}", f.message)),
    );
    lines.extend(
        verdict
            .breaches
            .iter()
            .map(|b| format!("  breach: {}", b.message)),
    );
    let inconclusive = verdict
        .inconclusive
        .iter()
        .map(|i| line(format!("  inconclusive: {}", i.message)))
        .collect();
    let mut regressions = Vec::new();
    if let Some(diff) = &verdict.baseline {
        regressions.extend(
            diff.regressions()
                .map(|f| line(format!("  regression: {}: {}", f.label(), f.reason))),
        );
        regressions.push(line(format!("  {}", diff.summary_line())));
    }
    VerdictParts {
        head: lines.into_iter().map(line).collect(),
        inconclusive,
        regressions,
    }
}
