//! The verdict as LAVA records it: the caveats as log lines; each reason a test case of its
//! own after the sentence that says it; each condition a development profile accepted the same;
//! then the verdict line and the `verdict` case, `pass`, `fail`, or `skip` for INCONCLUSIVE.
//!
//! A reason's case is `verdict.reason.<kind>[.<transport>][.<ring setup>][.<series>]`, its kind
//! the result's own stable id: a failure's kind (`lost-messages`), the `[verdict]` key a breach
//! broke without its section (`max_delivery_us`, `require_preempt_rt`), an inconclusive kind
//! (`invalidated`), or `regression.<figure>` against the baseline. Its result is what that
//! reason makes of the verdict: `fail` for a failure, a breach or a regression, `skip` for a
//! reason it is inconclusive. Reasons of one name are one case, their sentences all logged.
//! An accepted condition is `verdict.accepted.<condition>` (`kernel.preempt-rt`), `pass`.

use super::{Case, Line, Outcome};
use crate::text::grouped;
use crate::verdict_text::{Reason, caveat_lines, labelled, status_phrase};
use rtsoak_record::result::ResultDoc;
use rtsoak_record::{RingSetup, Series, Status};

/// The caveats, the reasons, the accepted conditions and the verdict, in that order.
pub(super) fn lines(doc: &ResultDoc) -> Vec<Line> {
    let mut lines: Vec<Line> = caveat_lines(doc)
        .into_iter()
        .map(|caveat| Line::Log(format!("rtsoak caveat: {caveat}")))
        .collect();
    let Some(verdict) = &doc.verdict else {
        lines.push(Line::Log(
            "rtsoak verdict: none (the invocation did not finish)".to_string(),
        ));
        lines.push(Line::Case(Case::new("verdict", Outcome::Skip, None)));
        return lines;
    };
    for (name, same) in grouped(labelled(verdict), case_name) {
        lines.extend(
            same.iter()
                .map(|r| Line::Log(format!("rtsoak verdict reason: {}", r.sentence))),
        );
        let result = outcome(same[0].leads_to);
        lines.push(Line::Case(Case::new(&name, result, None)));
    }
    for accepted in &verdict.accepted {
        lines.push(Line::Log(format!(
            "rtsoak verdict accepts: {}",
            accepted.message
        )));
        let name = format!("verdict.accepted.{}", accepted.condition);
        lines.push(Line::Case(Case::new(&name, Outcome::Pass, None)));
    }
    lines.push(Line::Log(format!(
        "rtsoak verdict: {}",
        status_phrase(verdict)
    )));
    lines.push(Line::Case(Case::new(
        "verdict",
        outcome(verdict.status),
        None,
    )));
    lines
}

/// `pass`, `fail`, or `skip` for INCONCLUSIVE.
fn outcome(status: Status) -> Outcome {
    match status {
        Status::Pass => Outcome::Pass,
        Status::Fail => Outcome::Fail,
        Status::Inconclusive => Outcome::Skip,
    }
}

/// A reason's case: `verdict.reason.<kind>` (a breach's key without its section), then the
/// transport, ring setup and series where given.
fn case_name(reason: &Reason<'_>) -> String {
    let kind = reason.kind.strip_prefix("verdict.").unwrap_or(&reason.kind);
    let mut name = format!("verdict.reason.{kind}");
    let series = reason.series.map(Series::name);
    for part in [
        reason.transport,
        reason.ring_setup.map(RingSetup::name),
        series,
    ]
    .into_iter()
    .flatten()
    {
        name.push('.');
        name.push_str(part);
    }
    name
}
