//! Starting a program that, with everything it starts, dies with this process however this
//! process dies (SIGKILL included): rtsoak's noise init, which runs the external noise command.
//!
//! The program is the init of a PID namespace of its own (`clone(CLONE_NEWPID)`), with
//! `PR_SET_PDEATHSIG` = SIGKILL. When this process dies, by any signal or exit, the kernel kills
//! the init; when a namespace's init dies, the kernel SIGKILLs every process in the namespace,
//! whatever process group or session it moved to and however it double-forked. Root may make a
//! PID namespace; an ordinary user gets one inside a user namespace of their own
//! (`CLONE_NEWUSER`, their uid and gid mapped to themselves), where the kernel lets unprivileged
//! users make them. Where neither is allowed (`user.max_user_namespaces` = 0, a container or a
//! systemd unit that forbids namespaces) the program starts in none ([`Confinement::None`],
//! with the reason), still with the death signal: what it starts is then its own to end (the
//! noise init makes itself their subreaper and kills them, `noise::external_init`).
//!
//! The clone is fork-like (no `CLONE_VM`) in a process that has other threads. The child is a
//! copy with one thread, in which another thread may have held a lock (the allocator's, stdio's)
//! at the moment of the copy: so between the clone and `execve` it makes only system calls, on
//! memory prepared before the clone (argv, environment, fds, CPU set, id maps), and leaves by
//! `execve` or `_exit`. Every signal is blocked in the calling thread around the clone, so no
//! handler of this process runs in the child; the child resets every caught signal to its default
//! and unblocks them all just before `execve`.
//!
//! The death signal follows the thread that made the clone (the kernel sends it when that
//! thread exits): call [`spawn_confined`] from a thread that lives as long as the process (the
//! coordinator's main thread does), as the workers' `posix_spawn` is.
//!
//! In the child: fd 0 is `/dev/null`, 1 and 2 the output given, [`CHANNEL_FD`] its end of a unix
//! stream socket whose other end is [`Confined::channel`] (every other fd of this process is
//! close-on-exec); it is the leader of a process group of its own and pinned to the CPUs given.
//! The channel carries fixed-size [`Report`]s: the child writes [`Report::ExecFailed`] if
//! `execve` fails; the program writes the rest.
//!
//! Owns: the clone and what the child does before `execve`. Never allocates, locks or unwinds
//! in the child.

use std::ffi::{CString, OsStr};
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixStream;
use std::path::Path;

use nix::errno::Errno;
use nix::sys::signal::{SigSet, SigmaskHow, pthread_sigmask};
use nix::unistd::Pid;

use crate::SysError;
use crate::spawn::Process;

/// The child's end of the channel, at this fd number.
pub const CHANNEL_FD: RawFd = 3;

/// Fds are first copied at or above this number in the child, so that moving one onto 0 to 3
/// never overwrites another still to be moved.
const ABOVE_TARGETS: RawFd = 10;

/// Signals on Linux are 1..=64.
const LAST_SIGNAL: i32 = 64;

/// What a confined process is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confinement {
    /// A PID namespace of its own (root).
    PidNamespace,
    /// A user namespace and a PID namespace of its own (an ordinary user).
    UserAndPidNamespace,
    /// No namespace: the kernel refused one, with this errno.
    None(Errno),
}

/// A started confined process.
#[derive(Debug)]
pub struct Confined {
    /// The process (its pid as this process sees it; the leader of its process group).
    pub process: Process,
    /// This side of its channel (close-on-exec).
    pub channel: UnixStream,
    /// What it was started in.
    pub confinement: Confinement,
}

/// A record on the channel: eight bytes, a kind and a value, in this machine's byte order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Report {
    /// `execve` of the program failed, with this errno (written by the child).
    ExecFailed(i32),
    /// The program started its command: the command's pid, as the process that started the
    /// program sees it.
    Started(i32),
    /// The program could not start its command, with this errno.
    NotStarted(i32),
    /// The command ended, with this raw wait status.
    Ended(i32),
}

impl Report {
    /// Bytes of one record.
    pub const BYTES: usize = 8;

    /// The record's bytes.
    pub fn to_bytes(self) -> [u8; Self::BYTES] {
        let (kind, value): (u32, i32) = match self {
            Report::ExecFailed(errno) => (1, errno),
            Report::Started(pid) => (2, pid),
            Report::NotStarted(errno) => (3, errno),
            Report::Ended(status) => (4, status),
        };
        let mut bytes = [0; Self::BYTES];
        bytes[..4].copy_from_slice(&kind.to_ne_bytes());
        bytes[4..].copy_from_slice(&value.to_ne_bytes());
        bytes
    }

