//! `rtsoak report RESULT...`: load saved results and render them in one output format, on
//! stdout or into a file or directory. Never measures: every figure comes from the saved JSON.

use std::path::{Path, PathBuf};

use anyhow::Context;

use super::export_files;
use crate::exit::Outcome;
use crate::store::load;
use rtsoak_report::escape::terminal;
use rtsoak_report::{Format, Render};

/// Render `results` as `format` (`details`: the table format with every other table after
/// the headline).
pub(super) fn report(
    results: &[PathBuf],
    format: &str,
    output: Option<&Path>,
    details: bool,
) -> anyhow::Result<Outcome> {
    let named = rtsoak_report::by_name(format).with_context(|| {
        format!(
            "unknown format `{format}`: choose one of {}",
            rtsoak_report::names().join(", ")
        )
    })?;
    let details_table = Format {
        render: Render::File(|doc| {
            rtsoak_report::terminal::render(doc, true, None, "rtsoak").into_bytes()
        }),
        ..*named
    };
    let format = if details && named.name == "table" {
        &details_table
    } else {
        named
    };
    let docs = results
        .iter()
        .map(|path| load(path).map(|doc| (path, doc)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    for (path, doc) in &docs {
        warn_undecodable(path, doc);
    }
    match output {
        None => match format.render {
            // On a terminal, the headline as wide as it is.
            Render::File(_) if named.name == "table" => {
                use std::io::Write;
                let columns = super::columns::stdout_columns();
                let rtsoak = super::invocation::rtsoak_command();
                let mut stdout = std::io::stdout().lock();
                for (_, doc) in &docs {
                    let text = rtsoak_report::terminal::render(doc, details, columns, &rtsoak);
                    stdout.write_all(text.as_bytes())?;
                }
            }
            Render::File(render) => {
                use std::io::Write;
                let mut stdout = std::io::stdout().lock();
                for (_, doc) in &docs {
                    stdout.write_all(&render(doc))?;
                }
            }
            Render::Directory(_) => {
                eprintln!(
                    "Error: the {} format is a directory of files (one per transport and \
                     series), not a stream: give --output DIR",
                    format.name
                );
                return Ok(Outcome::Usage);
            }
        },
        Some(path) if docs.len() == 1 && !path.is_dir() => {
            let wrote = export_files::write(format, &docs[0].1, path)?;
            eprintln!("Wrote {}", terminal(&wrote));
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
                let wrote = export_files::write(format, doc, &dir.join(name))?;
                eprintln!("Wrote {}", terminal(&wrote));
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
