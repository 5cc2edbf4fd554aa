//! The programs a campaign starts, as root: rtsoak itself (the boot's command), `systemctl`
//! and qemu. Each is named by an absolute path, never found through `PATH`, and checked before
//! it runs as the worker binary is (`launch::worker_binary`): a regular file, not a symlink,
//! owned by root or this user, writable by no one else, in a directory root may trust.
//!
//! The boot's command runs in a process group of its own, dies with the campaign (parent death
//! signal), writes its output into the boot's log, and is stopped at the boot's deadline (or
//! when the campaign is stopped): SIGTERM first, so rtsoak saves what it measured marked
//! interrupted, then SIGKILL to the group.
//!
//! Owns: checking, starting, waiting for and stopping those programs. Never reads their
//! results.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use rtsoak_analysis::campaign::sequence::Role;
use rtsoak_measure::coordinator::stop::StopFlag;
use rtsoak_measure::launch::worker_binary::refusal;
use rtsoak_sys::safe_dir::{Kind, SafeDir};

/// How long a stopped command has to save its result before it is killed.
const GRACE: Duration = Duration::from_secs(30);
/// How often a running program is looked at.
const POLL: Duration = Duration::from_millis(200);

/// `path`, if it may be run (see the module's comment); a binary replaced while it runs
/// (`/proc/self/exe` reads `PATH (deleted)`) is checked at its path, which now holds the new
/// one.
pub(crate) fn checked_program(path: &Path) -> anyhow::Result<PathBuf> {
    let shown = path.display().to_string();
    let path = PathBuf::from(shown.strip_suffix(" (deleted)").unwrap_or(&shown));
    anyhow::ensure!(
        path.is_absolute(),
        "refusing to run {}: give an absolute path (rtsoak never searches PATH)",
        path.display()
    );
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        anyhow::bail!("refusing to run {}: it names no file", path.display());
    };
    let dir = SafeDir::open(dir)
        .with_context(|| format!("refusing to run {}: its directory", path.display()))?;
    let stat = dir
        .stat_entry(name)
        .with_context(|| format!("cannot run {}", path.display()))?;
    if let Some(why) = refusal(Kind::of(&stat), stat.st_uid, stat.st_mode) {
        anyhow::bail!(
            "refusing to run {} as root: {why}; make it root's and writable by no one else",
            path.display()
        );
    }
    Ok(path)
}

/// The rtsoak binary running now, checked to be one root may run again.
pub(crate) fn this_rtsoak() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("finding the running rtsoak binary")?;
    checked_program(&exe)
}

/// The first of `candidates` that exists, checked.
pub(crate) fn first_program(candidates: &[&str]) -> anyhow::Result<PathBuf> {
    let found = candidates
        .iter()
        .find(|c| Path::new(c).exists())
        .with_context(|| format!("none of {} exists", candidates.join(", ")))?;
    checked_program(Path::new(found))
}

/// How a program ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Finished {
    /// It exited (or was killed by a signal: `code` none).
    Exited {
        /// Its exit code.
        code: Option<i32>,
        /// What it wrote on stdout (at most 64 KiB).
        stdout: String,
    },
    /// It ran past its time and was killed.
    TimedOut,
}

/// Run `program` with `args`, its stdout captured and stderr ours, killing it at `until`.
pub(crate) fn run_program(
    program: &Path,
    args: &[&str],
    until: Instant,
) -> anyhow::Result<Finished> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {}", program.display()))?;
    loop {
        if let Some(status) = child.try_wait()? {
            let mut stdout = String::new();
            if let Some(out) = child.stdout.as_mut() {
                let _ = out.take(64 << 10).read_to_string(&mut stdout);
            }
            return Ok(Finished::Exited {
                code: status.code(),
                stdout,
            });
        }
        if Instant::now() >= until {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(Finished::TimedOut);
        }
        std::thread::sleep(POLL);
    }
}

/// How the boot's command ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CommandRun {
    /// Its exit code, if it exited.
    pub(crate) exit_code: Option<i32>,
    /// The signal that ended it, if one did.
    pub(crate) signal: Option<i32>,
    /// Seconds it ran.
    pub(crate) duration_s: f64,
    /// It was stopped at the deadline.
    pub(crate) timed_out: bool,
    /// It was stopped because the campaign was.
    pub(crate) stopped: bool,
}