    /// The record `bytes` hold, if they hold one.
    pub fn from_bytes(bytes: [u8; Self::BYTES]) -> Option<Report> {
        let kind = u32::from_ne_bytes(bytes[..4].try_into().ok()?);
        let value = i32::from_ne_bytes(bytes[4..].try_into().ok()?);
        Some(match kind {
            1 => Report::ExecFailed(value),
            2 => Report::Started(value),
            3 => Report::NotStarted(value),
            4 => Report::Ended(value),
            _ => return None,
        })
    }
}

/// Everything the child touches, made before the clone.
struct Prepared {
    path: CString,
    /// The strings `argv` and `envp` point into: kept alive with them.
    _strings: Vec<CString>,
    argv: Vec<*const libc::c_char>,
    envp: Vec<*const libc::c_char>,
    null: OwnedFd,
    output: RawFd,
    channel: RawFd,
    cpus: libc::cpu_set_t,
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
}

/// Start `program` with `argv` (its own name first) and this process's environment, confined as
/// the module says, its output to `output`, pinned to `cpus`.
pub fn spawn_confined(
    program: &Path,
    argv: &[&OsStr],
    output: BorrowedFd<'_>,
    cpus: &[usize],
) -> Result<Confined, SysError> {
    let (ours, theirs) = UnixStream::pair().map_err(|e| SysError::from_io("socketpair", &e))?;
    let prepared = prepare(program, argv, output.as_raw_fd(), theirs.as_raw_fd(), cpus)?;
    let euid = nix::unistd::geteuid().as_raw();
    let namespace = if euid == 0 {
        (libc::CLONE_NEWPID, Confinement::PidNamespace)
    } else {
        (
            libc::CLONE_NEWUSER | libc::CLONE_NEWPID,
            Confinement::UserAndPidNamespace,
        )
    };
    let mut blocked = SigSet::empty();
    pthread_sigmask(
        SigmaskHow::SIG_SETMASK,
        Some(&SigSet::all()),
        Some(&mut blocked),
    )
    .map_err(|e| SysError::new("pthread_sigmask", e))?;
    let started = match clone_into(&prepared, namespace.0, namespace.1) {
        Ok(pid) => Ok((pid, namespace.1)),
        Err(errno @ (Errno::EPERM | Errno::EINVAL | Errno::ENOSPC | Errno::EUSERS)) => {
            clone_into(&prepared, 0, Confinement::None(errno))
                .map(|pid| (pid, Confinement::None(errno)))
        }
        Err(errno) => Err(errno),
    };
    let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&blocked), None);
    drop(theirs);
    let (pid, confinement) = started.map_err(|e| SysError::new("clone", e))?;
    Ok(Confined {
        process: Process::started(pid),
        channel: ours,
        confinement,
    })
}

/// Everything the child needs, made now (nothing may be made in the child).
fn prepare(
    program: &Path,
    argv: &[&OsStr],
    output: RawFd,
    channel: RawFd,
    cpus: &[usize],
) -> Result<Prepared, SysError> {
    let c = |bytes: &[u8]| {
        CString::new(bytes.to_vec()).map_err(|_| SysError::new("execve", Errno::EINVAL))
    };
    let path = c(program.as_os_str().as_bytes())?;
    let mut strings = Vec::new();
    for arg in argv {
        strings.push(c(arg.as_bytes())?);
    }
    let argc = strings.len();
    for (name, value) in std::env::vars_os() {
        let mut entry = name.as_bytes().to_vec();
        entry.push(b'=');
        entry.extend_from_slice(value.as_bytes());
        strings.push(c(&entry)?);
    }
    let pointers = |strings: &[CString]| {
        let mut list: Vec<*const libc::c_char> = strings.iter().map(|s| s.as_ptr()).collect();
        list.push(std::ptr::null());
        list
    };
    let (argv, envp) = (pointers(&strings[..argc]), pointers(&strings[argc..]));
    let null = std::fs::OpenOptions::new()
        .read(true)
        .open("/dev/null")
        .map_err(|e| SysError::from_io("open(/dev/null)", &e))?;
    // SAFETY: cpu_set_t is a plain bit array, for which all zeroes is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        if cpu >= libc::CPU_SETSIZE as usize {
            return Err(SysError::new("sched_setaffinity", Errno::EINVAL));
        }
        // SAFETY: `cpu` is below CPU_SETSIZE, checked above, so the bit is inside the set.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    let uid = nix::unistd::geteuid().as_raw();
    let gid = nix::unistd::getegid().as_raw();
    Ok(Prepared {
        path,
        _strings: strings,
        argv,
        envp,
        null: null.into(),
        output,
        channel,
        cpus: set,
        uid_map: format!("{uid} {uid} 1\n").into_bytes(),
        gid_map: format!("{gid} {gid} 1\n").into_bytes(),
    })
}

