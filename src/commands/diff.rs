//! `rtsoak diff BASELINE NEW` and `rtsoak baseline promote RESULT --to DIR`: load, compare
//! (the pure `judge::diff`), print, exit 3 on a regression and 7 when the comparison compared
//! nothing it should have; promote copies a result into the baseline directory atomically,
//! and refuses (unless forced) a result whose own figures could not stand for a baseline.

use std::path::Path;

use anyhow::Context;

use crate::exit::Outcome;
use crate::store::{RESULT_FILE, load, read};
use rtsoak_analysis::judge::diff as compare;
use rtsoak_record::result::ResultDoc;
use rtsoak_record::result::diff::DiffRules;
use rtsoak_record::result::verdict::Status;
use rtsoak_report::diff::render;
use rtsoak_report::escape::terminal;

/// Compare `new` with `baseline` and print every finding, then the verdict.
pub(super) fn diff(
    baseline: &Path,
    new: &Path,
    json: bool,
    markdown: bool,
) -> anyhow::Result<Outcome> {
    let hint = "give a result.json or the result directory holding one";
    let old = load(baseline).with_context(|| format!("loading the baseline ({hint})"))?;
    let doc = load(new).with_context(|| format!("loading the new result ({hint})"))?;
    let result = compare(
        &baseline.display().to_string(),
        &old,
        &doc,
        &DiffRules::default(),
    );
    if json {
        println!("{}", rtsoak_report::escape::pretty_json(&result)?);
    } else if markdown {
        print!("{}", rtsoak_report::diff::markdown(&result));
    } else {
        print!("{}", render(&result));
    }
    Ok(match result.status() {
        Status::Fail => Outcome::Regression,
        Status::Inconclusive => Outcome::Inconclusive,
        Status::Pass => Outcome::Pass,
    })
}

/// Why `doc` cannot be a baseline: every later night would be compared with figures that do
/// not stand for the system (an interrupted, failed, lossy, empty or inconclusive result).
pub(crate) fn unfit_as_baseline(doc: &ResultDoc) -> Vec<String> {
    let mut reasons = Vec::new();
    if doc.finished_at.is_none() {
        reasons.push("it is unfinished (saved while its invocation was still running)".into());
    }
    let verdict = rtsoak_analysis::judge::stored_or_judged(doc);
    reasons.extend(verdict.failures.iter().map(|f| f.message.clone()));
    reasons.extend(verdict.inconclusive.iter().map(|i| i.message.clone()));
    if doc.runs.is_empty() {
        reasons.push("it holds no run".into());
    }
    reasons
}

/// Copy `result`'s `result.json` into `to/result.json` atomically, after checking it loads and
/// can stand for a baseline (`force`: even if it cannot). What is written is the very bytes that
/// were checked: the result is read once, from one open file (`store::read`), never again by
/// name, so a file swapped after the check is never what is promoted.
pub(super) fn promote(result: &Path, to: &Path, force: bool) -> anyhow::Result<Outcome> {
    let (doc, input) = read(result).context("promoting a result to the baseline")?;
    let unfit = unfit_as_baseline(&doc);
    if !unfit.is_empty() {
        let reasons = unfit.join("; ");
        if !force {
            // A refused input, like a bad flag: exit 2, and nothing is written.
            let message = format!(
                "Error: {} cannot be a baseline: {reasons}. Every later comparison would rest on \
                 figures that do not stand for the system; promote a complete result with no \
                 failure that measured what it was asked, or give --force to promote it anyway",
                result.display()
            );
            eprintln!("{}", terminal(&message));
            return Ok(Outcome::Usage);
        }
        let message = format!(
            "Warning: promoting {} although it cannot stand for a baseline (--force): {reasons}",
            result.display()
        );
        eprintln!("{}", terminal(&message));
    }
    let dir = rtsoak_sys::safe_dir::SafeDir::create(to).with_context(|| {
        format!(
            "creating the baseline directory {}: choose another with --to",
            to.display()
        )
    })?;
    let target = to.join(RESULT_FILE);
    dir.write(RESULT_FILE.as_ref(), &input.bytes, 0o644)
        .with_context(|| {
            format!(
                "writing {}: choose another place with --to",
                target.display()
            )
        })?;
    let message = format!(
        "Baseline {} is now the {} result started at {} (copied from {})",
        target.display(),
        doc.plan.profile,
        doc.started_at,
        input.path.display()
    );
    println!("{}", terminal(&message));
    Ok(Outcome::Pass)
}
