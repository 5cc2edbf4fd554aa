//! The `exec` action: a command given as an argv, run the way the external noise command is
//! (`launch::external`): its program found and checked once before the first run
//! (`launch::program`: never a `PATH` search as root, never a shell), started under rtsoak's
//! noise init in a PID namespace of its own, pinned off the RT CPUs, with `PATH` set to the
//! system's directories as root, its output appended to `actions.log` in the result directory.
//! It and every process it starts die with rtsoak however rtsoak dies.
//!
//! A command still running at the timeout is stopped: SIGTERM to its process group (the init
//! passes it on to the whole tree), SIGKILL [`KILL_GRACE_NS`] later (the init's death ends the
//! namespace). One command per action runs at a time: a firing while it runs is `busy`.
//!
//! Owns: starting, watching and stopping one action's command. Never blocks the coordinator
//! beyond the init's start report, except in [`Exec::wait`] (the end, or a run's end).

use std::fs::File;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use crate::launch::external::{self, External};
use rtsoak_record::result::actions::ActionStatus;
use rtsoak_sys::clock::now_ns;

/// How long a command gets to end after its SIGTERM before it is killed.
pub(super) const KILL_GRACE_NS: u64 = 2_000_000_000;
/// How often [`Exec::wait`] looks.
const WAIT_STEP: Duration = Duration::from_millis(5);

/// One `exec` action: its checked program, its argv and the command now running, if one is.
pub(super) struct Exec {
    program: PathBuf,
    argv: Vec<String>,
    running: Option<Running>,
}

/// A started command.
struct Running {
    external: External,
    started_ns: u64,
    deadline_ns: u64,
    /// When it was sent SIGTERM for its timeout.
    terminated_ns: Option<u64>,
}

/// How a command ended, once it has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Ended {
    pub(crate) status: ActionStatus,
    pub(crate) duration_ns: u64,
    pub(crate) exit_code: Option<i32>,
    pub(crate) exit_signal: Option<i32>,
    pub(crate) error: Option<String>,
}

impl Exec {
    /// The action running `argv` through `program` (found and checked already).
    pub(super) fn new(program: PathBuf, argv: Vec<String>) -> Self {
        Exec {
            program,
            argv,
            running: None,
        }
    }

    /// Whether a command of this action is still running.
    pub(super) fn busy(&self) -> bool {
        self.running.is_some()
    }

    /// Start the command (the action began at `started_ns`), output to `log`, pinned to
    /// `cpus`, stopped if it runs longer than `timeout_ns`: its pid, or why it could not start.
    pub(super) fn start(
        &mut self,
        log: &File,
        cpus: &[usize],
        timeout_ns: u64,
        started_ns: u64,
    ) -> Result<i32, String> {
        let external = external::start(&self.program, &self.argv, log, cpus)
            .map_err(|error| rtsoak_record::text::printable(&format!("{error:#}")).into_owned())?;
        let pid = external.pid;
        self.running = Some(Running {
            external,
            started_ns,
            deadline_ns: started_ns.saturating_add(timeout_ns),
            terminated_ns: None,
        });
        Ok(pid)
    }

    /// Look at the running command once (at `now_ns`): how it ended, if it has, after stopping
    /// it if its time is up.
    pub(super) fn poll(&mut self, now_ns: u64) -> Option<Ended> {
        let running = self.running.as_mut()?;
        if let Ok(Some(_)) = running.external.init.try_wait() {
            let ended = running.ended(now_ns);
            self.running = None;
            return Some(ended);
        }
        match running.terminated_ns {
            None if now_ns >= running.deadline_ns => {
                running.signal(Signal::SIGTERM);
                running.terminated_ns = Some(now_ns);
            }
            Some(at_ns) if now_ns >= at_ns + KILL_GRACE_NS => {
                running.signal(Signal::SIGKILL);
                let _ = running.external.init.kill();
                let _ = running.external.init.wait();
                let ended = running.ended(now_ns);
                self.running = None;
                return Some(ended);
            }
            _ => {}
        }
        None
    }

    /// Wait for the running command to end, stopping it at its deadline, or at once with
    /// `now`; how it ended (`None` if none was running).
    pub(super) fn wait(&mut self, now: bool) -> Option<Ended> {
        if now && let Some(running) = self.running.as_mut() {
            running.deadline_ns = running.deadline_ns.min(now_ns());
        }
        loop {
            self.running.as_ref()?;
            if let Some(ended) = self.poll(now_ns()) {
                return Some(ended);
            }
            std::thread::sleep(WAIT_STEP);
        }
    }
}

impl Running {
    /// Signal the command's process group (its init's: the init passes a SIGTERM on).
    fn signal(&self, signal: Signal) {
        let _ = killpg(Pid::from_raw(self.external.init.id() as i32), signal);
    }

    /// How the command ended, its init having ended at `now_ns`.
    fn ended(&mut self, now_ns: u64) -> Ended {
        let status = self.external.command_status();
        let timeout = self.terminated_ns.map(|at_ns| {
            let seconds = (at_ns - self.started_ns) as f64 / 1e9;
            if now_ns >= at_ns + KILL_GRACE_NS {
                format!(
                    "still running {seconds:.1} s after it started: stopped with SIGTERM, then \
                     killed {} s later",
                    KILL_GRACE_NS / 1_000_000_000
                )
            } else {
                format!("still running {seconds:.1} s after it started: stopped with SIGTERM")
            }
        });
        let no_status = "its init ended without saying how the command ended".to_string();
        Ended {
            status: match (&timeout, status) {
                (Some(_), _) => ActionStatus::TimedOut,
                (None, Some(_)) => ActionStatus::Done,
                (None, None) => ActionStatus::Failed,
            },
            duration_ns: now_ns.saturating_sub(self.started_ns),
            exit_code: status.and_then(|s| s.code()),
            exit_signal: status.and_then(|s| s.signal()),
            error: timeout.or_else(|| status.is_none().then_some(no_status)),
        }
    }
}
