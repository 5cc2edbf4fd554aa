//! The node_exporter textfile for fleet monitoring: the Prometheus metrics of a result, every
//! sample labelled with the profile by the writer (several profiles on one node write one file
//! each without clashing series), plus the verdict as gauges. Pure; the soak command writes it
//! atomically.

use super::prometheus::{self, Writer};
use crate::verdict_text::own_reasons;
use rtsoak_record::result::ResultDoc;
use rtsoak_record::result::verdict::Status;
use rtsoak_record::serde_id;

/// `rtsoak-<profile>.prom`: the profile name (a file path's stem) with anything but letters,
/// digits, `-` and `_` replaced by `_`.
pub fn file_name(doc: &ResultDoc) -> String {
    format!("rtsoak-{}.prom", profile_label(doc))
}

fn profile_label(doc: &ResultDoc) -> String {
    let profile = &doc.plan.profile;
    let stem = std::path::Path::new(profile)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or(profile);
    rtsoak_record::text::restricted(stem, &['-', '_'])
}

/// The textfile: the Prometheus metrics and the verdict, every sample labelled with the
/// profile by the writer.
pub fn render(doc: &ResultDoc) -> String {
    let common = prometheus::identity_labels(doc, profile_label(doc));
    let mut w = Writer::new(&common);
    prometheus::write_metrics(&mut w, doc);
    verdict_metrics(&mut w, doc);
    decision_metrics(&mut w, doc);
    w.finish()
}

/// `rtsoak_decision_fewest{series, transport, ring_setup}`: 1 for the transport with the
/// fewest spikes of a series and those that do not differ from it significantly, 0 for every
/// other measured one, so a dashboard shows which transport a board should use.
fn decision_metrics(w: &mut Writer<'_>, doc: &ResultDoc) {
    let Some(decision) = &doc.decision else {
        return;
    };
    w.family(
        "rtsoak_decision_fewest",
        "gauge",
        "1 for the transport with the fewest spikes over the threshold in a series and those \
         that do not differ from it significantly (exact test, p < 0.01), 0 for the others.",
    );
    for series in &decision.series {
        // A set: a decision read from a file may rank and name any number of transports.
        let fewest: std::collections::HashSet<&str> =
            series.fewest.iter().map(String::as_str).collect();
        for rate in &series.ranking {
            let setup = rate
                .ring_setup
                .map_or(doc.plan.ring_setup.name(), |s| s.name());
            w.sample(
                "rtsoak_decision_fewest",
                &[
                    ("series", series.series.name()),
                    ("transport", &rate.transport),
                    ("ring_setup", setup),
                ],
                usize::from(fewest.contains(rate.label.as_str())),
            );
        }
    }
}

