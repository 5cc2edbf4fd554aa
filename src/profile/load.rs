//! Loading a profile: by name (an installed profile before the built-in of that name) or from
//! a file, and parsing its text.

use std::path::{Path, PathBuf};

use super::builtin::{builtin_names, builtin_text};
use super::error::ProfileError;
use super::installed::{self, MAX_BYTES};
use super::sections::Profile;

/// True when `name_or_path` names a file rather than a built-in profile.
fn is_path(name_or_path: &str) -> bool {
    name_or_path.contains('/') || name_or_path.ends_with(".toml")
}

/// `name_or_path`: a name, or a path to a TOML file (anything containing '/' or ending in .toml
/// is a path). A name is the installed profile `/etc/rtsoak/profiles/NAME.toml` where there is
/// one, else the built-in of that name. Returns the profile and the name to record: the
/// built-in's name, or the path of the file read.
pub fn load(name_or_path: &str) -> Result<(String, Profile), ProfileError> {
    load_with(name_or_path, Path::new(installed::DIR))
}

/// Every name `--profile` takes: the built-in profiles, then installed ones of other names.
pub(crate) fn names() -> Vec<String> {
    names_with(Path::new(installed::DIR))
}

fn names_with(installed_dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = builtin_names().iter().map(|n| n.to_string()).collect();
    for name in installed::names(installed_dir) {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// Where the profile `name` comes from (`installed` or `built-in`) and its text, or `None`
/// when there is no profile of that name.
pub(crate) fn named_text(name: &str) -> Result<Option<(&'static str, String)>, ProfileError> {
    if let Some((_, text)) = installed::find(Path::new(installed::DIR), name)? {
        return Ok(Some(("installed", text)));
    }
    Ok(builtin_text(name).map(|text| ("built-in", text.to_string())))
}

/// [`load`], with installed profiles looked up in `installed_dir`.
fn load_with(name_or_path: &str, installed_dir: &Path) -> Result<(String, Profile), ProfileError> {
    if is_path(name_or_path) {
        let input = rtsoak_sys::input::read(Path::new(name_or_path), MAX_BYTES)?;
        let text = String::from_utf8(input.bytes).map_err(|_| ProfileError::Io {
            path: PathBuf::from(name_or_path),
            source: std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text"),
        })?;
        return Ok((name_or_path.to_string(), parse(name_or_path, &text)?));
    }
    if let Some((path, text)) = installed::find(installed_dir, name_or_path)? {
        let shown = path.to_string_lossy().into_owned();
        let profile = parse(&shown, &text)?;
        return Ok((shown, profile));
    }
    let text = builtin_text(name_or_path).ok_or_else(|| ProfileError::UnknownBuiltin {
        name: name_or_path.to_string(),
        known: names_with(installed_dir),
        installed_dir: installed_dir.to_path_buf(),
    })?;
    Ok((name_or_path.to_string(), parse(name_or_path, text)?))
}

/// Parse profile text; `name` is used in errors only. TOML errors carry toml's line/column
/// message, which quotes the profile: each of its lines is escaped and cut, as the profile may
/// be anyone's file (one 100 MB line must not reach stderr twice over). Values are checked by
/// [`resolve`](fn@super::resolve), which knows the machine.
pub fn parse(name: &str, text: &str) -> Result<Profile, ProfileError> {
    toml::from_str(text).map_err(|e| ProfileError::Toml {
        name: rtsoak_record::text::quote(name),
        message: toml_message(&e),
    })
}

/// A TOML error's message with each of its lines escaped and cut: it quotes the file read,
/// which may be anyone's (a profile, a campaign plan).
pub(crate) fn toml_message(error: &toml::de::Error) -> String {
    error
        .to_string()
        .trim_end()
        .lines()
        .map(rtsoak_record::text::quote)
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_reads_builtins_by_name_and_files_by_path() {
        let (name, p) = load("ci").unwrap();
        assert_eq!(name, "ci");
        assert_eq!(p.run.duration_s, 3);

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mine.toml");
        std::fs::write(&path, "[run]\nduration_s = 7\n").unwrap();
        let given = path.to_str().unwrap();
        let (name, p) = load(given).unwrap();
        assert_eq!(name, given);
        assert_eq!(p.run.duration_s, 7);
    }

    #[test]
    fn an_installed_profile_comes_before_the_builtin_of_its_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ci.toml"), "[run]\nduration_s = 11\n").unwrap();
        std::fs::write(dir.path().join("board.toml"), "[run]\nduration_s = 12\n").unwrap();
        let (name, p) = load_with("ci", dir.path()).unwrap();
        assert_eq!(name, dir.path().join("ci.toml").to_str().unwrap());
        assert_eq!(p.run.duration_s, 11);
        assert_eq!(load_with("board", dir.path()).unwrap().1.run.duration_s, 12);
        assert_eq!(load_with("nightly", dir.path()).unwrap().0, "nightly");
        let text = load_with("jetson", dir.path()).unwrap_err().to_string();
        assert!(text.contains("nightly, board;"), "{text}");
    }

    #[test]
    fn an_unknown_builtin_lists_the_builtins() {
        let text = load("jetson").unwrap_err().to_string();
        assert!(text.contains("`jetson`"), "{text}");
        assert!(text.contains("default, ci"), "{text}");
    }

    #[test]
    fn a_missing_file_names_the_path() {
        let text = load("/nonexistent/p.toml").unwrap_err().to_string();
        assert!(
            text.starts_with("cannot read profile /nonexistent/p.toml: "),
            "{text}"
        );
    }
}
