//! `rtsoak diff BASELINE NEW` and `rtsoak baseline promote RESULT --to DIR`: load, compare
//! (the pure `judge::diff`), print, exit 3 on a regression and 7 when the comparison compared
//! nothing it should have; promote copies a result into the baseline directory atomically,
//! and refuses (unless forced) a result whose own figures could not stand for a baseline.

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::exit::Outcome;
use crate::store::{RESULT_FILE, load, write_atomic};
use rtsoak_analysis::judge::diff as compare;
use rtsoak_record::result::ResultDoc;
use rtsoak_record::result::diff::DiffRules;
use rtsoak_record::result::verdict::Status;
use rtsoak_report::diff::render;

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
        println!("{}", serde_json::to_string_pretty(&result)?);
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

/// The result file of a result path (a `result.json` or its directory).
fn result_file(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join(RESULT_FILE)
    } else {
        path.to_path_buf()
    }
}

/// Why `doc` cannot be a baseline: every later night would be compared with figures that do
/// not stand for the system (an interrupted, failed, lossy, empty or inconclusive result).
pub(crate) fn unfit_as_baseline(doc: &ResultDoc) -> Vec<String> {
    let mut reasons = Vec::new();
    if doc.finished_at.is_none() {
        reasons.push("it is unfinished (saved while its invocation was still running)".into());
    }
    let judged;
    let verdict = match &doc.verdict {
        Some(verdict) => verdict,
        None => {
            judged = rtsoak_analysis::judge::verdict(doc);
            &judged
        }
    };
    reasons.extend(verdict.failures.iter().map(|f| f.message.clone()));
    reasons.extend(verdict.inconclusive.iter().map(|i| i.message.clone()));
    if doc.runs.is_empty() {
        reasons.push("it holds no run".into());
    }
    reasons
}

/// Copy `result`'s `result.json` into `to/result.json` atomically, after checking it loads and
/// can stand for a baseline (`force`: even if it cannot).
pub(super) fn promote(result: &Path, to: &Path, force: bool) -> anyhow::Result<Outcome> {
    let doc = load(result).context("promoting a result to the baseline")?;
    let unfit = unfit_as_baseline(&doc);
    if !unfit.is_empty() {
        let reasons = unfit.join("; ");
        if !force {
            // A refused input, like a bad flag: exit 2, and nothing is written.
            eprintln!(
                "Error: {} cannot be a baseline: {reasons}. Every later comparison would rest on \
                 figures that do not stand for the system; promote a complete result with no \
                 failure that measured what it was asked, or give --force to promote it anyway",
                result.display()
            );
            return Ok(Outcome::Usage);
        }
        eprintln!(
            "Warning: promoting {} although it cannot stand for a baseline (--force): {reasons}",
            result.display()
        );
    }
    let source = result_file(result);
    let bytes = std::fs::read(&source).with_context(|| format!("reading {}", source.display()))?;
    rtsoak_sys::safe_dir::SafeDir::create(to).with_context(|| {
        format!(
            "creating the baseline directory {}: choose another with --to",
            to.display()
        )
    })?;
    let target = to.join(RESULT_FILE);
    write_atomic(&target, &bytes)?;
    println!(
        "Baseline {} is now the {} result started at {} (copied from {})",
        target.display(),
        doc.plan.profile,
        doc.started_at,
        source.display()
    );
    Ok(Outcome::Pass)
}
