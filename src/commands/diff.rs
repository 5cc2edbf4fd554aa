//! `rtsoak diff BASELINE NEW` and `rtsoak baseline promote RESULT --to DIR`: load, compare
//! (the pure `result::diff`), print, exit 3 on a regression; promote copies a result into the
//! baseline directory atomically.

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::exit::Outcome;
use crate::export::diff::render;
use crate::judge::diff as compare;
use crate::result::diff::DiffRules;
use crate::result::store::{RESULT_FILE, load, write_atomic};

/// Compare `new` with `baseline` and print every finding, then the verdict.
pub fn diff(baseline: &Path, new: &Path, json: bool) -> anyhow::Result<Outcome> {
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
    } else {
        print!("{}", render(&result));
    }
    Ok(if result.regression {
        Outcome::Regression
    } else {
        Outcome::Pass
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

/// Copy `result`'s `result.json` into `to/result.json` atomically, after checking it loads.
pub fn promote(result: &Path, to: &Path) -> anyhow::Result<Outcome> {
    let doc = load(result).context("promoting a result to the baseline")?;
    let source = result_file(result);
    let bytes = std::fs::read(&source).with_context(|| format!("reading {}", source.display()))?;
    std::fs::create_dir_all(to).with_context(|| {
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
