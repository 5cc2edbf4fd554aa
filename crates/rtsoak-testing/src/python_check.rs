//! Test helpers that read exporter output with independent Python implementations: the
//! `hdrhistogram` package (import name `hdrh`) for interval logs, `prometheus_client`'s text
//! parser for Prometheus files and Python's own `xml.etree` for JUnit XML. `.ci/run` installs
//! both packages; where python3 or a package is missing
//! the check prints `SKIPPED` with the reason and passes ([`fn@crate::skip`]), so a skip is
//! never silent, except in CI (`RTSOAK_CI` set), where a skipped check fails.

use std::collections::BTreeMap;
use std::process::Command;

use crate::skip;
use rtsoak_analysis::stats::{decode_histogram, new_histogram};
use rtsoak_record::result::ResultDoc;

/// Run `script` with python3 on `input` (a file path as `sys.argv[1]`). `None` = skipped.
fn python(module: &str, script: &str, input: &str) -> Option<String> {
    let probe = Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .output();
    match probe {
        Err(error) => {
            skip(&format!(
                "python3 is not available ({error}); .ci/run installs it"
            ));
            return None;
        }
        Ok(out) if !out.status.success() => {
            skip(&format!(
                "python3 has no `{module}` module; .ci/run installs it with pip"
            ));
            return None;
        }
        Ok(_) => {}
    }
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), input).unwrap();
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(file.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "python failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).unwrap())
}

const HDR_SCRIPT: &str = r#"
import json, sys
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader
reader = HistogramLogReader(sys.argv[1], HdrHistogram(1, 10_000_000_000, 3))
tags = {}
while True:
    h = reader.get_next_interval_histogram()
    if h is None:
        break
    count, top = tags.get(h.get_tag(), (0, 0))
    tags[h.get_tag()] = (count + h.get_total_count(), max(top, h.get_max_value()))
print(json.dumps(tags))
"#;

/// What an HdrHistogram log of `doc` must hold per tag (`transport/series`): each reported
/// series' histogram, added over the transport's runs.
pub fn histograms_by_tag(doc: &ResultDoc) -> BTreeMap<String, hdrhistogram::Histogram<u64>> {
    let mut expected: BTreeMap<String, hdrhistogram::Histogram<u64>> = BTreeMap::new();
    for run in &doc.runs {
        for name in rtsoak_record::Series::REPORTED.map(rtsoak_record::SeriesKey::Rt) {
            if let Some(series) = run.series.get(&name) {
                expected
                    .entry(format!(
                        "{}/{name}",
                        rtsoak_record::result::RunKey::of(run).tag()
                    ))
                    .or_insert_with(new_histogram)
                    .add(decode_histogram(&series.histogram).unwrap())
                    .unwrap();
            }
        }
    }
    expected
}

/// The Python `hdrh` log reader sees every tag of `log` with the counts and max of `doc`'s runs.
pub fn hdr_log(doc: &ResultDoc, log: &str) {
    let Some(out) = python("hdrh", HDR_SCRIPT, log) else {
        return;
    };
    let decoded: BTreeMap<String, (u64, u64)> = serde_json::from_str(&out).unwrap();
    let expected = histograms_by_tag(doc);
    assert_eq!(
        decoded.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>()
    );
    for (tag, (count, max)) in decoded {
        let histogram = &expected[&tag];
        assert_eq!(count, histogram.len(), "{tag}: count");
        assert_eq!(
            histogram.lowest_equivalent(max),
            histogram.lowest_equivalent(histogram.max()),
            "{tag}: max"
        );
    }
}

const PROMETHEUS_SCRIPT: &str = r#"
import json, sys
from prometheus_client.parser import text_string_to_metric_families
families = {}
for family in text_string_to_metric_families(open(sys.argv[1]).read()):
    families[family.name] = [family.type, len(family.samples)]
print(json.dumps(families))
"#;

const XML_SCRIPT: &str = r#"
import sys
import xml.etree.ElementTree as ElementTree
print(ElementTree.parse(sys.argv[1]).getroot().tag)
"#;

/// Python's own XML parser (`xml.etree`, part of Python) reads `xml`; returns the root's tag.
pub fn xml_root(xml: &str) -> Option<String> {
    let out = python("xml.etree.ElementTree", XML_SCRIPT, xml)?;
    Some(out.trim().to_string())
}

/// `prometheus_client`'s parser accepts `text`; returns family name → (type, samples).
pub fn prometheus(text: &str) -> Option<BTreeMap<String, (String, usize)>> {
    let out = python("prometheus_client", PROMETHEUS_SCRIPT, text)?;
    Some(serde_json::from_str(&out).unwrap())
}
