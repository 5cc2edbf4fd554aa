//! The headline view on saved real results, as `rtsoak report` prints it: one screen as wide as
//! the terminal, at most 100 columns and 80 where its width is unknown or narrower, and a decision whose every claim holds on the figures it came from (a pair said
//! to differ significantly has p < 0.01 in the exact test of two rates, recomputed here from
//! the merged figures; a pair said not to differ has not).

mod common;

use std::path::Path;

use common::rtsoak;
use rtsoak::store;
use rtsoak_analysis::judge::rates::rates_differ_p_value;
use rtsoak_analysis::merge::by_transport;
use rtsoak_record::SeriesKey;
use rtsoak_record::result::ResultDoc;
use rtsoak_record::result::cause::Cause;
use rtsoak_record::result::decision::Decision;
use rtsoak_report::decision as wording;
use rtsoak_report::why;

const SAVED: &[&str] = &[
    "compare-vm-2cpu.json",
    "explained-6.12-rt-vm.json",
    "explained-6.1-rt-vm.json",
];

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/results")
        .join(name)
}

/// Each claim of `decision` checked against `doc`'s merged figures, and named in the sentence
/// the report words it in.
fn assert_claims_hold(doc: &ResultDoc, decision: &Decision) {
    let merged = by_transport(doc);
    for series in &decision.series {
        let sentence = wording::sentence(series, decision.threshold_ns, decision.alpha);
        let figures = |label: &str| {
            let t = merged.iter().find(|t| t.label == label).unwrap();
            let s = t.summary(SeriesKey::Rt(series.series));
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
                sentence.contains(&claim.lower) && sentence.contains(&claim.higher),
                "{sentence}"
            );
        }
        for claim in &series.not_significant {
            let ((ka, na), (kb, nb)) = (figures(&claim.lower), figures(&claim.higher));
            assert!(rates_differ_p_value(ka, na, kb, nb) >= 0.01, "{claim:?}");
        }
        for label in &series.fewest {
            assert!(sentence.contains(label.as_str()), "{sentence}");
        }
    }
}

