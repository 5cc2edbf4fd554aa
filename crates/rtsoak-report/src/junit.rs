//! JUnit XML for CI servers (Jenkins, GitLab): one `<testsuite>` per invocation, and per
//! transport (and ring setup) one `<testcase>` per check, classname `rtsoak.<transport>` or
//! `rtsoak.<transport>.<ring setup>`:
//!
//! - `run`: the run completed; an unsupported transport is `<skipped>`, a failed, interrupted
//!   or `--break-on` run a `<failure>`;
//! - `lost-messages` and `transport-errors`: the integrity counts, failed as the verdict fails
//!   them;
//! - `verdict`: the verdict's breaches that name the transport (`<failure>`, typed by the
//!   profile key), else its inconclusive reasons (`<skipped>`).
//!
//! The `verdict` testcase of classname `rtsoak` is the invocation's verdict as a whole: a
//! `<failure>` on FAIL, `<skipped>` on INCONCLUSIVE (every reason its message), passed only on
//! PASS. The suite's `<system-out>` holds the verdict line (on a development profile's PASS,
//! what it is not), its reasons and the caveats with their severity. The figures of each
//! transport and series (messages, missed periods, lost, over-threshold per million, p99 and the
//! longest, in us) are the suite's `<properties>`, `<label>.<figure>`, as the Ant and Jenkins
//! schemas allow properties on a suite only. Pure: the text comes from the saved result alone.

use std::fmt::Write;

use super::escape::{xml_attr as attr, xml_text as text};
use super::text::{dotted_name, is_about, us};
use rtsoak_analysis::merge::{TransportRuns, by_transport};
use rtsoak_record::result::verdict::{Failure, FailureKind};
use rtsoak_record::result::{ResultDoc, RunStatus};
use rtsoak_record::{Series, SeriesKey, serde_id};

/// One testcase's outcome.
enum Outcome {
    Pass,
    Fail { kind: String, message: String },
    Skip { message: String },
}

struct Case {
    classname: String,
    name: &'static str,
    time_s: f64,
    outcome: Outcome,
}

/// Render `doc` as a JUnit XML report.
pub(crate) fn render(doc: &ResultDoc) -> String {
    let transports = by_transport(doc);
    let mut cases = Vec::new();
    let mut properties = identity(doc);
    for t in &transports {
        cases.extend(transport_cases(doc, t));
        properties.extend(figures(t));
    }
    cases.push(invocation_case(doc));

    let failures = cases
        .iter()
        .filter(|c| matches!(c.outcome, Outcome::Fail { .. }))
        .count();
    let skipped = cases
        .iter()
        .filter(|c| matches!(c.outcome, Outcome::Skip { .. }))
        .count();
    let time_s: f64 = cases.iter().map(|c| c.time_s).sum();
    let name = format!("rtsoak {} (profile {})", doc.command, doc.plan.profile);
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"rtsoak\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" time=\"{time_s:.3}\">",
        cases.len()
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" time=\"{time_s:.3}\" timestamp=\"{}\" hostname=\"{}\">",
        attr(&name),
        cases.len(),
        attr(timestamp(&doc.started_at)),
        attr(doc.host.hostname.as_deref().unwrap_or("localhost")),
    );
    out.push_str("    <properties>\n");
    for (name, value) in &properties {
        let _ = writeln!(
            out,
            "      <property name=\"{}\" value=\"{}\"/>",
            attr(name),
            attr(value)
        );
    }
    out.push_str("    </properties>\n");
    for case in &cases {
        write_case(&mut out, case);
    }
    let _ = writeln!(
        out,
        "    <system-out>{}</system-out>",
        text(&super::verdict_text::summary(doc).join("\n"))
    );
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

/// The suite's first properties: what ran, where, and the verdict.
fn identity(doc: &ResultDoc) -> Vec<(String, String)> {
    let mut properties: Vec<(String, String)> = vec![
        ("rtsoak.version".into(), doc.tool.version.clone()),
        ("rtsoak.command".into(), doc.argv.join(" ")),
        ("profile".into(), doc.plan.profile.clone()),
        (
            "kernel_release".into(),
            doc.host.kernel_release.clone().unwrap_or_default(),
        ),
        ("arch".into(), doc.host.arch.clone()),
        ("preempt_rt".into(), doc.host.preempt_rt.to_string()),
        ("board".into(), super::identity::board(&doc.host)),
    ];
    if let Some(verdict) = &doc.verdict {
        properties.push(("verdict".into(), verdict.status.word().to_ascii_lowercase()));
    }
    properties
}

