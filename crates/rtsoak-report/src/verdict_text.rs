//! The verdict in words every rendering shares: its word, which on a PASS that accepted
//! conditions invalidating the figures as real-time figures says in the same phrase what the
//! PASS is not, and its reasons (labelled by kind and by what they concern, for the exports
//! that tell them apart). One wording, so the terminal, the journal and every export say the
//! same thing.

use rtsoak_record::result::ResultDoc;
use rtsoak_record::result::verdict::Verdict;
use rtsoak_record::{CaveatKind, CheckId, RingSetup, Series, Status, serde_id};

/// `PASS`, `FAIL`, `INCONCLUSIVE`, or on a PASS that accepted conditions (a development
/// profile's) `PASS on a non-RT kernel: these figures describe this kernel`.
pub fn status_phrase(verdict: &Verdict) -> String {
    let word = verdict.status.word();
    if verdict.status != Status::Pass || verdict.accepted.is_empty() {
        return word.to_string();
    }
    let has = |id: CheckId| {
        let kind = CaveatKind::from(id);
        verdict.accepted.iter().any(|a| a.condition == kind)
    };
    let non_rt = has(CheckId::KernelPreemptRt);
    let mut qualifiers = Vec::new();
    if non_rt {
        qualifiers.push("on a non-RT kernel");
    }
    if has(CheckId::LayoutNoiseSharesRtCpu) {
        qualifiers.push("with noise on the RT CPUs");
    }
    let described = if non_rt && qualifiers.len() == 1 {
        "these figures describe this kernel"
    } else {
        "these figures describe this machine as it is set up, not real-time conditions"
    };
    if qualifiers.is_empty() {
        // A condition this build does not know by name (a newer result): still say it.
        return format!("{word} with accepted conditions: {described}");
    }
    format!("{word} {}: {described}", qualifiers.join(" "))
}

/// One reason of a verdict, labelled as the exports tell reasons apart.
pub(crate) struct Reason<'a> {
    /// What it makes of the verdict: FAIL, or INCONCLUSIVE for a reason it is inconclusive.
    pub(crate) leads_to: Status,
    /// The result's own id of its kind: a failure kind (`lost-messages`), the `[verdict]` key a
    /// breach broke (`verdict.max_delivery_us`), an inconclusive kind (`invalidated`), or
    /// `regression.<figure>` against the baseline.
    pub(crate) kind: String,
    /// The transport it concerns (none: the whole invocation), its ring setup and series.
    pub(crate) transport: Option<&'a str>,
    pub(crate) ring_setup: Option<RingSetup>,
    pub(crate) series: Option<Series>,
    pub(crate) sentence: String,
}

/// Every reason of the verdict, one sentence each: failures, breaches, why it is inconclusive,
/// regressions against the baseline.
pub fn reasons(verdict: &Verdict) -> Vec<String> {
    labelled(verdict).into_iter().map(|r| r.sentence).collect()
}

/// [`reasons`], each labelled.
pub(crate) fn labelled(verdict: &Verdict) -> Vec<Reason<'_>> {
    let mut reasons = own_reasons(verdict);
    if let Some(diff) = &verdict.baseline {
        reasons.extend(diff.regressions().map(|f| Reason {
            leads_to: Status::Fail,
            kind: format!("regression.{}", serde_id(f.figure)),
            transport: Some(&f.transport),
            ring_setup: f.ring_setup,
            series: f.series,
            sentence: format!("regression: {}: {}", f.label(), f.reason),
        }));
    }
    reasons
}

/// The verdict's own reasons, labelled: its failures, breaches and why it is inconclusive,
/// without the baseline's regressions.
pub(crate) fn own_reasons(verdict: &Verdict) -> Vec<Reason<'_>> {
    let failures = verdict.failures.iter().map(|f| Reason {
        leads_to: Status::Fail,
        kind: serde_id(f.kind),
        transport: f.transport.as_deref(),
        ring_setup: f.ring_setup,
        series: None,
        sentence: f.message.clone(),
    });
    let breaches = verdict.breaches.iter().map(|b| Reason {
        leads_to: Status::Fail,
        kind: b.what.key(),
        transport: b.transport.as_deref(),
        ring_setup: b.ring_setup,
        series: b.series,
        sentence: b.message.clone(),
    });
    let inconclusive = verdict.inconclusive.iter().map(|i| Reason {
        leads_to: Status::Inconclusive,
        kind: serde_id(i.kind),
        transport: i.transport.as_deref(),
        ring_setup: i.ring_setup,
        series: None,
        sentence: i.message.clone(),
    });
    failures.chain(breaches).chain(inconclusive).collect()
}

/// The verdict and what qualifies it, for an export's free text (JUnit's `system-out`): the
/// verdict line, one line per reason, then every caveat with its severity, most serious first.
pub fn summary(doc: &ResultDoc) -> Vec<String> {
    let mut lines = match &doc.verdict {
        Some(verdict) => {
            let mut lines = vec![format!("rtsoak verdict: {}", status_phrase(verdict))];
            lines.extend(reasons(verdict).into_iter().map(|r| format!("  {r}")));
            lines
        }
        None => vec!["rtsoak verdict: none (the invocation did not finish)".to_string()],
    };
    lines.extend(caveat_lines(doc));
    lines
}

/// Every caveat of `doc` as `[severity] sentence`, most serious first.
pub fn caveat_lines(doc: &ResultDoc) -> Vec<String> {
    doc.caveats
        .iter()
        .map(|c| format!("[{}] {}", c.severity.word(), c.text))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsoak_record::result::verdict::{Accepted, Inconclusive, InconclusiveKind};

    fn accepting(conditions: &[CaveatKind]) -> Verdict {
        let mut verdict = Verdict::of(Vec::new(), Vec::new(), Vec::new());
        verdict.accepted = conditions
            .iter()
            .map(|c| Accepted {
                condition: c.clone(),
                message: String::new(),
            })
            .collect();
        verdict
    }

    #[test]
    fn a_pass_names_what_it_accepted_and_a_plain_pass_is_one_word() {
        assert_eq!(status_phrase(&accepting(&[])), "PASS");
        assert_eq!(
            status_phrase(&accepting(&[CheckId::KernelPreemptRt.into()])),
            "PASS on a non-RT kernel: these figures describe this kernel"
        );
        assert_eq!(
            status_phrase(&accepting(&[
                CheckId::KernelPreemptRt.into(),
                CheckId::LayoutNoiseSharesRtCpu.into()
            ])),
            "PASS on a non-RT kernel with noise on the RT CPUs: these figures describe this \
             machine as it is set up, not real-time conditions"
        );
        // A newer result's condition is said, and never taken for one this build knows.
        assert_eq!(
            status_phrase(&accepting(&[CaveatKind::Unknown(
                "kernel.preempt-rt-ish".into()
            )])),
            "PASS with accepted conditions: these figures describe this machine as it is set \
             up, not real-time conditions"
        );
    }

    #[test]
    fn only_a_pass_is_qualified() {
        let mut verdict = accepting(&[CheckId::KernelPreemptRt.into()]);
        verdict = Verdict {
            accepted: verdict.accepted,
            ..Verdict::of(
                Vec::new(),
                Vec::new(),
                vec![Inconclusive {
                    transport: None,
                    ring_setup: None,
                    kind: InconclusiveKind::Noise,
                    message: "the bursts never ran".into(),
                }],
            )
        };
        assert_eq!(status_phrase(&verdict), "INCONCLUSIVE");
        assert_eq!(reasons(&verdict), ["the bursts never ran"]);
    }
}
