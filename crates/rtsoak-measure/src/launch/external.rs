//! Starting an external command (the external noise command, an `exec` action's): through the
//! noise init (`noise::external_init`, the worker binary in another role), itself started
//! confined (`sys::confine`: the init of a PID namespace of its own, dying with the
//! coordinator), so that the command and every process it starts end with the run, or with the
//! coordinator however it dies.
//!
//! Owns: starting the init and reading what it says. Never signals the command itself (the
//! coordinator signals the init's process group; the init ends the command's tree).

use std::fs::File;
use std::io::Read;
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context;

use crate::noise::external_init;
use rtsoak_sys::confine::{Confinement, Report, spawn_confined};
use rtsoak_sys::spawn::Process;

/// How long the init gets to start the command: milliseconds, unless the machine is swamped.
const START_TIMEOUT: Duration = Duration::from_secs(10);

/// The external command's init, started.
pub(crate) struct External {
    /// The init (the leader of the process group the command starts in).
    pub(crate) init: Process,
    /// The command's pid, as this process sees it.
    pub(crate) pid: i32,
    channel: UnixStream,
}

/// Start the external command `argv` (its program `program`, found and checked before the run:
/// `launch::program`) through its init, output to `log`, pinned to `cpus`.
pub(crate) fn start(
    program: &std::path::Path,
    argv: &[String],
    log: &File,
    cpus: &[usize],
) -> anyhow::Result<External> {
    let (init, init_args) = super::worker_binary::worker_executable()?;
    let mut init_argv: Vec<&std::ffi::OsStr> = vec![init.as_os_str()];
    init_argv.extend(init_args.iter().map(std::ffi::OsStr::new));
    init_argv.push(external_init::ARG.as_ref());
    init_argv.push(program.as_os_str());
    init_argv.extend(argv.iter().map(std::ffi::OsStr::new));
    let confined = spawn_confined(init, &init_argv, log.as_fd(), cpus)
        .context("starting the external command's init")?;
    if let Confinement::None(errno) = confined.confinement {
        warn_unconfined(errno);
    }
    let mut external = External {
        init: confined.process,
        pid: 0,
        channel: confined.channel,
    };
    external.channel.set_read_timeout(Some(START_TIMEOUT))?;
    let started = read_report(&mut external.channel);
    let _ = external.channel.set_nonblocking(true);
    match started {
        Some(Report::Started(pid)) => {
            external.pid = pid;
            Ok(external)
        }
        other => {
            let _ = external.init.kill();
            let _ = external.init.wait();
            let why = match other {
                Some(Report::ExecFailed(errno) | Report::NotStarted(errno)) => {
                    nix::errno::Errno::from_raw(errno).to_string()
                }
                _ => "its init said nothing".to_string(),
            };
            anyhow::bail!("starting {argv:?}: {why}")
        }
    }
}

impl External {
    /// How the command ended, as its init reported it (once the init has ended): `None` if the
    /// init did not say (it was killed, or killed the command after the stop's grace time).
    pub(crate) fn command_status(&mut self) -> Option<ExitStatus> {
        match read_report(&mut self.channel) {
            Some(Report::Ended(status)) => Some(ExitStatus::from_raw(status)),
            _ => None,
        }
    }
}

/// The next report on `channel`, if one arrives whole.
fn read_report(channel: &mut UnixStream) -> Option<Report> {
    let mut bytes = [0; Report::BYTES];
    channel.read_exact(&mut bytes).ok()?;
    Report::from_bytes(bytes)
}

/// Say once per invocation that the kernel gave the command no PID namespace, and what that
/// means.
fn warn_unconfined(errno: nix::errno::Errno) {
    static SAID: AtomicBool = AtomicBool::new(false);
    if SAID.swap(true, Ordering::Relaxed) {
        return;
    }
    eprintln!(
        "Note: the kernel refused the external noise command a PID namespace of its own \
         ({errno}: user namespaces off for ordinary users, or a sandbox forbidding namespaces). \
         It runs under rtsoak's noise init, which kills every process of it it can find when \
         the run ends or rtsoak dies; only if that init is SIGKILLed too do they outlive it, \
         until the next run ends them."
    );
}
