//! The errors a user sees for a profile that cannot be loaded or resolved, each naming what is
//! wrong and what to do, and the helpers the resolver's steps make them with.

use std::path::PathBuf;

use super::builtin::builtin_names;

/// Appended to a value that came from a flag, so the error names where it came from.
pub(crate) const FROM_CLI: &str = " (from the command line)";

/// A key whose value is out of its range.
pub(super) fn invalid(key: &str, value: String, allowed: String) -> ProfileError {
    ProfileError::Invalid {
        key: key.to_string(),
        value,
        allowed,
    }
}

/// `value` of `key`, when it lies in `low..=high`; else the error that gives the range followed
/// by `note` (a unit in parentheses, or what else bounds it).
pub(super) fn in_range<T>(
    key: &str,
    value: T,
    (low, high): (T, T),
    note: &str,
) -> Result<T, ProfileError>
where
    T: Copy + PartialOrd + std::fmt::Display,
{
    if (low..=high).contains(&value) {
        Ok(value)
    } else {
        Err(invalid(
            key,
            value.to_string(),
            format!("{low}..={high}{note}"),
        ))
    }
}

/// A CPU key that cannot be satisfied on this machine.
pub(crate) fn cpu_error(key: &str, message: String) -> ProfileError {
    ProfileError::Cpu {
        key: key.to_string(),
        message,
    }
}

/// A profile that cannot be loaded or resolved. Every message names what is wrong and what to do.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("cannot read profile {}: {source}; check the path, or give a built-in name ({})",
        .path.display(), builtin_names().join(", "))]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot read profile {error}; check the path, or give a built-in name ({})",
        builtin_names().join(", "))]
    Input {
        // Not a `source`: its text is already in the message, once.
        error: rtsoak_sys::input::InputError,
    },
    #[error("no profile named `{name}`: the built-in and installed (in {}) profiles are {}; give \
        one of them or a path to a .toml file", .installed_dir.display(), .known.join(", "))]
    UnknownBuiltin {
        name: String,
        known: Vec<String>,
        /// Where installed profiles were looked for.
        installed_dir: PathBuf,
    },
    #[error("refusing the installed profile {}: {why}, so another user could choose what rtsoak \
        runs as root; make it and its directories root's and not writable by group or others \
        (chown root: and chmod go-w)", .path.display())]
    UntrustedInstalled { path: PathBuf, why: String },
    #[error(
        "cannot parse profile {name}: {message}\nfix the profile; profiles/README.md lists \
        every key with its unit and allowed values"
    )]
    Toml { name: String, message: String },
    #[error(
        "profile key `{key}` = {value} is not allowed: expected {allowed}; change the \
        profile or the command-line flag that sets it"
    )]
    Invalid {
        key: String,
        value: String,
        allowed: String,
    },
    #[error("profile key `{key}`: {message}")]
    Cpu { key: String, message: String },
    #[error("unknown transport `{name}`: known transports are {}; name one of them, or leave \
        `run.transports` empty to run them all", .known.join(", "))]
    UnknownTransport { name: String, known: Vec<String> },
}

impl From<rtsoak_sys::input::InputError> for ProfileError {
    fn from(error: rtsoak_sys::input::InputError) -> Self {
        ProfileError::Input { error }
    }
}
