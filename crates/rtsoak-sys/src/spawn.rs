//! Starting a program with chosen fds at fixed numbers, without copying this process:
//! `posix_spawn`, which glibc implements with `CLONE_VM | CLONE_VFORK`, so no page table is
//! copied and nothing is written copy-on-write afterwards. `std::process::Command` places only
//! stdin, stdout and stderr that way; for any other fd it forks. The coordinator starts about
//! fifteen queue-noise workers a second, and forking was a quarter of its CPU time.
//!
//! Owns the spawn and the child's exit status. Never changes the parent's fds or signal state.

use std::ffi::{CString, OsStr, OsString};
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};
use std::os::unix::ffi::OsStringExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;

use nix::errno::Errno;
use nix::sys::signal::{SigSet, Signal, kill};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;

use super::SysError;

/// A started process; like `std::process::Child`, it is not waited for when dropped.
#[derive(Debug)]
pub struct Process {
    pid: Pid,
    status: Option<ExitStatus>,
}

/// Start `program` with `args` (after its own name) and the current environment; stdin and
/// stdout read from and write to `/dev/null`, stderr is ours, and each `(fd, number)` in `fds`
/// is the child's fd `number`. The child starts with no signal blocked and SIGPIPE at its
/// default.
pub fn spawn(
    program: &Path,
    args: &[&str],
    fds: &[(BorrowedFd<'_>, RawFd)],
) -> Result<Process, SysError> {
    let path = c_string(program.as_os_str().to_owned())?;
    let mut argv = vec![path.clone()];
    for arg in args {
        argv.push(c_string(OsString::from(arg))?);
    }
    start(&path, &argv, &environment(&[])?, Stdout::Null, fds)
}

/// Start `program` with `argv` (its name as the caller wants it seen first: a command's own
/// `argv[0]`), the current environment plus `extra`, stdin from `/dev/null`, stdout and stderr
/// ours, no other fd; no signal blocked and SIGPIPE at its default. Never searches `PATH`:
/// `program` is the file run.
pub fn spawn_command(
    program: &Path,
    argv: &[&OsStr],
    extra: &[(&OsStr, &OsStr)],
) -> Result<Process, SysError> {
    let path = c_string(program.as_os_str().to_owned())?;
    let argv = argv
        .iter()
        .map(|arg| c_string(arg.to_os_string()))
        .collect::<Result<Vec<_>, _>>()?;
    start(&path, &argv, &environment(extra)?, Stdout::Ours, &[])
}

/// Where a child's stdout goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stdout {
    Null,
    Ours,
}

fn c_string(text: OsString) -> Result<CString, SysError> {
    CString::new(text.into_vec()).map_err(|_| SysError::new("posix_spawn", Errno::EINVAL))
}

/// `extra`, then this process's environment without the names `extra` sets, as `NAME=value`
/// strings.
fn environment(extra: &[(&OsStr, &OsStr)]) -> Result<Vec<CString>, SysError> {
    let mut envp = Vec::new();
    let pairs = extra
        .iter()
        .map(|(name, value)| (name.to_os_string(), value.to_os_string()))
        .chain(std::env::vars_os().filter(|(name, _)| extra.iter().all(|(n, _)| n != name)));
    for (name, value) in pairs {
        let mut entry = name;
        entry.push("=");
        entry.push(value);
        envp.push(c_string(entry)?);
    }
    Ok(envp)
}

fn start(
    path: &CString,
    argv: &[CString],
    envp: &[CString],
    stdout: Stdout,
    fds: &[(BorrowedFd<'_>, RawFd)],
) -> Result<Process, SysError> {
    let null = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
        .map_err(|e| SysError::from_io("open(/dev/null)", &e))?;

    let failed = |e| SysError::new("posix_spawn_file_actions", e);
    let mut actions = nix::spawn::PosixSpawnFileActions::init().map_err(failed)?;
    actions.add_dup2(null.as_raw_fd(), 0).map_err(failed)?;
    if stdout == Stdout::Null {
        actions.add_dup2(null.as_raw_fd(), 1).map_err(failed)?;
    }
    // Each source goes to a number above every source and target first, then to its target,
    // so a source whose number is another's target is never overwritten before it is moved.
    let above = fds
        .iter()
        .flat_map(|(fd, number)| [fd.as_raw_fd(), *number])
        .chain([null.as_raw_fd(), 2])
        .max()
        .unwrap_or(2)
        + 1;
    for (i, (fd, _)) in fds.iter().enumerate() {
        actions
            .add_dup2(fd.as_raw_fd(), above + i as RawFd)
            .map_err(failed)?;
    }
    for (i, (_, number)) in fds.iter().enumerate() {
        actions
            .add_dup2(above + i as RawFd, *number)
            .map_err(failed)?;
        actions.add_close(above + i as RawFd).map_err(failed)?;
    }

    let failed = |e| SysError::new("posix_spawnattr", e);
    let mut attributes = nix::spawn::PosixSpawnAttr::init().map_err(failed)?;
    attributes
        .set_flags(
            nix::spawn::PosixSpawnFlags::POSIX_SPAWN_SETSIGMASK
                | nix::spawn::PosixSpawnFlags::POSIX_SPAWN_SETSIGDEF,
        )
        .map_err(failed)?;
    attributes.set_sigmask(&SigSet::empty()).map_err(failed)?;
    let mut defaults = SigSet::empty();
    defaults.add(Signal::SIGPIPE);
    attributes.set_sigdefault(&defaults).map_err(failed)?;

    let pid = nix::spawn::posix_spawn(path.as_c_str(), &actions, &attributes, argv, envp)
        .map_err(|e| SysError::new("posix_spawn", e))?;
    Ok(Process { pid, status: None })
}

impl Process {
    /// A child this process started otherwise (`confine`), to be waited for here.
    pub(crate) fn started(pid: Pid) -> Process {
        Process { pid, status: None }
    }

    /// The process id.
    pub fn id(&self) -> u32 {
        self.pid.as_raw() as u32
    }

    /// Its exit status if it has ended (reaping it), without waiting.
    pub fn try_wait(&mut self) -> Result<Option<ExitStatus>, SysError> {
        self.reap(Some(WaitPidFlag::WNOHANG))
    }

    /// Wait for it to end.
    pub fn wait(&mut self) -> Result<ExitStatus, SysError> {
        loop {
            if let Some(status) = self.reap(None)? {
                return Ok(status);
            }
        }
    }

    /// SIGKILL it, unless it has already been reaped.
    pub fn kill(&mut self) -> Result<(), SysError> {
        if self.status.is_some() {
            return Ok(());
        }
        kill(self.pid, Signal::SIGKILL).map_err(|e| SysError::new("kill", e))
    }

    fn reap(&mut self, flags: Option<WaitPidFlag>) -> Result<Option<ExitStatus>, SysError> {
        if let Some(status) = self.status {
            return Ok(Some(status));
        }
        let status = match waitpid(self.pid, flags) {
            // The same raw wait status std's `ExitStatus` wraps, so it prints the same way.
            Ok(WaitStatus::Exited(_, code)) => ExitStatus::from_raw((code & 0xff) << 8),
            Ok(WaitStatus::Signaled(_, signal, core)) => {
                ExitStatus::from_raw(signal as i32 | if core { 0x80 } else { 0 })
            }
            Ok(_) => return Ok(None),
            Err(Errno::EINTR) => return Ok(None),
            Err(e) => return Err(SysError::new("waitpid", e)),
        };
        self.status = Some(status);
        Ok(Some(status))
    }
}

/// Make `command` start in a process group of its own (so it and its children can be signalled
/// together), pinned to `cpus`, and killed if this process dies: the command a kernel campaign
/// runs on each boot, an rtsoak of its own started with `std::process::Command`.
pub fn own_group_pinned(command: &mut std::process::Command, cpus: nix::sched::CpuSet) {
    use nix::unistd::Pid;
    use std::os::unix::process::CommandExt;
    // SAFETY: the hook runs between fork and exec and only makes async-signal-safe system calls
    // (setpgid, prctl, sched_setaffinity) on data prepared before the fork.
    unsafe {
        command.pre_exec(move || {
            nix::unistd::setpgid(Pid::from_raw(0), Pid::from_raw(0))?;
            nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)?;
            nix::sched::sched_setaffinity(Pid::from_raw(0), &cpus)?;
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek};
    use std::os::fd::AsFd;

    #[test]
    fn the_child_finds_each_fd_at_its_number_and_exits_as_std_would_say() {
        // Two files whose numbers may well be each other's targets.
        let mut first = tempfile::tempfile().unwrap();
        let mut second = tempfile::tempfile().unwrap();
        let (a, b) = (first.as_raw_fd(), second.as_raw_fd());
        let script = "printf one > /proc/self/fd/$0 && printf two > /proc/self/fd/$1 && exit 3";
        let mut child = spawn(
            Path::new("/bin/sh"),
            &["-c", script, &b.to_string(), &a.to_string()],
            &[(second.as_fd(), a), (first.as_fd(), b)],
        )
        .unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.to_string(), "exit status: 3");
        assert_eq!(child.try_wait().unwrap(), Some(status), "reaped once, kept");
        let read = |file: &mut std::fs::File| {
            let mut text = String::new();
            file.rewind().unwrap();
            file.read_to_string(&mut text).unwrap();
            text
        };
        // The child's fd `a` was `second`, and its fd `b` was `first`.
        assert_eq!(read(&mut second), "two");
        assert_eq!(read(&mut first), "one");
    }

    #[test]
    fn a_killed_child_reads_as_killed() {
        let mut child = spawn(Path::new("/bin/sleep"), &["10"], &[]).unwrap();
        assert_eq!(child.try_wait().unwrap(), None);
        child.kill().unwrap();
        assert_eq!(child.wait().unwrap().to_string(), "signal: 9 (SIGKILL)");
        child.kill().unwrap();
    }

    #[test]
    fn a_missing_program_is_an_error() {
        assert!(spawn(Path::new("/nonexistent/rtsoak"), &[], &[]).is_err());
    }
}
