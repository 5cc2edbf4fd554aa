//! One boot's measurement, the same on a machine a kexec campaign booted and in a qemu guest:
//! wait for the boot to settle, read the host fingerprint, run the plan's command with its
//! result going into the boot's directory (`result/bench.json` or `result/result.json`) and its
//! output into `command.log`, and say what became of it. A campaign that is stopped meanwhile
//! records nothing: the next `resume` finds the boot interrupted (same boot) or lost.
//!
//! Owns: that sequence. Never decides what comes next.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::command::run_rtsoak;
use super::plan::{CommandKind, SettleSection};
use super::settle::{NotSettled, settle};
use super::state::{Measurement, Outcome};
use crate::store::RESULT_FILE;
use crate::sysinfo::SysRoot;
use rtsoak_measure::coordinator::stop::StopFlag;
use rtsoak_record::bench::BENCH_FILE;
use rtsoak_sys::safe_dir::SafeDir;

/// What one boot's measuring step came to.
pub(crate) enum Measured {
    /// The campaign was stopped: nothing is recorded.
    Stopped,
    /// It ended with this outcome (after this measurement, if it got that far).
    Done(Outcome, Option<Box<Measurement>>),
}

/// What the step needs.
pub(crate) struct Step<'a> {
    /// The settle conditions.
    pub(crate) settle: &'a SettleSection,
    /// The rtsoak command's words.
    pub(crate) command: &'a [String],
    /// What kind of result it saves.
    pub(crate) kind: CommandKind,
    /// The rtsoak binary to run, checked.
    pub(crate) rtsoak: &'a Path,
    /// `systemctl`, where systemd is asked about.
    pub(crate) systemctl: Option<&'a Path>,
    /// The boot's directory, and its path relative to the campaign directory.
    pub(crate) boot_dir: &'a SafeDir,
    /// See `boot_dir`.
    pub(crate) relative_dir: &'a Path,
    /// When the boot's deadline falls.
    pub(crate) until: Instant,
    /// When the boot was loaded, seconds since the epoch (for `DeadlineMissed`).
    pub(crate) loaded_at_s: u64,
}

/// Settle, fingerprint, run the command.
pub(crate) fn measure(
    step: &Step<'_>,
    root: &SysRoot,
    stop: &StopFlag,
) -> anyhow::Result<Measured> {
    let after_s = || super::state::now_s().saturating_sub(step.loaded_at_s);
    let settled = match settle(step.settle, root, step.systemctl, step.until, stop) {
        Ok(settled) => settled,
        Err(NotSettled::Stopped(_)) => return Ok(Measured::Stopped),
        Err(why) => {
            eprintln!("rtsoak campaign: the boot {why}");
            let outcome = if Instant::now() >= step.until {
                Outcome::DeadlineMissed { after_s: after_s() }
            } else {
                Outcome::SettleTimeout
            };
            return Ok(Measured::Done(outcome, None));
        }
    };
    let fingerprint = super::fingerprint::read(root);
    let log = step
        .boot_dir
        .create_file(OsStr::new("command.log"), 0o644)?;
    let output = step.boot_dir.path().join("result");
    let run = run_rtsoak(step.rtsoak, step.command, &output, log, step.until, stop)?;
    if run.stopped {
        return Ok(Measured::Stopped);
    }
    let file = match step.kind {
        CommandKind::Bench => BENCH_FILE,
        CommandKind::Soak => RESULT_FILE,
    };
    let saved = step
        .boot_dir
        .open_entry(OsStr::new("result"))
        .ok()
        .and_then(|dir| dir.entry(OsStr::new(file)))
        .is_some();
    let result: Option<PathBuf> = saved.then(|| step.relative_dir.join("result").join(file));
    let outcome = if saved {
        Outcome::Measured
    } else if run.timed_out {
        Outcome::DeadlineMissed { after_s: after_s() }
    } else {
        Outcome::CommandFailed
    };
    let measurement = Measurement {
        settled,
        fingerprint,
        exit_code: run.exit_code,
        signal: run.signal,
        duration_s: (run.duration_s * 10.0).round() / 10.0,
        result,
    };
    Ok(Measured::Done(outcome, Some(Box::new(measurement))))
}