/// `rtsoak_verdict{verdict=...}` (one sample per verdict, 1 for the one given),
/// `rtsoak_verdict_reason{verdict, kind, transport, ring_setup}` (one sample per failure,
/// breach and reason it is inconclusive), `rtsoak_verdict_pass`, `rtsoak_verdict_failures`,
/// `rtsoak_verdict_breaches`, `rtsoak_verdict_inconclusive_reason{kind, transport, ring_setup}`
/// (one sample per reason), with a baseline `rtsoak_regression`, and the run's end time
/// `rtsoak_run_end_timestamp_seconds`, so an alert can fire when the nightly stops running.
pub(crate) fn verdict_metrics(w: &mut Writer<'_>, doc: &ResultDoc) {
    end_time(w, doc);
    let Some(verdict) = &doc.verdict else {
        return;
    };
    verdict_reasons(w, verdict);
    w.family(
        "rtsoak_verdict",
        "gauge",
        "The verdict: 1 for the one given (pass, fail or inconclusive), 0 for the others. \
         Inconclusive: nothing failed, but the run could not measure what it was asked; a \
         nightly that could not measure must alert.",
    );
    for status in [Status::Pass, Status::Fail, Status::Inconclusive] {
        let word = status.word().to_ascii_lowercase();
        w.sample(
            "rtsoak_verdict",
            &[("verdict", &word)],
            usize::from(verdict.status == status),
        );
    }
    if !verdict.inconclusive.is_empty() {
        w.family(
            "rtsoak_verdict_inconclusive_reason",
            "gauge",
            "1 per reason the verdict is inconclusive: what kept the run from measuring \
             (nothing-measured, not-measured, missed-periods, too-few-messages, rt-priority, \
             noise, baseline), for which transport (empty: the whole invocation).",
        );
        for reason in &verdict.inconclusive {
            let kind = serde_id(reason.kind);
            let setup = reason.ring_setup.map_or("", |s| s.name());
            let transport = reason.transport.as_deref().unwrap_or("");
            w.sample(
                "rtsoak_verdict_inconclusive_reason",
                &[
                    ("kind", &kind),
                    ("transport", transport),
                    ("ring_setup", setup),
                ],
                1,
            );
        }
    }
    let mut gauge = |name: &str, help: &str, value: usize| {
        w.family(name, "gauge", help);
        w.sample(name, &[], value);
    };
    gauge(
        "rtsoak_verdict_pass",
        "1 if the verdict is pass: every transport asked for was measured as asked, no run \
         failed, lost a message, had its transport fail or was interrupted, no [verdict] limit \
         was breached and nothing regressed against the baseline.",
        usize::from(verdict.pass),
    );
    gauge(
        "rtsoak_verdict_failures",
        "Failed, interrupted or --break-on-stopped runs, and transports that lost messages or \
         whose transport failed.",
        verdict.failures.len(),
    );
    gauge(
        "rtsoak_verdict_breaches",
        "Limits of the profile's [verdict] section that were breached.",
        verdict.breaches.len(),
    );
    if let Some(diff) = &verdict.baseline {
        gauge(
            "rtsoak_regression",
            "1 if a figure regressed against the baseline (rtsoak diff).",
            usize::from(diff.regression),
        );
    }
}

/// `rtsoak_run_end_timestamp_seconds`: when the invocation finished (none: it did not).
fn end_time(w: &mut Writer<'_>, doc: &ResultDoc) {
    let Some(end_s) = prometheus::finished_unix_s(doc) else {
        return;
    };
    w.family(
        "rtsoak_run_end_timestamp_seconds",
        "gauge",
        "When the invocation that wrote this result finished, Unix seconds: `time() - \
         rtsoak_run_end_timestamp_seconds > 90000` fires when a nightly stops running.",
    );
    w.sample("rtsoak_run_end_timestamp_seconds", &[], end_s);
}