/// One `<testcase>`, with its failure or skip.
fn write_case(out: &mut String, case: &Case) {
    let open = format!(
        "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\"",
        attr(&case.classname),
        case.name,
        case.time_s
    );
    let _ = match &case.outcome {
        Outcome::Pass => writeln!(out, "{open}/>"),
        Outcome::Fail { kind, message } => writeln!(
            out,
            "{open}>\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>",
            attr(message),
            attr(kind),
            text(message)
        ),
        Outcome::Skip { message } => writeln!(
            out,
            "{open}>\n      <skipped message=\"{}\"/>\n    </testcase>",
            attr(message)
        ),
    };
}

/// The checks of one transport, in the report's order: only the run takes time.
#[derive(Clone, Copy, PartialEq)]
enum Check {
    Run,
    LostMessages,
    TransportErrors,
    Verdict,
}

impl Check {
    const ALL: [Check; 4] = [
        Check::Run,
        Check::LostMessages,
        Check::TransportErrors,
        Check::Verdict,
    ];

    /// The test case's name.
    fn name(self) -> &'static str {
        match self {
            Check::Run => "run",
            Check::LostMessages => "lost-messages",
            Check::TransportErrors => "transport-errors",
            Check::Verdict => "verdict",
        }
    }
}

/// The four checks of one transport.
fn transport_cases(doc: &ResultDoc, t: &TransportRuns<'_>) -> Vec<Case> {
    let classname = dotted_name(t);
    let time_s = t.measured_ns() as f64 / 1e9;
    let case = |check: Check, outcome| Case {
        classname: classname.clone(),
        name: check.name(),
        time_s: if check == Check::Run { time_s } else { 0.0 },
        outcome,
    };
    if t.status == RunStatus::Unsupported {
        let reason = t
            .runs
            .iter()
            .find_map(|r| r.reason.clone())
            .unwrap_or_else(|| "unsupported on this kernel".into());
        let skip = || Outcome::Skip {
            message: format!("not measured: {reason}"),
        };
        return Check::ALL
            .into_iter()
            .map(|check| case(check, skip()))
            .collect();
    }
    let judged = Judged { doc, t };
    vec![
        case(Check::Run, judged.run()),
        case(Check::LostMessages, judged.lost()),
        case(Check::TransportErrors, judged.errors()),
        case(Check::Verdict, judged.verdict()),
    ]
}

/// One measured transport and the verdict's findings about it.
struct Judged<'a> {
    doc: &'a ResultDoc,
    t: &'a TransportRuns<'a>,
}

impl Judged<'_> {
    /// The verdict's failure of `kind` for this transport.
    fn failure_of(&self, kind: FailureKind) -> Option<&Failure> {
        self.doc.verdict.as_ref().and_then(|v| {
            v.failures
                .iter()
                .filter(|f| is_about(self.t, &f.transport, f.ring_setup))
                .find(|f| f.kind == kind)
        })
    }

    /// The run itself: failed, interrupted, broken off, or not completed.
    fn run(&self) -> Outcome {
        [
            FailureKind::RunFailed,
            FailureKind::Interrupted,
            FailureKind::BreakOn,
        ]
        .into_iter()
        .find_map(|kind| self.failure_of(kind))
        .map(|f| Outcome::Fail {
            kind: serde_id(f.kind),
            message: f.message.clone(),
        })
        .or_else(|| {
            (self.t.status != RunStatus::Completed).then(|| Outcome::Fail {
                kind: format!("{:?}", self.t.status).to_lowercase(),
                message: self
                    .t
                    .runs
                    .iter()
                    .find_map(|r| r.reason.clone())
                    .unwrap_or_else(|| "the run did not complete".into()),
            })
        })
        .unwrap_or(Outcome::Pass)
    }

    fn lost(&self) -> Outcome {
        let integrity = &self.t.integrity;
        if integrity.lost == 0 {
            return Outcome::Pass;
        }
        Outcome::Fail {
            kind: serde_id(FailureKind::LostMessages),
            message: self.failure_of(FailureKind::LostMessages).map_or_else(
                || format!("{} of {} messages lost", integrity.lost, integrity.sent),
                |f| f.message.clone(),
            ),
        }
    }

    fn errors(&self) -> Outcome {
        let failures = self.t.integrity.transport_failures();
        if failures.is_empty() {
            return Outcome::Pass;
        }
        Outcome::Fail {
            kind: serde_id(FailureKind::TransportErrors),
            message: self
                .failure_of(FailureKind::TransportErrors)
                .map_or_else(|| failures.join("; "), |f| f.message.clone()),
        }
    }

    /// The verdict's limits: a breach fails, an inconclusive finding skips.
    fn verdict(&self) -> Outcome {
        let Some(verdict) = self.doc.verdict.as_ref() else {
            return Outcome::Pass;
        };
        let breaches: Vec<_> = verdict
            .breaches
            .iter()
            .filter(|b| is_about(self.t, &b.transport, b.ring_setup))
            .collect();
        let inconclusive: Vec<_> = verdict
            .inconclusive
            .iter()
            .filter(|i| is_about(self.t, &i.transport, i.ring_setup))
            .collect();
        if let Some(first) = breaches.first() {
            Outcome::Fail {
                kind: first.what.key(),
                message: join(breaches.iter().map(|b| b.message.as_str())),
            }
        } else if !inconclusive.is_empty() {
            Outcome::Skip {
                message: join(inconclusive.iter().map(|i| i.message.as_str())),
            }
        } else {
            Outcome::Pass
        }
    }
}

