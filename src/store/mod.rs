//! The result directory's whole life: made and tried for writing before anything runs
//! ([`dir`]), the document saved into it after every run and loaded back, and `latest` and
//! retention among its siblings once it is done ([`retention`]). Saves are atomic (a temporary
//! file in the same directory, then rename), so a reader or a crash never sees half a document;
//! a comparison re-saves after every run, so a late failure loses only the run in progress.

mod check;
mod dir;
pub(crate) mod retention;
mod upgrade_v2;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use anyhow::Context;

use rtsoak_sys::input::Input;
use rtsoak_sys::safe_dir::SafeDir;

pub use check::Refused;
pub(crate) use dir::{Saver, new_result_dir};

use rtsoak_record::result::{ResultDoc, SCHEMA_VERSION};
use rtsoak_report::json::render as to_json;

/// File name of the result document inside a result directory.
pub(crate) const RESULT_FILE: &str = "result.json";

/// Write `doc` to `path` atomically, readable by everyone (results hold no secrets).
pub(crate) fn save(doc: &ResultDoc, path: &Path) -> anyhow::Result<()> {
    write_atomic(path, &to_json(doc))
}

/// Write any document to `path` as pretty JSON, atomically (the bench results use it), with
/// nothing a terminal acts on raw in it.
pub(crate) fn save_json<T: serde::Serialize>(doc: &T, path: &Path) -> anyhow::Result<()> {
    let mut bytes = rtsoak_report::escape::pretty_json(doc)?.into_bytes();
    bytes.push(b'\n');
    write_atomic(path, &bytes)
}

/// Write `bytes` to `path` atomically (a new file under a random name in the same directory,
/// then renamed onto `path`), readable by everyone: a reader or a crash never sees half a
/// file, and a name planted there (a symlink to root's files) is replaced, never followed. The
/// directory is opened as [`SafeDir`] does, so root refuses one another user controls.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = parent_dir(path);
    let name = path
        .file_name()
        .with_context(|| format!("{} names no file", path.display()))?;
    let dir = SafeDir::open(dir).with_context(|| {
        format!(
            "opening {} to write {}: choose a writable place with --output",
            dir.display(),
            Path::new(name).display()
        )
    })?;
    dir.write(name, bytes, 0o644).with_context(|| {
        format!(
            "writing {}: choose a writable place with --output",
            path.display()
        )
    })
}

/// The directory `path` is in: its parent, or `.` for a bare file name.
pub(crate) fn parent_dir(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// The most rtsoak reads of a saved result (a `result.json`, a baseline, a bench result). The
/// largest results are built to stay under 10 MB (an 8-hour nightly of every transport whose
/// every list fills is about 9.5 MB, `size_tests`), and older versions wrote them indented, at
/// about twice the size: 64 MiB holds those with room to spare, and bounds what a wrong file (a
/// 4 GB log, `/proc/kcore`) makes rtsoak read and decode.
pub(crate) const MAX_RESULT_BYTES: u64 = 64 << 20;

/// Context of an error that says a file given as a result is not one (not JSON, another
/// schema, not rtsoak's): a bad argument, exit 2, as a file of the wrong kind is.
#[derive(Debug)]
pub struct NotAResult(pub PathBuf);

impl std::fmt::Display for NotAResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "loading {}", self.0.display())
    }
}

/// Load a result document (a `result.json`, or a result directory holding one).
pub fn load(path: &Path) -> anyhow::Result<ResultDoc> {
    Ok(read(path)?.0)
}

/// Read a result (a `result.json`, or a result directory holding one) once, from one open
/// file (`sys::input`: a regular file, at most [`MAX_RESULT_BYTES`], as root never through
/// another user's symlink), and decode it: the document, and the very bytes it was decoded
/// from, for a caller that copies them.
pub(crate) fn read(path: &Path) -> anyhow::Result<(ResultDoc, Input)> {
    let input = rtsoak_sys::input::read_file_or_in_dir(
        path,
        Some(OsStr::new(RESULT_FILE)),
        MAX_RESULT_BYTES,
    )
    .context("reading the result")?;
    let doc = from_bytes(&input.bytes).context(NotAResult(input.path.clone()))?;
    Ok((doc, input))
}

/// Decode a result document from the bytes of a `result.json`: any bytes give a document or
/// an error, never a panic (a fuzz target holds it to that). Versions 1 and 2 are read too
/// ([`upgrade_from_v1`], [`upgrade_v2`]). A document that parses but whose counts cannot be added, or whose
/// runs name transports its plan did not run, is refused with [`Refused`] ([`check`]).
///
/// The version is read first on its own; a current document is then decoded straight into
/// its types. (A generic JSON tree of a result of 16,000 runs took several times the memory
/// of the document; only version 1 and 2 documents, which need rewriting, go through one.)
pub fn from_bytes(bytes: &[u8]) -> anyhow::Result<ResultDoc> {
    let version = match serde_json::from_slice::<Version>(bytes) {
        Ok(version) => version.schema_version.and_then(|v| v.as_u64()),
        Err(error) if error.is_syntax() || error.is_eof() => {
            return Err(error).context("the file is not JSON");
        }
        // JSON, but not an object with a version.
        Err(_) => None,
    };
    let doc: ResultDoc = match version {
        Some(older @ (1 | 2)) => {
            let mut value: serde_json::Value =
                serde_json::from_slice(bytes).context("the file is not JSON")?;
            if older == 1 {
                upgrade_from_v1(&mut value);
            }
            upgrade_v2::upgrade(&mut value);
            value["schema_version"] = SCHEMA_VERSION.into();
            serde_json::from_value(value).context("it is not an rtsoak result")?
        }
        Some(v) if v == u64::from(SCHEMA_VERSION) => match serde_json::from_slice(bytes) {
            Ok(doc) => doc,
            // The version read skips strings unchecked: a lone surrogate (`"\ud800"`) is
            // found only here, and it makes the file no JSON, not a result of the wrong shape.
            Err(error) if error.is_syntax() => {
                return Err(error).context("the file is not JSON");
            }
            Err(error) => return Err(error).context("it is not an rtsoak result"),
        },
        _ => anyhow::bail!(
            "it has result schema version {version:?}; this rtsoak reads versions 1 to \
             {SCHEMA_VERSION}"
        ),
    };
    check::check(&doc)?;
    Ok(doc)
}

