//! Result directories kept side by side (a nightly timer's state directory): pruning the old
//! ones by count and age, and the `latest` symlink to the newest.
//!
//! Owns what rtsoak recognises as its own result directory: a directory (not a symlink) named
//! `YYYYMMDDTHHMMSSZ-<command>`, as rtsoak names them, holding a `result.json` written by
//! rtsoak. Never removes anything else, never the result just written, and never follows a
//! symlink.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::Context;

use super::RESULT_FILE;

/// Name of the symlink to the newest result directory.
pub const LATEST: &str = "latest";

/// How many result directories to keep, and for how long. `None`: no limit of that kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Retention {
    /// Keep at most this many (the newest), the current one included.
    pub keep: Option<usize>,
    /// Remove those started more than this many days ago.
    pub keep_days: Option<u64>,
}

/// The start time encoded in a result directory name (`20261130T120000Z-compare`), if the name
/// is one rtsoak gives.
pub fn stamp_of(name: &str) -> Option<SystemTime> {
    let (stamp, command) = name.split_once('-')?;
    let valid_command =
        !command.is_empty() && command.bytes().all(|b| b.is_ascii_lowercase() || b == b'-');
    let b = stamp.as_bytes();
    let digits = |range: std::ops::Range<usize>| b[range].iter().all(u8::is_ascii_digit);
    if !valid_command || b.len() != 16 || b[8] != b'T' || b[15] != b'Z' {
        return None;
    }
    if !digits(0..8) || !digits(9..15) {
        return None;
    }
    let rfc3339 = format!(
        "{}-{}-{}T{}:{}:{}Z",
        &stamp[0..4],
        &stamp[4..6],
        &stamp[6..8],
        &stamp[9..11],
        &stamp[11..13],
        &stamp[13..15]
    );
    humantime::parse_rfc3339(&rfc3339).ok()
}

/// True if `dir` is a result directory rtsoak wrote: its name is an rtsoak stamp, it is a real
/// directory, and its `result.json` says `"tool": {"name": "rtsoak"}`.
fn is_rtsoak_result(dir: &Path) -> bool {
    let named = dir
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| stamp_of(n).is_some());
    let real_dir = std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir());
    named
        && real_dir
        && std::fs::read(dir.join(RESULT_FILE))
            .ok()
            .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
            .is_some_and(|v| v["tool"]["name"] == "rtsoak")
}

/// rtsoak's result directories in `parent`, oldest first (by the stamp in their name).
pub fn result_dirs(parent: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(parent)
        .with_context(|| format!("listing the result directories in {}", parent.display()))?;
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| is_rtsoak_result(p))
        .collect();
    dirs.sort();
    Ok(dirs)
}

/// Remove the result directories in `parent` beyond `retention` (older than `keep_days` at
/// `now`, or beyond the newest `keep`), never `current`. Returns what was removed.
pub fn prune(
    parent: &Path,
    current: &Path,
    retention: &Retention,
    now: SystemTime,
) -> anyhow::Result<Vec<PathBuf>> {
    let dirs = result_dirs(parent)?;
    let max_age = retention
        .keep_days
        .map(|days| Duration::from_secs(days * 86_400));
    let mut removed = Vec::new();
    for (index, dir) in dirs.iter().enumerate() {
        if dir.file_name() == current.file_name() {
            continue;
        }
        let newer = dirs.len() - 1 - index;
        let too_many = retention.keep.is_some_and(|keep| newer >= keep);
        let started = dir.file_name().and_then(|n| n.to_str()).and_then(stamp_of);
        let too_old = match (max_age, started) {
            (Some(max), Some(at)) => now.duration_since(at).is_ok_and(|age| age > max),
            _ => false,
        };
        if too_many || too_old {
            std::fs::remove_dir_all(dir).with_context(|| {
                format!(
                    "removing the old result {} (retention): check its permissions, or \
                     remove it by hand",
                    dir.display()
                )
            })?;
            removed.push(dir.clone());
        }
    }
    Ok(removed)
}

/// Point `parent/latest` at `current` (a relative symlink), atomically: a new symlink under a
/// temporary name renamed over the old one, so a reader always finds one of the two.
pub fn update_latest(parent: &Path, current: &Path) -> anyhow::Result<()> {
    let target = current
        .file_name()
        .context("the result directory has no name")?;
    let link = parent.join(LATEST);
    if std::fs::symlink_metadata(&link).is_ok_and(|m| !m.file_type().is_symlink()) {
        anyhow::bail!(
            "{} exists and is not a symlink: rtsoak will not replace it; move it away so rtsoak \
             can point `latest` at the newest result",
            link.display()
        );
    }
    let temp = parent.join(format!(".{LATEST}.{}", std::process::id()));
    let _ = std::fs::remove_file(&temp);
    std::os::unix::fs::symlink(target, &temp)
        .with_context(|| format!("creating the symlink {}", temp.display()))?;
    std::fs::rename(&temp, &link).with_context(|| {
        let _ = std::fs::remove_file(&temp);
        format!("renaming the new symlink onto {}", link.display())
    })?;
    Ok(())
}

/// After a result is saved in `result_dir`: point `latest` at it and prune its siblings under
/// `retention`, if it is a timestamped rtsoak directory. Returns what to tell the user (the
/// directories removed, or why nothing was pruned).
pub fn keep(
    result_dir: &Path,
    retention: &Retention,
    now: SystemTime,
) -> anyhow::Result<Vec<String>> {
    let parent = result_dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let named = result_dir
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| stamp_of(n).is_some());
    let pruning = *retention != Retention::default();
    if !named {
        return Ok(if pruning {
            vec![
                "Warning: --keep and --keep-days prune timestamped result directories; with \
                 --output nothing was pruned. Use --results-dir DIR instead of --output."
                    .to_string(),
            ]
        } else {
            Vec::new()
        });
    }
    update_latest(parent, result_dir)?;
    if !pruning {
        return Ok(Vec::new());
    }
    Ok(prune(parent, result_dir, retention, now)?
        .iter()
        .map(|removed| format!("Removed old result {} (retention)", removed.display()))
        .collect())
}

#[cfg(test)]
#[path = "retention_tests.rs"]
mod tests;