/// The `verdict` testcase of the invocation: the verdict as a whole, every reason in its
/// message.
fn invocation_case(doc: &ResultDoc) -> Case {
    let outcome = match &doc.verdict {
        None => Outcome::Skip {
            message: "no verdict: the invocation did not finish".into(),
        },
        Some(v) => {
            let message = format!(
                "{}: {}",
                super::verdict_text::status_phrase(v),
                super::verdict_text::reasons(v).join("; ")
            );
            let kind = v
                .failures
                .first()
                .map(|f| serde_id(f.kind))
                .or_else(|| v.breaches.first().map(|b| b.what.key()))
                .unwrap_or_else(|| "regression".into());
            match v.status {
                rtsoak_record::Status::Fail => Outcome::Fail { kind, message },
                rtsoak_record::Status::Inconclusive => Outcome::Skip { message },
                rtsoak_record::Status::Pass => Outcome::Pass,
            }
        }
    };
    Case {
        classname: "rtsoak".into(),
        name: "verdict",
        time_s: 0.0,
        outcome,
    }
}

/// A measured transport's figures as suite properties, `<label>.<figure>`.
fn figures(t: &TransportRuns<'_>) -> Vec<(String, String)> {
    if t.status == RunStatus::Unsupported {
        return Vec::new();
    }
    let prefix = dotted_name(t);
    let i = &t.integrity;
    let mut out = vec![
        (format!("{prefix}.messages"), i.sent.to_string()),
        (
            format!("{prefix}.missed_periods"),
            i.missed_periods.to_string(),
        ),
        (format!("{prefix}.lost"), i.lost.to_string()),
    ];
    for name in Series::REPORTED.map(SeriesKey::Rt) {
        let Some(series) = t.series.get(&name) else {
            continue;
        };
        let s = &series.summary;
        let per_million = s.over_threshold_per_million();
        out.push((format!("{prefix}.{name}.count"), s.count.to_string()));
        out.push((
            format!("{prefix}.{name}.over_threshold_per_million"),
            format!("{per_million:.1}"),
        ));
        if series.percentiles_known() {
            out.push((format!("{prefix}.{name}.p99_us"), us(s.p99_ns)));
        }
        out.push((format!("{prefix}.{name}.longest_us"), us(s.max_ns)));
    }
    out
}

fn join<'a>(messages: impl Iterator<Item = &'a str>) -> String {
    messages.collect::<Vec<_>>().join("; ")
}

/// The start as the JUnit schema's `timestamp` wants it: ISO 8601 without a zone.
fn timestamp(started_at: &str) -> &str {
    started_at.trim_end_matches('Z')
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsoak_testing::fixture::two_round_doc;

    #[test]
    fn the_report_has_one_suite_four_checks_per_transport_and_the_invocations_verdict() {
        insta::assert_snapshot!(render(&two_round_doc()));
    }

    #[test]
    fn a_lost_message_fails_its_transports_check_and_an_unsupported_transport_is_skipped() {
        let doc = two_round_doc();
        let xml = render(&doc);
        for t in by_transport(&doc) {
            let class = dotted_name(&t);
            let lost = format!("<testcase classname=\"{class}\" name=\"lost-messages\"");
            let case = xml
                .split("<testcase ")
                .map(|piece| format!("<testcase {piece}"))
                .find(|piece| piece.starts_with(&lost))
                .expect("every transport has the check");
            if t.status == RunStatus::Unsupported {
                assert!(case.contains("<skipped"), "{case}");
            } else if t.integrity.lost > 0 {
                assert!(case.contains("type=\"lost-messages\""), "{case}");
            } else {
                assert!(!case.contains("<failure"), "{case}");
            }
        }
    }
}