/// A document's version alone: every other field is skipped unread.
#[derive(serde::Deserialize)]
struct Version {
    #[serde(default)]
    schema_version: Option<serde_json::Value>,
}

/// Version 1 wrote a ring-setup comparison's run as `"transport": "futex (defer-taskrun)"`
/// beside `ring_setup_requested`; version 2 keeps the registry name alone in `transport`. Its
/// verdict had no `status`: a passing one is `pass`, any other `fail` (version 1 had no third
/// verdict). Its caveats were sentences alone, most serious first: each becomes a caveat whose
/// severity is not known, kept as `distorts` in its place.
fn upgrade_from_v1(value: &mut serde_json::Value) {
    use serde_json::Value;
    if let Some(caveats) = value.get_mut("caveats").and_then(Value::as_array_mut) {
        for caveat in caveats.iter_mut() {
            if let Value::String(text) = caveat {
                *caveat = serde_json::json!({
                    "severity": "distorts",
                    "kind": rtsoak_record::CaveatKind::Version1,
                    "text": text.clone(),
                });
            }
        }
    }
    if let Some(runs) = value.get_mut("runs").and_then(Value::as_array_mut) {
        for run in runs {
            let Some(setup) = run
                .get("ring_setup_requested")
                .and_then(Value::as_str)
                .map(str::to_string)
            else {
                continue;
            };
            if let Some(Value::String(transport)) = run.get_mut("transport")
                && let Some(name) = transport.strip_suffix(&format!(" ({setup})"))
            {
                *transport = name.to_string();
            }
        }
    }
    if let Some(verdict) = value.get_mut("verdict").and_then(Value::as_object_mut)
        && !verdict.contains_key("status")
    {
        let pass = verdict.get("pass").and_then(Value::as_bool) == Some(true);
        verdict.insert("status".into(), (if pass { "pass" } else { "fail" }).into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsoak_report::json::render as to_json;

    /// The saved real results, as this repository keeps them.
    fn fixtures() -> Vec<(String, Vec<u8>)> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results");
        let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|e| e == "json"))
            .map(|path| (path.display().to_string(), std::fs::read(&path).unwrap()))
            .collect();
        out.sort();
        assert!(!out.is_empty(), "no saved results in {}", dir.display());
        out
    }

    #[test]
    fn a_saved_result_loads_and_saves_back_byte_for_byte_with_its_series_keys() {
        let mut docs: Vec<(String, Vec<u8>)> = fixtures();
        docs.push((
            "the two-round fixture".to_string(),
            to_json(&rtsoak_testing::fixture::two_round_doc()),
        ));
        for (name, bytes) in docs {
            let saved = to_json(&from_bytes(&bytes).unwrap());
            assert_eq!(to_json(&from_bytes(&saved).unwrap()), saved, "{name}");
            // Every map keyed by series holds exactly the names the file held (a version 2
            // file's cause sentences read as their causes).
            let mut before: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            if before["schema_version"] == 2 {
                upgrade_v2::upgrade(&mut before);
            }
            let after: serde_json::Value = serde_json::from_slice(&saved).unwrap();
            for (old, new) in before["runs"]
                .as_array()
                .unwrap()
                .iter()
                .zip(after["runs"].as_array().unwrap())
            {
                for field in ["series", "tail", "intervals", "explanation"] {
                    assert_eq!(old.get(field), new.get(field), "{name}: {field}");
                }
            }
        }
    }

    #[test]
    fn a_version_1_results_caveats_are_sentences_of_their_own_kind_written_as_always() {
        let (_, bytes) = &fixtures()[0];
        let mut value: serde_json::Value = serde_json::from_slice(bytes).unwrap();
        value["schema_version"] = 1.into();
        value["caveats"] = serde_json::json!(["RT CPU 5 not isolated"]);
        let doc = from_bytes(&serde_json::to_vec(&value).unwrap()).unwrap();
        let kind = rtsoak_record::CaveatKind::Version1;
        let severity = rtsoak_record::Severity::Distorts;
        let caveat = rtsoak_record::Caveat::new(severity, kind, "RT CPU 5 not isolated");
        assert_eq!(doc.caveats, [caveat]);
        let saved: serde_json::Value = serde_json::from_slice(&to_json(&doc)).unwrap();
        assert_eq!(saved["caveats"][0]["kind"], "version-1");
    }

    #[test]
    fn a_result_with_a_series_this_rtsoak_does_not_know_is_refused_naming_it() {
        let (_, bytes) = &fixtures()[0];
        let mut value: serde_json::Value = serde_json::from_slice(bytes).unwrap();
        let series = value["runs"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .filter_map(|run| run.get_mut("series")?.as_object_mut())
            .find(|series| series.contains_key("delivery"))
            .expect("a saved run with a delivery series");
        let delivery = series.remove("delivery").unwrap();
        series.insert("jitter".to_string(), delivery);
        let error = from_bytes(&serde_json::to_vec(&value).unwrap()).unwrap_err();
        let message = format!("{error:#}");
        assert!(message.contains("unknown series `jitter`"), "{message}");
    }
}

#[cfg(test)]
#[path = "size_tests.rs"]
mod size_tests;
