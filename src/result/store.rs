//! Saving and loading result documents. Saves are atomic (a temporary file in the same
//! directory, then rename), so a reader or a crash never sees half a document; a comparison
//! re-saves after every run, so a late failure loses only the run in progress.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::{ResultDoc, SCHEMA_VERSION};

/// File name of the result document inside a result directory.
pub const RESULT_FILE: &str = "result.json";

/// Write `doc` to `path` atomically, readable by everyone (results hold no secrets).
pub fn save(doc: &ResultDoc, path: &Path) -> anyhow::Result<()> {
    save_json(doc, path)
}

/// Write any document to `path` as pretty JSON, atomically, readable by everyone (the bench
/// results use it too).
pub fn save_json<T: serde::Serialize>(doc: &T, path: &Path) -> anyhow::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut temp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    serde_json::to_writer_pretty(&mut temp, doc)?;
    temp.write_all(b"\n")?;
    temp.as_file().sync_all()?;
    use std::os::unix::fs::PermissionsExt;
    temp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(0o644))?;
    temp.persist(path)
        .with_context(|| format!("renaming the result into {}", path.display()))?;
    Ok(())
}

/// Load a result document (a `result.json`, or a result directory holding one).
pub fn load(path: &Path) -> anyhow::Result<ResultDoc> {
    let file: PathBuf = if path.is_dir() {
        path.join(RESULT_FILE)
    } else {
        path.to_path_buf()
    };
    let text = std::fs::read_to_string(&file)
        .with_context(|| format!("reading result {}", file.display()))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", file.display()))?;
    let version = value.get("schema_version").and_then(|v| v.as_u64());
    anyhow::ensure!(
        version == Some(u64::from(SCHEMA_VERSION)),
        "{} has result schema version {:?}; this rtsoak reads version {SCHEMA_VERSION}",
        file.display(),
        version
    );
    serde_json::from_value(value)
        .with_context(|| format!("{} is not an rtsoak result", file.display()))
}