/// What `rtsoak report` prints for `path` with `COLUMNS` set to `columns` (or unset: stdout is
/// a pipe, so the width is unknown).
fn headline_at(path: &Path, columns: Option<&str>) -> String {
    let mut command = rtsoak();
    command.arg("report").arg(path).env_remove("COLUMNS");
    if let Some(columns) = columns {
        command.env("COLUMNS", columns);
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "{}", path.display());
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn a_saved_comparison_is_one_screen_that_states_the_decision() {
    for name in SAVED {
        let path = fixture(name);
        // A pipe (width unknown), a serial console or tmux pane of 80 or fewer, a wide terminal.
        for (columns, width) in [
            (None, 80),
            (Some("60"), 80),
            (Some("80"), 80),
            (Some("200"), 100),
        ] {
            let text = headline_at(&path, columns);
            let lines: Vec<&str> = text.lines().collect();
            assert!(lines.len() <= 50, "{name}: {} lines\n{text}", lines.len());
            for line in &lines {
                let at = line.chars().count();
                assert!(at <= width, "{name} at {columns:?}: {at} columns: {line}");
            }
        }
        let text = headline_at(&path, None);
        assert!(text.contains("The decision"), "{text}");
        assert!(
            text.contains("\n  send call: ") && text.contains("\n  delivery: "),
            "{text}"
        );
        let doc = store::load(&path).unwrap();
        let decision = doc.decision.clone().expect("saved with its decision");
        assert_claims_hold(&doc, &decision);
        for series in &decision.series {
            let saved = series.sentence.as_deref().expect("saved with its words");
            let first = saved.split(' ').take(6).collect::<Vec<_>>().join(" ");
            assert!(text.contains(&first), "{name}: {first}\n{text}");
        }
        // The decision made again from the saved figures, in this build's words, says what the
        // build that saved it said (the p-values may differ in their last digit through JSON).
        let again = wording::worded(rtsoak_analysis::judge::decision::decide(&doc));
        let said = |d: &Decision| -> Vec<Option<String>> {
            d.series.iter().map(|s| s.sentence.clone()).collect()
        };
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

#[test]
fn an_explained_comparison_names_each_transports_main_cause() {
    for name in ["explained-6.12-rt-vm.json", "explained-6.1-rt-vm.json"] {
        assert_main_causes_named(&fixture(name));
    }
}

fn assert_main_causes_named(path: &Path) {
    let doc = store::load(path).unwrap();
    let decision = doc.decision.clone().unwrap();
    assert!(
        !decision.causes.is_empty(),
        "explained: a main cause per transport"
    );
    let text =
        String::from_utf8(rtsoak().arg("report").arg(path).output().unwrap().stdout).unwrap();
    // Wrapping may break a line anywhere between words: compare word by word.
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    for cause in &decision.causes {
        assert!(
            cause.share_percent > 0.0 && cause.share_percent <= 100.0,
            "{cause:?}"
        );
        let sharing = decision
            .causes
            .iter()
            .filter(|c| c.series == cause.series && c.cause == cause.cause)
            .count();
        let named = why::cause_or_unexplained(cause.cause.as_ref());
        if sharing == 1 {
            let line = format!(
                "{}: {:.0} % of {} ",
                cause.label, cause.share_percent, cause.over_threshold
            );
            assert!(words.contains(&line), "{line}\n{text}");
            let after = &words[words.find(&line).unwrap()..];
            assert!(after.contains(&named), "{named}\n{text}");
            continue;
        }
        // Transports sharing a main cause are named together on its line, each with its share.
        let share = format!("{} {:.0} %", cause.label, cause.share_percent);
        let line = format!("main cause {named}:");
        assert!(words.contains(&line), "{line}\n{text}");
        let after = &words[words.find(&line).unwrap()..];
        assert!(after.contains(&share), "{share}\n{text}");
    }
}

#[test]
fn a_diff_of_two_explained_kernels_says_which_causes_changed() {
    let (old, new) = (
        fixture("explained-6.1-rt-vm.json"),
        fixture("explained-6.12-rt-vm.json"),
    );
    let output = rtsoak()
        .arg("diff")
        .arg(&old)
        .arg(&new)
        .arg("--json")
        .output()
        .unwrap();
    let diff: rtsoak_record::result::diff::Diff = serde_json::from_slice(&output.stdout).unwrap();
    assert!(
        !diff.causes.is_empty(),
        "both sides explained: {:?}",
        diff.inconclusive
    );
    let (old_doc, new_doc) = (store::load(&old).unwrap(), store::load(&new).unwrap());
    for changes in &diff.causes {
        let blame = |doc: &ResultDoc| {
            by_transport(doc)
                .iter()
                .find(|t| t.transport == changes.transport)
                .and_then(|t| {
                    let blames = t.runs.iter().filter_map(|r| r.explanation.as_ref());
                    rtsoak_record::result::explain::SeriesBlame::merged(
                        blames,
                        SeriesKey::Rt(changes.series),
                    )
                })
                .unwrap()
        };
        let (old_blame, new_blame) = (blame(&old_doc), blame(&new_doc));
        assert_eq!(changes.baseline_over_threshold, old_blame.over_threshold);
        assert_eq!(changes.new_over_threshold, new_blame.over_threshold);
        // Both were written by version 2, which stored each cause as its sentence: every one
        // is read back into its cause, so each pairs, and none is left out.
        assert!(changes.changes.iter().all(|c| !c.unpaired), "{changes:?}");
        for cause in old_blame.causes.iter().chain(&new_blame.causes) {
            assert!(!matches!(cause.cause, Cause::Unknown { .. }), "{cause:?}");
            let of = |c: &&rtsoak_record::result::diff::CauseChange| {
                c.cause.as_ref() == Some(&cause.cause)
            };
            assert_eq!(changes.changes.iter().filter(of).count(), 1, "{cause:?}");
        }
        let delta =
            |c: &rtsoak_record::result::diff::CauseChange| (c.new_count - c.baseline_count).abs();
        assert!(
            changes
                .changes
                .windows(2)
                .all(|w| delta(&w[0]) >= delta(&w[1])),
            "largest first"
        );
    }
    let text = rtsoak().arg("diff").arg(&old).arg(&new).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("Why the spikes changed"), "{text}");
    let markdown = rtsoak()
        .arg("diff")
        .arg(&old)
        .arg(&new)
        .arg("--markdown")
        .output()
        .unwrap();
    assert!(
        String::from_utf8(markdown.stdout)
            .unwrap()
            .contains("Why the spikes changed")
    );
}

#[test]
fn advice_names_rtsoak_as_the_user_runs_it() {
    let path = fixture("explained-6.1-rt-vm.json");
    let said = |envs: &[(&str, &str)]| {
        let mut command = rtsoak();
        command
            .arg("report")
            .arg(&path)
            .env_remove("RTSOAK_CARGO_RUN")
            .env_remove("SUDO_USER")
            .env("COLUMNS", "100");
        for (key, value) in envs {
            command.env(key, value);
        }
        let text = String::from_utf8(command.output().unwrap().stdout).unwrap();
        // The sentence, wherever it wraps (never inside the command in backticks).
        let from = text.find("Not measured: ").unwrap();
        let to = from + text[from..].find("says why.").unwrap() + "says why.".len();
        text[from..to]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    // Run by its path (as here): the path, which the user can type again.
    let binary = common::rtsoak_path();
    assert!(
        said(&[]).ends_with(&format!("`{} probe` says why.", binary.display())),
        "{}",
        said(&[])
    );
    // From a source tree, through scripts/cargo-runner.
    assert!(
        said(&[("RTSOAK_CARGO_RUN", "cargo run --release --")])
            .ends_with("`cargo run --release -- probe` says why.")
    );
    // As root by way of sudo, the user types sudo again; SUDO_USER alone is no root.
    let sudo = if common::is_root() { "sudo " } else { "" };
    assert!(
        said(&[("SUDO_USER", "someone")])
            .ends_with(&format!("`{sudo}{} probe` says why.", binary.display()))
    );
}
