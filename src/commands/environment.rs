//! The environment rtsoak reads, checked before any command runs: a variable that no longer
//! does anything is refused rather than trusted to (a nightly unit that still sets it would
//! otherwise believe it is in effect).
//!
//! Owns: the list of retired variables. rtsoak itself reads one other `RTSOAK_*` variable,
//! `RTSOAK_CARGO_RUN`, only to word its advice (`invocation`); the test suite reads
//! `RTSOAK_CI`; docs/cli.md lists them all.

use rtsoak_sys::cpu_lock::RETIRED_LOCK_DIR_ENV;

/// A variable of the environment that rtsoak refuses: a usage error (exit 2).
#[derive(Debug, thiserror::Error)]
#[error(
    "{name} is set, but it is no longer used: {why}. Remove it from the environment (a \
     systemd unit's Environment=, a shell profile) and run again"
)]
pub struct EnvironmentError {
    /// The variable.
    pub(crate) name: &'static str,
    /// Why it no longer applies.
    pub(crate) why: &'static str,
}

/// Refuse the variables rtsoak no longer reads, whatever their value (empty included).
pub(crate) fn check() -> Result<(), EnvironmentError> {
    if std::env::var_os(RETIRED_LOCK_DIR_ENV).is_some() {
        return Err(EnvironmentError {
            name: RETIRED_LOCK_DIR_ENV,
            why: "the RT CPU locks are abstract unix sockets and have no files to move",
        });
    }
    Ok(())
}
