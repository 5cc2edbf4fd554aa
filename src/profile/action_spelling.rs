//! How an action is spelled on the command line (`--on-threshold ACTION`, `--on-end ACTION`) and
//! in a profile's `[actions]` lists, and the one parser both use:
//!
//! - `trace`: snapshot the trace buffer;
//! - `signal=NUM|NAME,pid=PID`: a signal by number (`10`), name (`SIGUSR1`, `USR1`) or real-time
//!   offset (`RTMIN+2`, `RTMAX-1`), to a process by pid or `pid=parent` (rtsoak's parent);
//! - `exec=PROGRAM[,ARG...]`: an argv split at every comma, or `exec=["PROGRAM","ARG",...]`, a
//!   JSON array of strings, for arguments with commas or empty ones (a value starting with `[`
//!   is always the JSON form; run a program named `[` by its path);
//! - `continue`: record the firing and go on.
//!
//! Strict: every other spelling is refused naming what is wrong and the forms allowed.

use std::str::FromStr;

use nix::sys::signal::Signal;
use rtsoak_record::action::Action;

/// The forms, for every error.
const FORMS: &str = "write `trace`, `signal=NUM|NAME,pid=PID`, `exec=PROGRAM,ARG,...` (or \
                     `exec=[\"PROGRAM\",\"ARG\",...]`) or `continue`";

/// The action `text` spells, or what is wrong with it and what to write.
pub(crate) fn parse_action(text: &str) -> Result<Action, String> {
    let (word, value) = match text.split_once('=') {
        Some((word, value)) => (word, Some(value)),
        None => (text, None),
    };
    match (word, value) {
        ("trace", None) => Ok(Action::Trace),
        ("continue", None) => Ok(Action::Continue),
        ("trace" | "continue", Some(_)) => {
            Err(format!("`{word}` takes no value: write `{word}` alone"))
        }
        ("signal", Some(value)) => parse_signal_action(value),
        ("exec", Some(value)) => parse_exec(value).map(|argv| Action::Exec { argv }),
        ("signal" | "exec", None) => Err(format!("`{word}` needs a value: {FORMS}")),
        _ => Err(format!("unknown action `{text}`: {FORMS}")),
    }
}

/// `NUM|NAME,pid=PID` (after `signal=`).
fn parse_signal_action(value: &str) -> Result<Action, String> {
    let mut fields = value.split(',');
    let signal = parse_signal(fields.next().unwrap_or_default())?;
    let pid = match (fields.next(), fields.next()) {
        (Some(field), None) => match field.split_once('=') {
            Some(("pid", pid)) => parse_pid(pid)?,
            _ => {
                return Err(format!(
                    "`signal={value}`: after the signal comes `pid=PID` (or `pid=parent`), \
                     not `{field}`"
                ));
            }
        },
        (None, _) => {
            return Err(format!(
                "`signal={value}` names no process: add `,pid=PID` (or `,pid=parent`)"
            ));
        }
        (Some(_), Some(_)) => {
            return Err(format!(
                "`signal={value}` has more than a signal and a pid: write \
                 `signal=NUM|NAME,pid=PID`"
            ));
        }
    };
    Ok(Action::Signal { signal, pid })
}

/// A signal by number, name (`SIGUSR1`, `usr1`) or real-time offset (`RTMIN+2`).
fn parse_signal(text: &str) -> Result<i32, String> {
    let bad = || {
        format!(
            "`{text}` is not a signal: give a number ({}..={}), a name such as SIGUSR1 or USR1, \
             or RTMIN+N / RTMAX-N",
            1,
            libc::SIGRTMAX()
        )
    };
    if let Ok(number) = text.parse::<i32>() {
        return (1..=libc::SIGRTMAX())
            .contains(&number)
            .then_some(number)
            .ok_or_else(bad);
    }
    let upper = text.to_ascii_uppercase();
    let name = upper.strip_prefix("SIG").unwrap_or(&upper);
    let realtime = |rest: &str, base: i32, sign: i32| {
        let offset = if rest.is_empty() {
            Some(0)
        } else {
            rest.parse::<i32>().ok()
        };
        offset
            .map(|offset| base + sign * offset)
            .filter(|n| (libc::SIGRTMIN()..=libc::SIGRTMAX()).contains(n))
    };
    let found = if let Some(rest) = name.strip_prefix("RTMIN") {
        realtime(rest.strip_prefix('+').unwrap_or(rest), libc::SIGRTMIN(), 1)
    } else if let Some(rest) = name.strip_prefix("RTMAX") {
        realtime(rest.strip_prefix('-').unwrap_or(rest), libc::SIGRTMAX(), -1)
    } else {
        Signal::from_str(&format!("SIG{name}"))
            .ok()
            .map(|s| s as i32)
    };
    found.ok_or_else(bad)
}

/// `PID` or `parent` (after `pid=`): never 0 or a negative number (process groups), init, or
/// rtsoak itself.
fn parse_pid(text: &str) -> Result<i32, String> {
    if text == "parent" {
        return Ok(nix::unistd::getppid().as_raw());
    }
    let pid = text.parse::<i32>().map_err(|_| {
        format!("`pid={text}` is not a process id: give a number such as 1234, or `parent`")
    })?;
    match pid {
        ..=0 => Err(format!(
            "`pid={pid}`: give one process's id (1 and above), never a process group"
        )),
        1 => Err("`pid=1` is init: rtsoak does not signal it; give another process".to_string()),
        pid if pid as u32 == std::process::id() => Err(format!(
            "`pid={pid}` is rtsoak itself: give another process"
        )),
        pid => Ok(pid),
    }
}

/// `PROGRAM[,ARG...]` or a JSON array of strings (after `exec=`).
fn parse_exec(value: &str) -> Result<Vec<String>, String> {
    let argv: Vec<String> = if value.starts_with('[') {
        serde_json::from_str(value).map_err(|error| {
            format!(
                "`exec={value}` starts with `[` but is not a JSON array of strings ({error}): \
                 write exec=[\"PROGRAM\",\"ARG\"], or exec=PROGRAM,ARG"
            )
        })?
    } else {
        let argv: Vec<String> = value.split(',').map(str::to_string).collect();
        if let Some(at) = argv.iter().position(String::is_empty) {
            return Err(format!(
                "`exec={value}` has an empty argument (number {}): drop the extra comma, or \
                 write the argv as a JSON array, exec=[\"PROGRAM\",\"\"], to pass one",
                at + 1
            ));
        }
        argv
    };
    match argv.first() {
        None => Err("`exec=[]` names no program: give at least the program".to_string()),
        Some(program) if program.is_empty() => Err(format!(
            "`exec={value}` names no program: its first word is empty"
        )),
        Some(_) if argv.iter().any(|arg| arg.contains('\0')) => Err(format!(
            "`exec={}` has a NUL byte in an argument, which no argv can hold",
            value.escape_debug()
        )),
        Some(_) => Ok(argv),
    }
}

#[cfg(test)]
#[path = "action_spelling_tests.rs"]
mod tests;
