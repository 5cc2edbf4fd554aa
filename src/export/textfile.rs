//! The node_exporter textfile for fleet monitoring: the Prometheus metrics of a result, every
//! sample labelled with the profile by the writer (several profiles on one node write one file
//! each without clashing series), plus the verdict as gauges. Pure; the soak command writes it
//! atomically.

use super::prometheus::{self, Writer};
use crate::result::ResultDoc;

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
    stem.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The textfile: the Prometheus metrics and the verdict, every sample labelled with the
/// profile by the writer.
pub fn render(doc: &ResultDoc) -> String {
    let common = [("profile", profile_label(doc))];
    let mut w = Writer::new(&common);
    prometheus::write_metrics(&mut w, doc);
    verdict_metrics(&mut w, doc);
    w.finish()
}

/// `rtsoak_verdict_pass`, `rtsoak_verdict_failures`, `rtsoak_verdict_breaches` and, with a
/// baseline, `rtsoak_regression`.
fn verdict_metrics(w: &mut Writer<'_>, doc: &ResultDoc) {
    let Some(verdict) = &doc.verdict else {
        return;
    };
    let mut gauge = |name: &str, help: &str, value: usize| {
        w.family(name, "gauge", help);
        w.sample(name, &[], value);
    };
    gauge(
        "rtsoak_verdict_pass",
        "1 if no run failed, lost a message, had its transport fail or was interrupted, no \
         [verdict] limit was breached and nothing regressed against the baseline.",
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::fixture::two_round_doc;

    fn doc() -> ResultDoc {
        let mut doc = two_round_doc();
        doc.plan.profile = "/etc/rtsoak/night ly.toml".to_string();
        doc.verdict = Some(crate::judge::verdict(&doc));
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
}
