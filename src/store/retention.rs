//! Result directories kept side by side (a nightly timer's state directory): pruning the old
//! ones by count and age, and the `latest` symlink to the newest.
//!
//! Owns what rtsoak recognises as its own result directory: a directory (not a symlink) owned by
//! the running user, named `YYYYMMDDTHHMMSSZ-<command>` as rtsoak names them with a time not in
//! the future, holding a `result.json` (a regular file, owned by the same user) written by
//! rtsoak. Never removes anything else, never the result just written, never follows a symlink,
//! and never works in a directory another user controls (as root, the checks of `SafeDir`).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::Context;
use rtsoak_sys::safe_dir::{Kind, SafeDir, euid};

use super::RESULT_FILE;

/// Name of the symlink to the newest result directory.
pub(crate) const LATEST: &str = "latest";

/// How many result directories to keep, and for how long. `None`: no limit of that kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Retention {
    /// Keep at most this many (the newest), the current one included.
    pub(crate) keep: Option<usize>,
    /// Remove those started more than this many days ago.
    pub(crate) keep_days: Option<u64>,
}

/// The start time encoded in a result directory name (`20261130T120000Z-compare`), if the name
/// is one rtsoak gives.
pub(crate) fn stamp_of(name: &str) -> Option<SystemTime> {
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

/// True if `name` in `parent` is a result directory this rtsoak wrote: its name is an rtsoak
/// stamp not later than `now` (a name "from the future" must not push real results out), it is
/// a real directory (lstat: never a symlink) owned by this user, and it holds a `result.json`
/// that is a regular file owned by this user saying `"tool": {"name": "rtsoak"}`. Another
/// user's directory, even a perfect copy, is never ours to delete.
fn is_own_result(parent: &SafeDir, name: &OsStr, now: SystemTime) -> bool {
    let named = name
        .to_str()
        .and_then(stamp_of)
        .is_some_and(|at| at <= now + FUTURE_SLACK);
    if !named || parent.entry(name) != Some((Kind::Dir, euid())) {
        return false;
    }
    let Ok(dir) = parent.open_entry(name) else {
        return false;
    };
    dir.read_own_file(OsStr::new(RESULT_FILE), super::MAX_RESULT_BYTES)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
        .is_some_and(|v| v["tool"]["name"] == "rtsoak")
}

/// How far in the future a stamp may be and still count (clocks of a board and its NTP server
/// disagree by seconds, not hours).
const FUTURE_SLACK: Duration = Duration::from_secs(3600);

/// rtsoak's result directories in `parent` (their names), oldest first (by the stamp in their
/// name), as [`is_own_result`] recognises them.
fn own_results(parent: &SafeDir, now: SystemTime) -> anyhow::Result<Vec<OsString>> {
    let mut names: Vec<OsString> = parent
        .entries()
        .with_context(|| {
            format!(
                "listing the result directories in {}",
                parent.path().display()
            )
        })?
        .into_iter()
        .filter(|name| is_own_result(parent, name, now))
        .collect();
    names.sort();
    Ok(names)
}

/// Remove the result directories in `parent` beyond `retention` (older than `keep_days` at
/// `now`, or beyond the newest `keep`), never `current`. Returns what was removed. The parent
/// is opened as [`SafeDir`] does (root refuses one another user controls), and each directory
/// is removed through its fd, never following a symlink.
pub(crate) fn prune(
    parent: &Path,
    current: &Path,
    retention: &Retention,
    now: SystemTime,
) -> anyhow::Result<Vec<PathBuf>> {
    let dir = SafeDir::open(parent)
        .with_context(|| format!("opening {} to prune old results", parent.display()))?;
    let names = own_results(&dir, now)?;
    // Saturating: `--keep-days` takes any u64, and a count of days past 2^64 seconds means
    // "keep them all", never a product wrapped round to hours.
    let max_age = retention
        .keep_days
        .map(|days| Duration::from_secs(days.saturating_mul(86_400)));
    let mut removed = Vec::new();
    for (index, name) in names.iter().enumerate() {
        if Some(name.as_os_str()) == current.file_name() {
            continue;
        }
        let newer = names.len() - 1 - index;
        let too_many = retention.keep.is_some_and(|keep| newer >= keep);
        let started = name.to_str().and_then(stamp_of);
        let too_old = match (max_age, started) {
            (Some(max), Some(at)) => now.duration_since(at).is_ok_and(|age| age > max),
            _ => false,
        };
        if too_many || too_old {
            let path = parent.join(name);
            dir.remove_tree(name).with_context(|| {
                format!(
                    "removing the old result {} (retention): check its permissions, or \
                     remove it by hand",
                    path.display()
                )
            })?;
            removed.push(path);
        }
    }
    Ok(removed)
}

/// Point `parent/latest` at `current` (a relative symlink), atomically: a new symlink under a
/// random temporary name renamed over the old one, so a reader always finds one of the two.
pub(crate) fn update_latest(parent: &Path, current: &Path) -> anyhow::Result<()> {
    let target = current
        .file_name()
        .context("the result directory has no name")?;
    let link = parent.join(LATEST);
    let dir = SafeDir::open(parent)?;
    if dir
        .entry(OsStr::new(LATEST))
        .is_some_and(|(kind, _)| kind != Kind::Symlink)
    {
        anyhow::bail!(
            "{} exists and is not a symlink: rtsoak will not replace it; move it away so rtsoak \
             can point `latest` at the newest result",
            link.display()
        );
    }
    dir.replace_symlink(target, OsStr::new(LATEST))
        .with_context(|| format!("pointing {} at {}", link.display(), current.display()))?;
    Ok(())
}

/// After a result is saved in `result_dir`: point `latest` at it and prune its siblings under
/// `retention`, if it is a timestamped rtsoak directory. Returns what to tell the user (the
/// directories removed, or why nothing was pruned).
pub(crate) fn keep(
    result_dir: &Path,
    retention: &Retention,
    now: SystemTime,
) -> anyhow::Result<Vec<String>> {
    let parent = super::parent_dir(result_dir);
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
