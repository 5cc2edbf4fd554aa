//! Installed profiles: TOML files in `/etc/rtsoak/profiles` (the Debian package's conffiles,
//! and any profile an administrator adds there). A profile *name* is looked up here before the
//! built-in profiles, so an edited conffile is what `rtsoak@nightly.service` runs, and a board's
//! own `/etc/rtsoak/profiles/board.toml` is `--profile board`.
//!
//! The directory is read by root from systemd units, so a file in it is used only when no other
//! user could have written it: the file and every directory on its canonical path must be owned
//! by root or by this user and closed to writes by group and others (as ssh's StrictModes asks
//! of `authorized_keys`). Anything else is refused with what to fix, never silently skipped:
//! falling back to the built-in would run a profile the administrator did not mean.
//!
//! Owns: finding, checking and reading installed profiles. Never parses (that is
//! `profile::parse`) and never writes.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::error::ProfileError;

/// Where installed profiles live.
pub(crate) const DIR: &str = "/etc/rtsoak/profiles";

/// The most rtsoak reads of a profile, installed or given by path: larger than any profile a
/// person writes (the built-in ones are under 10 KiB), and a bound on what a wrong file makes
/// rtsoak read.
pub(super) const MAX_BYTES: u64 = 1 << 20;

/// The path and text of the installed profile `name` in `dir`, or `None` when there is none
/// (no such directory or no such file).
pub(super) fn find(dir: &Path, name: &str) -> Result<Option<(PathBuf, String)>, ProfileError> {
    let path = dir.join(format!("{name}.toml"));
    match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(ProfileError::Io { path, source }),
        Ok(_) => {}
    }
    let canonical = std::fs::canonicalize(&path).map_err(|source| ProfileError::Io {
        path: path.clone(),
        source,
    })?;
    for ancestor in canonical.ancestors().skip(1) {
        check_trusted_dir(ancestor)?;
    }
    // Read once from one open file (a regular file of at most MAX_BYTES, `sys::input`), and
    // judged by the owner and mode of the file the bytes came from.
    let input = rtsoak_sys::input::read(&canonical, MAX_BYTES)?;
    trusted_owner_and_mode(&path, input.stat.st_uid, input.stat.st_mode, false)?;
    let text = String::from_utf8(input.bytes).map_err(|_| ProfileError::Io {
        path: path.clone(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text"),
    })?;
    Ok(Some((path, text)))
}

/// Names of the installed profiles in `dir` (`*.toml`, sorted); none when it does not exist.
pub(super) fn names(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            name.strip_suffix(".toml")
                .filter(|stem| !stem.is_empty() && !stem.starts_with('.'))
                .map(str::to_string)
        })
        .collect();
    names.sort();
    names
}

fn check_trusted_dir(dir: &Path) -> Result<(), ProfileError> {
    let metadata = std::fs::metadata(dir).map_err(|source| ProfileError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    trusted_owner_and_mode(dir, metadata.uid(), metadata.mode(), true)
}

/// Owned by root or this user, and not writable by group or others (a sticky directory such as
/// `/tmp` lets others add names but not replace ours, so it passes).
fn trusted_owner_and_mode(
    path: &Path,
    uid: u32,
    mode: u32,
    is_dir: bool,
) -> Result<(), ProfileError> {
    let me = rtsoak_sys::safe_dir::euid();
    if uid != 0 && uid != me {
        return Err(untrusted(path, format!("it is owned by uid {uid}")));
    }
    let sticky = is_dir && mode & 0o1000 != 0;
    if mode & 0o022 != 0 && !sticky {
        return Err(untrusted(
            path,
            format!(
                "it is writable by group or others (mode {:o})",
                mode & 0o7777
            ),
        ));
    }
    Ok(())
}

fn untrusted(path: &Path, why: String) -> ProfileError {
    ProfileError::UntrustedInstalled {
        path: path.to_path_buf(),
        why,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn dir_with(name: &str, text: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(dir.path().join(name), text).unwrap();
        std::fs::set_permissions(
            dir.path().join(name),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        dir
    }

    #[test]
    fn a_missing_directory_or_file_is_no_installed_profile() {
        assert!(
            find(Path::new("/nonexistent/rtsoak"), "ci")
                .unwrap()
                .is_none()
        );
        let dir = dir_with("board.toml", "");
        assert!(find(dir.path(), "ci").unwrap().is_none());
    }

    #[test]
    fn an_installed_profile_is_found_by_name_and_listed() {
        let dir = dir_with("board.toml", "[run]\nduration_s = 9\n");
        std::fs::write(dir.path().join(".hidden.toml"), "").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "").unwrap();
        let (path, text) = find(dir.path(), "board").unwrap().unwrap();
        assert_eq!(path, dir.path().join("board.toml"));
        assert!(text.contains("duration_s = 9"));
        assert_eq!(names(dir.path()), ["board"]);
    }

    #[test]
    fn a_profile_others_can_write_is_refused_naming_it() {
        let dir = dir_with("board.toml", "");
        std::fs::set_permissions(
            dir.path().join("board.toml"),
            std::fs::Permissions::from_mode(0o666),
        )
        .unwrap();
        let text = find(dir.path(), "board").unwrap_err().to_string();
        assert!(text.contains("board.toml"), "{text}");
        assert!(
            text.contains("writable by group or others (mode 666)"),
            "{text}"
        );
    }

    #[test]
    fn a_directory_others_can_write_is_refused() {
        let dir = dir_with("board.toml", "");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let text = find(dir.path(), "board").unwrap_err().to_string();
        assert!(text.contains("mode 777"), "{text}");
    }

    #[test]
    fn a_symlinked_profile_is_checked_where_it_points() {
        let dir = dir_with("real.toml", "");
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::set_permissions(elsewhere.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        std::fs::write(elsewhere.path().join("x.toml"), "").unwrap();
        std::os::unix::fs::symlink(
            elsewhere.path().join("x.toml"),
            dir.path().join("link.toml"),
        )
        .unwrap();
        let text = find(dir.path(), "link").unwrap_err().to_string();
        assert!(text.contains("mode 777"), "{text}");
    }
}