/// Clone with `flags` (and SIGCHLD at the child's death); the child runs [`child`]. Returns the
/// child's pid, or the errno of a clone that failed.
fn clone_into(
    prepared: &Prepared,
    flags: libc::c_int,
    confinement: Confinement,
) -> Result<Pid, Errno> {
    let flags = libc::c_long::from(flags | libc::SIGCHLD);
    // SAFETY: a fork-like clone: no new stack (the child continues on its copy of this one), no
    // shared memory, no thread-id or TLS pointers (all zero, which is valid for every argument
    // order the architectures use). In the child, `child` runs and never returns; in this
    // process the call returns once, as fork does.
    let pid = unsafe { libc::syscall(libc::SYS_clone, flags, 0usize, 0usize, 0usize, 0usize) };
    match pid {
        0 => {
            let map_ids = confinement == Confinement::UserAndPidNamespace;
            // SAFETY: this is the child of the clone above, which `child` requires.
            unsafe { child(prepared, map_ids) }
        }
        -1 => Err(Errno::last()),
        pid => Ok(Pid::from_raw(pid as libc::pid_t)),
    }
}

/// The child, between the clone and `execve`.
///
/// # Safety
///
/// Call only in the child of a fork-like clone of this process, with `prepared` made before the
/// clone. It makes only system calls (async-signal-safe, as a child of a multi-threaded process
/// must) and never returns.
unsafe fn child(prepared: &Prepared, map_ids: bool) -> ! {
    // SAFETY: each call is a system call wrapper that takes no lock and allocates nothing, made
    // on memory prepared before the clone: `Prepared`'s strings and pointer arrays (terminated
    // by a null pointer), fds that are open, a `cpu_set_t` of its full size, a zeroed
    // `sigaction` and `sigset_t` filled by `sigemptyset`. The child has one thread and its own
    // copy of the memory, so nothing changes them under it.
    unsafe {
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        );
        if map_ids {
            // An ordinary user's new user namespace: their own ids, mapped to themselves, so the
            // program and its command run as who they are (`setgroups` must be denied before
            // an unprivileged gid map). A map that cannot be written leaves the ids unmapped,
            // which changes what the program is told its ids are, not what it may do.
            write_all(c"/proc/self/setgroups", b"deny");
            write_all(c"/proc/self/uid_map", &prepared.uid_map);
            write_all(c"/proc/self/gid_map", &prepared.gid_map);
        }
        libc::setpgid(0, 0);
        libc::sched_setaffinity(
            0,
            std::mem::size_of::<libc::cpu_set_t>(),
            &raw const prepared.cpus,
        );
        let high = |fd: RawFd| libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, ABOVE_TARGETS);
        let (null, output, channel) = (
            high(prepared.null.as_raw_fd()),
            high(prepared.output),
            high(prepared.channel),
        );
        if null < 0 || output < 0 || channel < 0 {
            fail(prepared.channel);
        }
        for (fd, target) in [(null, 0), (output, 1), (output, 2), (channel, CHANNEL_FD)] {
            if libc::dup2(fd, target) < 0 {
                fail(channel);
            }
        }
        let mut default: libc::sigaction = std::mem::zeroed();
        default.sa_sigaction = libc::SIG_DFL;
        for signal in 1..=LAST_SIGNAL {
            let mut old: libc::sigaction = std::mem::zeroed();
            if signal != libc::SIGKILL
                && signal != libc::SIGSTOP
                && libc::sigaction(signal, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction != libc::SIG_IGN
                && old.sa_sigaction != libc::SIG_DFL
            {
                libc::sigaction(signal, &default, std::ptr::null_mut());
            }
        }
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        libc::execve(
            prepared.path.as_ptr(),
            prepared.argv.as_ptr(),
            prepared.envp.as_ptr(),
        );
        fail(CHANNEL_FD)
    }
}

/// Write `bytes` to the existing file `path` in one call (a /proc map file takes one write).
///
/// # Safety
///
/// As [`child`]: system calls only.
unsafe fn write_all(path: &std::ffi::CStr, bytes: &[u8]) {
    // SAFETY: open, write and close on a valid C string and a valid buffer of its length.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd >= 0 {
            libc::write(fd, bytes.as_ptr().cast(), bytes.len());
            libc::close(fd);
        }
    }
}

/// Say why the child could not become the program (the errno of the last call) on `channel`,
/// and exit.
///
/// # Safety
///
/// As [`child`]: system calls only.
unsafe fn fail(channel: RawFd) -> ! {
    let record = Report::ExecFailed(Errno::last_raw()).to_bytes();
    // SAFETY: write of a valid buffer of its length, then _exit, which runs no destructor or
    // atexit handler of the copied process.
    unsafe {
        libc::write(channel, record.as_ptr().cast(), record.len());
        libc::_exit(127)
    }
}

#[cfg(test)]
#[path = "confine_tests.rs"]
mod tests;
