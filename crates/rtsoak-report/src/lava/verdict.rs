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
use crate::verdict_text::{caveat_lines, status_phrase};
use rtsoak_record::result::ResultDoc;
use rtsoak_record::result::verdict::Verdict;
use rtsoak_record::{RingSetup, Series};
use rtsoak_record::{Status, serde_id};

/// One reason: its case's name, what it makes of the verdict, and its sentence.
struct Reason {
    name: String,
    outcome: Outcome,
    sentence: String,
}

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
    for (name, same) in grouped(reasons(verdict), |reason| reason.name.clone()) {
        lines.extend(
            same.iter()
                .map(|r| Line::Log(format!("rtsoak verdict reason: {}", r.sentence))),
        );
        lines.push(Line::Case(Case::new(&name, same[0].outcome, None)));
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
    let outcome = match verdict.status {
        Status::Pass => Outcome::Pass,
        Status::Fail => Outcome::Fail,
        Status::Inconclusive => Outcome::Skip,
    };
    lines.push(Line::Case(Case::new("verdict", outcome, None)));
    lines
}

/// Every reason of `verdict`, in the order `verdict_text::reasons` says them.
fn reasons(verdict: &Verdict) -> Vec<Reason> {
    let mut reasons = Vec::new();
    let mut add = |name: String, outcome, sentence: &str| {
        reasons.push(Reason {
            name,
            outcome,
            sentence: sentence.to_string(),
        });
    };
    for f in &verdict.failures {
        let name = case_name(
            &serde_id(f.kind),
            f.transport.as_deref(),
            f.ring_setup,
            None,
        );
        add(name, Outcome::Fail, &f.message);
    }
    for b in &verdict.breaches {
        let key = b.what.key();
        let kind = key.strip_prefix("verdict.").unwrap_or(&key);
        let name = case_name(
            kind,
            b.transport.as_deref(),
            b.ring_setup,
            b.series.map(Series::name),
        );
        add(name, Outcome::Fail, &b.message);
    }
    for i in &verdict.inconclusive {
        let name = case_name(
            &serde_id(i.kind),
            i.transport.as_deref(),
            i.ring_setup,
            None,
        );
        add(name, Outcome::Skip, &i.message);
    }
    if let Some(diff) = &verdict.baseline {
        for f in diff.regressions() {
            let kind = format!("regression.{}", serde_id(f.figure));
            let name = case_name(
                &kind,
                Some(&f.transport),
                f.ring_setup,
                f.series.map(Series::name),
            );
            let sentence = format!("regression: {}: {}", f.label(), f.reason);
            add(name, Outcome::Fail, &sentence);
        }
    }
    reasons
}

/// A reason's case: `verdict.reason.<kind>`, then the transport, ring setup and series where
/// given.
fn case_name(
    kind: &str,
    transport: Option<&str>,
    ring_setup: Option<RingSetup>,
    series: Option<&str>,
) -> String {
    let mut name = format!("verdict.reason.{kind}");
    for part in [transport, ring_setup.map(RingSetup::name), series]
        .into_iter()
        .flatten()
    {
        name.push('.');
        name.push_str(part);
    }
    name
}