/// `rtsoak_verdict_reason`: 1 per reason of the verdict, labelled with the verdict it leads to
/// (`fail`, `inconclusive`) and its kind (a failure kind, a breached profile key, an
/// inconclusive kind).
fn verdict_reasons(w: &mut Writer<'_>, verdict: &rtsoak_record::result::verdict::Verdict) {
    let reasons = own_reasons(verdict);
    if reasons.is_empty() {
        return;
    }
    w.family(
        "rtsoak_verdict_reason",
        "gauge",
        "1 per reason of the verdict: the verdict it leads to (fail, inconclusive), its kind (a \
         failure kind, a breached [verdict] key, an inconclusive kind) and the transport it \
         concerns (empty: the whole invocation); the sentences are in result.json.",
    );
    for reason in &reasons {
        w.sample(
            "rtsoak_verdict_reason",
            &[
                ("verdict", &reason.leads_to.word().to_ascii_lowercase()),
                ("kind", &reason.kind),
                ("transport", reason.transport.unwrap_or("")),
                ("ring_setup", reason.ring_setup.map_or("", |s| s.name())),
            ],
            1,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsoak_testing::fixture::two_round_doc;

    fn doc() -> ResultDoc {
        let mut doc = two_round_doc();
        doc.plan.profile = "/etc/rtsoak/night ly.toml".to_string();
        doc.verdict = Some(rtsoak_analysis::judge::verdict(&doc));
        doc
    }

    #[test]
    fn the_file_is_named_after_the_profile() {
        assert_eq!(file_name(&doc()), "rtsoak-night_ly.prom");
        assert_eq!(file_name(&two_round_doc()), "rtsoak-ci.prom");
    }

    #[test]
    fn every_sample_carries_the_profile_label_and_the_verdict_is_published() {
        let text = render(&doc());
        let lines = text.lines().map(|l| Ok(l.to_string()));
        let scrape = prometheus_parse::Scrape::parse(lines).expect("the text parses");
        assert!(!scrape.samples.is_empty());
        for sample in &scrape.samples {
            assert_eq!(
                sample.labels.get("profile"),
                Some("night_ly"),
                "{}",
                sample.metric
            );
        }
        let value = |name: &str| {
            scrape
                .samples
                .iter()
                .find(|s| s.metric == name)
                .map(|s| s.value.clone())
        };
        let verdict = doc().verdict.unwrap();
        assert_eq!(
            value("rtsoak_verdict_pass"),
            Some(prometheus_parse::Value::Gauge(if verdict.pass {
                1.0
            } else {
                0.0
            }))
        );
        assert_eq!(
            value("rtsoak_verdict_breaches"),
            Some(prometheus_parse::Value::Gauge(verdict.breaches.len() as f64))
        );
        assert_eq!(
            value("rtsoak_regression"),
            None,
            "no baseline, no regression gauge"
        );
    }

    #[test]
    fn the_decision_says_which_transports_have_the_fewest_spikes() {
        let mut doc = two_round_doc();
        doc.decision = Some(crate::decision::worded(
            rtsoak_analysis::judge::decision::decide(&doc),
        ));
        let text = render(&doc);
        let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string())))
            .expect("the text parses");
        let fewest: Vec<(&str, &str, f64)> = scrape
            .samples
            .iter()
            .filter(|s| s.metric == "rtsoak_decision_fewest")
            .map(|s| {
                let value = match s.value {
                    prometheus_parse::Value::Gauge(v) => v,
                    _ => f64::NAN,
                };
                let label = |k| s.labels.get(k).unwrap_or("");
                (label("series"), label("transport"), value)
            })
            .collect();
        assert!(fewest.contains(&("delivery", "futex", 1.0)), "{fewest:?}");
        assert!(
            fewest.contains(&("delivery", "futex-syscall", 0.0)),
            "{fewest:?}"
        );
        let line = crate::journal::decision_line(doc.decision.as_ref().unwrap()).unwrap();
        assert!(
            line.starts_with("rtsoak decision: send_call fewest futex (")
                && line
                    .contains("; delivery fewest futex (1000 per million, not different: eventfd)"),
            "{line}"
        );
    }

    #[test]
    fn an_inconclusive_verdict_is_a_gauge_a_fleet_can_alert_on_with_one_sample_per_reason() {
        let mut doc = rtsoak_testing::fixture::one_run_doc();
        doc.runs[0].integrity.lost = 0;
        doc.plan.verdict.min_messages = Some(u64::MAX);
        let verdict = rtsoak_analysis::judge::verdict(&doc);
        assert_eq!(verdict.status, Status::Inconclusive, "{verdict:?}");
        doc.verdict = Some(verdict);
        let text = render(&doc);
        let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string())))
            .expect("the text parses");
        let verdict_is = |word: &str| {
            scrape
                .samples
                .iter()
                .find(|s| s.metric == "rtsoak_verdict" && s.labels.get("verdict") == Some(word))
                .map(|s| s.value.clone())
        };
        use prometheus_parse::Value::Gauge;
        assert_eq!(verdict_is("inconclusive"), Some(Gauge(1.0)));
        assert_eq!(verdict_is("pass"), Some(Gauge(0.0)));
        assert_eq!(verdict_is("fail"), Some(Gauge(0.0)));
        let reasons: Vec<(&str, &str)> = scrape
            .samples
            .iter()
            .filter(|s| s.metric == "rtsoak_verdict_inconclusive_reason")
            .map(|s| {
                (
                    s.labels.get("kind").unwrap_or(""),
                    s.labels.get("transport").unwrap_or(""),
                )
            })
            .collect();
        assert_eq!(reasons, [("too-few-messages", "eventfd")]);
    }
}
