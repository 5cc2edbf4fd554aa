//! The headline view on saved real results, as `rtsoak report` prints it: one screen of at most
//! 100 columns, and a decision whose every claim holds on the figures it came from (a pair said
//! to differ significantly has p < 0.01 in the exact test of two rates, recomputed here from
//! the merged figures; a pair said not to differ has not).

mod common;

use std::path::Path;

use common::rtsoak;
use rtsoak::judge::rates::rates_differ_p_value;
use rtsoak::result::decision::Decision;
use rtsoak::result::merge::by_transport;
use rtsoak::result::{ResultDoc, store};

const SAVED: &[&str] = &["compare-vm-2cpu.json"];

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/results")
        .join(name)
}

/// Each claim of `decision` checked against `doc`'s merged figures, and named in its sentence.
fn assert_claims_hold(doc: &ResultDoc, decision: &Decision) {
    let merged = by_transport(doc);
    for series in &decision.series {
        let figures = |label: &str| {
            let t = merged.iter().find(|t| t.label == label).unwrap();
            let s = t.summary(&series.series);
            (s.over_threshold, s.count)
        };
        for rate in &series.ranking {
            assert_eq!(figures(&rate.label), (rate.over_threshold, rate.count));
        }
        for claim in &series.significant {
            let ((ka, na), (kb, nb)) = (figures(&claim.lower), figures(&claim.higher));
            let p = rates_differ_p_value(ka, na, kb, nb);
            assert!(p < 0.01, "{claim:?}: p = {p}");
            assert!(ka as f64 / na as f64 <= kb as f64 / nb as f64, "{claim:?}");
            assert!(
                series.sentence.contains(&claim.lower),
                "{}",
                series.sentence
            );
            assert!(
                series.sentence.contains(&claim.higher),
                "{}",
                series.sentence
            );
        }
        for claim in &series.not_significant {
            let ((ka, na), (kb, nb)) = (figures(&claim.lower), figures(&claim.higher));
            assert!(rates_differ_p_value(ka, na, kb, nb) >= 0.01, "{claim:?}");
        }
        for label in &series.fewest {
            assert!(
                series.sentence.contains(label.as_str()),
                "{}",
                series.sentence
            );
        }
    }
}

#[test]
fn a_saved_comparison_is_one_screen_that_states_the_decision() {
    for name in SAVED {
        let path = fixture(name);
        let output = rtsoak().arg("report").arg(&path).output().unwrap();
        assert!(output.status.success(), "{name}");
        let text = String::from_utf8(output.stdout).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.len() <= 45, "{name}: {} lines\n{text}", lines.len());
        for line in &lines {
            assert!(line.chars().count() <= 100, "{name}: {line}");
        }
        assert!(text.contains("The decision"), "{text}");
        assert!(
            text.contains("\n  send call: ") && text.contains("\n  delivery: "),
            "{text}"
        );
        let doc = store::load(&path).unwrap();
        let decision = doc.decision.clone().expect("saved with its decision");
        assert_claims_hold(&doc, &decision);
        for series in &decision.series {
            let first = series
                .sentence
                .split(' ')
                .take(6)
                .collect::<Vec<_>>()
                .join(" ");
            assert!(text.contains(&first), "{name}: {first}\n{text}");
        }
        // The decision made again from the saved figures says what the saved one says (the
        // p-values may differ in their last digit through JSON).
        let again = rtsoak::judge::decision::decide(&doc);
        let said =
            |d: &Decision| -> Vec<String> { d.series.iter().map(|s| s.sentence.clone()).collect() };
        assert_eq!(said(&again), said(&decision), "{name}");
    }
}

#[test]
fn details_print_every_other_table_after_the_headline() {
    let path = fixture(SAVED[0]);
    let headline = rtsoak().arg("report").arg(&path).output().unwrap();
    let details = rtsoak()
        .args(["report", "--details"])
        .arg(&path)
        .output()
        .unwrap();
    let (headline, details) = (
        String::from_utf8(headline.stdout).unwrap(),
        String::from_utf8(details.stdout).unwrap(),
    );
    assert!(details.starts_with(&headline), "the headline first");
    for table in [
        "Runs and integrity",
        "timer: ",
        "fan-out: ",
        "handling: ",
        "Legend",
    ] {
        assert!(
            !headline.contains(table) && details.contains(table),
            "{table}"
        );
    }
    let alone = rtsoak()
        .args(["report", "--format", "details"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(details.ends_with(&String::from_utf8(alone.stdout).unwrap()));
}
