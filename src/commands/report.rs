//! `rtsoak report RESULT...`: load saved results and render them in one output format, on
//! stdout or into a file or directory. Never measures: every figure comes from the saved JSON.

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::exit::Outcome;
use crate::store::{load, write_atomic};
use rtsoak_report::escape::terminal;

/// Render `results` as `format` (`details`: the table format with every other table after
/// the headline).
pub(super) fn report(
    results: &[PathBuf],
    format: &str,
    output: Option<&Path>,
    details: bool,
) -> anyhow::Result<Outcome> {
    let render =
        |format: &rtsoak_report::Format, doc: &rtsoak_record::result::ResultDoc| -> Vec<u8> {
            if details && format.name == "table" {
                rtsoak_report::terminal::render(doc, true).into_bytes()
            } else {
                (format.render)(doc)
            }
        };
    let format = rtsoak_report::by_name(format).with_context(|| {
        format!(
            "unknown format `{format}`: choose one of {}",
            rtsoak_report::names().join(", ")
        )
    })?;
    let docs = results
        .iter()
        .map(|path| load(path).map(|doc| (path, doc)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    for (path, doc) in &docs {
        warn_undecodable(path, doc);
    }
    match output {
        None => {
            use std::io::Write;
            let mut stdout = std::io::stdout().lock();
            for (_, doc) in &docs {
                stdout.write_all(&render(format, doc))?;
            }
        }
        Some(path) if docs.len() == 1 && !path.is_dir() => {
            write_atomic(path, &render(format, &docs[0].1))?;
            eprintln!("Wrote {}", terminal(&path.display().to_string()));
        }
        Some(dir) => {
            rtsoak_sys::safe_dir::SafeDir::create(dir).with_context(|| {
                format!(
                    "creating the output directory {}: choose another with --output",
                    dir.display()
                )
            })?;
            let mut used: Vec<String> = Vec::new();
            for (path, doc) in &docs {
                let name = unique(
                    format!("{}-{}", result_name(path), format.file_name),
                    &mut used,
                );
                let file = dir.join(name);
                write_atomic(&file, &render(format, doc))?;
                eprintln!("Wrote {}", terminal(&file.display().to_string()));
            }
        }
    }
    Ok(Outcome::Pass)
}

/// Say which histograms of `doc` did not decode: their percentiles are `-` in every format, so
/// a damaged file never shows a made-up figure, and the warning says why.
fn warn_undecodable(path: &Path, doc: &rtsoak_record::result::ResultDoc) {
    for t in rtsoak_analysis::merge::by_transport(doc) {
        for (series, runs) in t.undecodable() {
            let warning = format!(
                "Warning: {}: {} {series}: the histogram of {runs} run(s) does not decode; its \
                 percentiles are shown as - (the exact counts, longest and over-threshold still \
                 stand)",
                path.display(),
                t.label
            );
            eprintln!("{}", terminal(&warning));
        }
    }
}

/// A short name for a result: its directory's name (`20261130T120000Z-compare`).
fn result_name(path: &Path) -> String {
    let dir = if path.is_dir() {
        Some(path)
    } else {
        path.parent()
    };
    dir.and_then(Path::file_name)
        .or_else(|| path.file_stem())
        .map_or_else(
            || "result".to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
}

/// `name`, or `name` with a number in front if an earlier result took it.
fn unique(name: String, used: &mut Vec<String>) -> String {
    let mut candidate = name.clone();
    let mut n = 2;
    while used.contains(&candidate) {
        candidate = format!("{n}-{name}");
        n += 1;
    }
    used.push(candidate.clone());
    candidate
}
