//! `rtsoak report RESULT...`: load saved results and render them in one output format, on
//! stdout or into a file or directory. Never measures: every figure comes from the saved JSON.

use std::path::{Path, PathBuf};

use anyhow::Context;

use super::export_files;
use crate::exit::Outcome;
use crate::store::load;
use rtsoak_record::export::KcidbOrigin;
use rtsoak_record::result::ResultDoc;
use rtsoak_report::escape::terminal;
use rtsoak_report::{Format, Render};

/// What changes how a format renders.
pub(super) struct Options {
    /// The table format with every other table after the headline.
    pub(crate) details: bool,
    /// The kcidb format under this origin instead of the result's.
    pub(crate) kcidb_origin: Option<KcidbOrigin>,
}

/// Render `results` as `format`.
pub(super) fn report(
    results: &[PathBuf],
    format: &str,
    output: Option<&Path>,
    options: Options,
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
    let format = if options.details && named.name == "table" {
        &details_table
    } else {
        named
    };
    if options.kcidb_origin.is_some() && named.name != "kcidb" {
        eprintln!(
            "Error: --kcidb-origin names the origin of the kcidb format: add --format kcidb, or \
             drop --kcidb-origin"
        );
        return Ok(Outcome::Usage);
    }
    let mut docs = results
        .iter()
        .map(|path| load(path).map(|doc| (path.as_path(), doc)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    if let Some(origin) = options.kcidb_origin {
        for (_, doc) in &mut docs {
            doc.plan.export.kcidb_origin = origin.clone();
        }
    }
    for (path, doc) in &docs {
        warn_undecodable(path, doc);
    }
    match output {
        None => to_stdout(format, &docs, options.details),
        Some(path) => to_files(format, &docs, path),
    }
}

/// Print `docs` as `format`: the table as wide as the terminal; a directory format cannot be.
fn to_stdout(
    format: &Format,
    docs: &[(&Path, ResultDoc)],
    details: bool,
) -> anyhow::Result<Outcome> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match format.render {
        Render::File(_) if format.name == "table" => {
            let columns = super::columns::stdout_columns();
            let rtsoak = super::invocation::rtsoak_command();
            for (_, doc) in docs {
                let text = rtsoak_report::terminal::render(doc, details, columns, &rtsoak);
                stdout.write_all(text.as_bytes())?;
            }
        }
        Render::File(render) => {
            for (_, doc) in docs {
                stdout.write_all(&render(doc))?;
            }
        }
        Render::Directory(_) => {
            eprintln!(
                "Error: the {} format is a directory of files (one per transport and series), \
                 not a stream: give --output DIR",
                format.name
            );
            return Ok(Outcome::Usage);
        }
    }
    Ok(Outcome::Pass)
}

/// Write `docs` as `format` to `path`: the file itself for one result, else a file each in the
/// directory `path`, named after its result.
fn to_files(format: &Format, docs: &[(&Path, ResultDoc)], path: &Path) -> anyhow::Result<Outcome> {
    if let [(_, doc)] = docs
        && !path.is_dir()
    {
        let wrote = export_files::write(format, doc, path)?;
        eprintln!("Wrote {}", terminal(&wrote));
        return Ok(Outcome::Pass);
    }
    rtsoak_sys::safe_dir::SafeDir::create(path).with_context(|| {
        format!(
            "creating the output directory {}: choose another with --output",
            path.display()
        )
    })?;
    let mut used: Vec<String> = Vec::new();
    for (result, doc) in docs {
        let name = unique(
            format!("{}-{}", result_name(result), format.file_name),
            &mut used,
        );
        let wrote = export_files::write(format, doc, &path.join(name))?;
        eprintln!("Wrote {}", terminal(&wrote));
    }
    Ok(Outcome::Pass)
}

/// Say which histograms of `doc` did not decode: their percentiles are `-` in every format, so
/// a damaged file never shows a made-up figure, and the warning says why.
fn warn_undecodable(path: &Path, doc: &ResultDoc) {
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