/// Run rtsoak (`exe`, checked) with the plan's `args`, `--quiet` and `--output output_dir`,
/// its output appended to `log`; stop it at `until` or when `stop` is set.
pub(crate) fn run_rtsoak(
    exe: &Path,
    args: &[String],
    output_dir: &Path,
    log: std::fs::File,
    until: Instant,
    stop: &StopFlag,
) -> anyhow::Result<CommandRun> {
    let mut command = Command::new(exe);
    command
        .args(args)
        .arg("--quiet")
        .arg("--output")
        .arg(output_dir);
    supervise(command, log, until, stop)
}

/// Start `command` (its stdout and stderr into `log`) in a process group of its own that dies
/// with this process, and wait for it; at `until`, or when `stop` is set, SIGTERM to the group,
/// and SIGKILL after a grace period.
pub(crate) fn supervise(
    mut command: Command,
    log: std::fs::File,
    until: Instant,
    stop: &StopFlag,
) -> anyhow::Result<CommandRun> {
    command
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log);
    let cpus = nix::sched::sched_getaffinity(Pid::from_raw(0))?;
    rtsoak_sys::spawn::own_group_pinned(&mut command, cpus);
    let started = Instant::now();
    let mut child = command
        .spawn()
        .with_context(|| format!("starting {}", command.get_program().to_string_lossy()))?;
    let group = Pid::from_raw(child.id() as i32);
    let mut stopping: Option<Instant> = None;
    let (mut timed_out, mut stopped) = (false, false);
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        let now = Instant::now();
        match stopping {
            None if now >= until || stop.is_set() => {
                timed_out = now >= until;
                stopped = !timed_out;
                let _ = killpg(group, Signal::SIGTERM);
                stopping = Some(now);
            }
            Some(since) if now.duration_since(since) > GRACE => {
                let _ = killpg(group, Signal::SIGKILL);
            }
            _ => {}
        }
        std::thread::sleep(POLL);
    };
    use std::os::unix::process::ExitStatusExt;
    Ok(CommandRun {
        exit_code: status.code(),
        signal: status.signal(),
        duration_s: started.elapsed().as_secs_f64(),
        timed_out,
        stopped,
    })
}

/// A boot's directory, relative to the campaign's: `boots/03-child-0` (planned boot 3, the
/// child, try 0).
pub(crate) fn boot_dir(seq: usize, role: Role, attempt: u32) -> PathBuf {
    PathBuf::from("boots").join(format!("{seq:02}-{}-{attempt}", role.name()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_by_name_or_in_a_directory_others_write_is_refused() {
        let text = checked_program(Path::new("systemctl"))
            .unwrap_err()
            .to_string();
        assert!(text.contains("absolute path"), "{text}");
        // /bin/sh is a symlink (to dash): refused; what it points to is a program.
        let text = format!("{:#}", checked_program(Path::new("/bin/sh")).unwrap_err());
        assert!(text.contains("symlink"), "{text}");
        let sh = std::fs::canonicalize("/bin/sh").unwrap();
        assert_eq!(checked_program(&sh).unwrap(), sh);
    }

    #[test]
    fn a_program_is_killed_at_its_time_and_its_output_kept_otherwise() {
        let soon = Instant::now() + Duration::from_secs(5);
        let said =
            run_program(Path::new("/bin/sh"), &["-c", "echo running; exit 1"], soon).unwrap();
        assert_eq!(
            said,
            Finished::Exited {
                code: Some(1),
                stdout: "running\n".into()
            }
        );
        let now = Instant::now() + Duration::from_millis(300);
        assert_eq!(
            run_program(Path::new("/bin/sh"), &["-c", "sleep 10"], now).unwrap(),
            Finished::TimedOut
        );
    }

    #[test]
    fn the_boots_command_is_stopped_at_its_deadline_with_sigterm() {
        let log = tempfile::tempfile().unwrap();
        let dir = tempfile::tempdir().unwrap();
        // A stand-in for rtsoak that ignores its flags and sleeps; SIGTERM ends it.
        let script = dir.path().join("fake-rtsoak");
        std::fs::write(&script, "#!/bin/sh\nsleep 30\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let until = Instant::now() + Duration::from_millis(400);
        let ran = run_rtsoak(&script, &[], dir.path(), log, until, &StopFlag::default()).unwrap();
        assert!(ran.timed_out && !ran.stopped, "{ran:?}");
        assert_eq!(ran.signal, Some(libc::SIGTERM));
        assert!(ran.duration_s < 10.0, "{ran:?}");
    }
}
