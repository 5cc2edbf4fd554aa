//! The noise init: the process that runs the external noise command (`noise.load.external`)
//! for the coordinator, so that the command and every process it starts end with the run, or
//! with the coordinator however it dies. The coordinator starts it confined
//! (`sys::confine`) as `rtsoak-worker external-init PROGRAM ARGV0 ARGS...`, its channel to the
//! coordinator at fd 3.
//!
//! In a PID namespace of its own (the usual case) it is the namespace's init: every orphan of
//! the command's tree becomes its child, it dies with the coordinator (`PR_SET_PDEATHSIG` =
//! SIGKILL, set before it was executed), and when it dies the kernel SIGKILLs every process of
//! the namespace. Where the kernel gave no namespace, it makes itself the command's subreaper
//! (orphans still come to it) and asks for SIGUSR1 at the coordinator's death, on which it kills
//! every descendant it finds through /proc's children lists until none is left.
//!
//! What it does:
//! 1. starts PROGRAM (resolved and checked by the coordinator: never a `PATH` search, never a
//!    shell) with ARGV, its stdout and stderr (the run's `external-noise.log`) and its
//!    environment plus `RTSOAK_NOISE_OWNER=TOKEN` (and, as root, `PATH` set to the system's
//!    directories, so that what the command itself runs by name is never found where another
//!    user could plant it), listening on `@rtsoak-noise-TOKEN` for as long as it lives, and
//!    tells the coordinator the command's pid ([`Report::Started`]);
//! 2. reaps whatever ends;
//! 3. on SIGTERM, SIGINT or SIGHUP (the coordinator's stop) sends SIGTERM on to every process it
//!    started, waits for the command, kills whatever is left, and tells the coordinator how the
//!    command ended ([`Report::Ended`]);
//! 4. does the same by itself once nothing it started is left.
//!
//! Only where it has no namespace and is itself SIGKILLed can a process of the command outlive
//! it: the next run finds those by their `RTSOAK_NOISE_OWNER` whose socket nobody listens on any
//! more, and kills them (`coordinator::noise::leftovers`).
//!
//! Owns: the external command's process tree. Never touches a process it did not start.

use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;

use nix::errno::Errno;
use nix::sys::signal::{SigSet, Signal, kill};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;

use rtsoak_sys::confine::{CHANNEL_FD, Report};
use rtsoak_sys::{inherited, spawn};

/// The argument that makes the worker binary the noise init.
pub(crate) const ARG: &str = "external-init";
/// The variable every process of the command's tree carries (unless it clears its
/// environment): the token of the init that owns it.
pub(crate) const OWNER_VARIABLE: &str = "RTSOAK_NOISE_OWNER";
/// The owner's abstract socket is this prefix and the token.
pub(crate) const OWNER_SOCKET_PREFIX: &str = "rtsoak-noise-";
/// How long the command gets to end after a stop before the init kills its tree: less than
/// the coordinator's own grace (`coordinator::noise`, 10 s), so that the init, not the
/// coordinator's SIGKILL, ends it, and finds every process of it even without a namespace.
pub(crate) const STOP_GRACE_S: u32 = 8;

/// The init's arguments (PROGRAM ARGV0 ARGS...), if this process was started as the init.
pub(crate) fn invoked() -> Option<Vec<OsString>> {
    let mut args = std::env::args_os().skip(1).peekable();
    // `rtsoak worker external-init ...` where no worker binary is installed.
    if args.peek().is_some_and(|arg| arg == "worker") {
        args.next();
    }
    (args.next()? == ARG).then(|| args.collect())
}

/// Run as the noise init with `args` (PROGRAM ARGV0 ARGS...); returns the exit code.
pub(crate) fn main(args: &[OsString]) -> i32 {
    let Some(channel) = inherited::take(CHANNEL_FD) else {
        eprintln!(
            "rtsoak-worker {ARG}: fd {CHANNEL_FD} is not open: the noise init is started by the \
             coordinator (`rtsoak`), never by hand"
        );
        return 1;
    };
    let mut channel = UnixStream::from(channel);
    let [program, argv @ ..] = args else {
        eprintln!("rtsoak-worker {ARG}: no command to run");
        return 1;
    };
    let waited = waited_signals();
    if waited.thread_block().is_err() || set_close_on_exec(&channel).is_err() {
        return 1;
    }
    let namespace = nix::unistd::getpid() == Pid::from_raw(1);
    if !namespace {
        // Orphans of the command's tree come here, and the coordinator's death is a signal
        // this process can act on (SIGKILL, set before exec, could not be acted on).
        let _ = nix::sys::prctl::set_child_subreaper(true);
        let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGUSR1);
    }
    // The coordinator may have died before the death signal was asked for.
    if coordinator_gone(&channel) {
        return 1;
    }
    let token = rtsoak_sys::random::hex_token();
    let _owner = rtsoak_sys::cpu_lock::bind_abstract(&format!("{OWNER_SOCKET_PREFIX}{token}"));
    let argv: Vec<&OsStr> = argv.iter().map(OsString::as_os_str).collect();
    let system_path = crate::launch::program::SYSTEM_DIRS.join(":");
    let mut environment = vec![(OsStr::new(OWNER_VARIABLE), OsStr::new(&token))];
    if nix::unistd::geteuid().is_root() {
        // What the command runs by a bare name (`sh -c "stress-ng ..."`) is looked up where
        // root's own external program is (`launch::program`), never in the `PATH` root was
        // started with: a directory there that another user can write, or an empty entry (the
        // working directory), would let that user choose what runs as root.
        environment.push((OsStr::new("PATH"), OsStr::new(&system_path)));
    }
    let command = match spawn::spawn_command(Path::new(program), &argv, &environment) {
        Ok(command) => command,
        Err(error) => {
            send(&mut channel, Report::NotStarted(error.errno as i32));
            return 1;
        }
    };
    let tree = Tree { namespace };
    send(
        &mut channel,
        Report::Started(tree.outer_pid(command.id() as i32)),
    );
    let status = tree.supervise(Pid::from_raw(command.id() as i32), &waited);
    if let Some(status) = status {
        send(&mut channel, Report::Ended(status));
    }
    0
}

/// The signals the init waits for (blocked, and taken with `sigwait`).
fn waited_signals() -> SigSet {
    let mut set = SigSet::empty();
    for signal in [
        Signal::SIGCHLD,
        Signal::SIGTERM,
        Signal::SIGINT,
        Signal::SIGHUP,
        Signal::SIGUSR1,
        Signal::SIGALRM,
    ] {
        set.add(signal);
    }
    set
}

fn set_close_on_exec(channel: &UnixStream) -> nix::Result<libc::c_int> {
    use nix::fcntl::{FcntlArg, FdFlag, fcntl};
    fcntl(channel, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC))
}

/// True when the coordinator's end of the channel is closed (it died).
fn coordinator_gone(channel: &UnixStream) -> bool {
    let mut byte = [0u8; 1];
    let _ = channel.set_nonblocking(true);
    let gone = matches!((&*channel).read(&mut byte), Ok(0));
    let _ = channel.set_nonblocking(false);
    gone
}

fn send(channel: &mut UnixStream, report: Report) {
    let _ = channel.write_all(&report.to_bytes());
}

/// The command's process tree, as the init sees it.
struct Tree {
    /// The init is its PID namespace's init.
    namespace: bool,
}

impl Tree {
    /// Wait for signals until the command's tree is gone or the coordinator stops it; the
    /// command's raw wait status, once it ended.
    fn supervise(&self, command: Pid, waited: &SigSet) -> Option<i32> {
        let mut ended = None;
        let mut stopping = false;
        loop {
            match waited.wait() {
                Ok(Signal::SIGCHLD) => {
                    if !reap(command, &mut ended) {
                        return ended;
                    }
                }
                Ok(Signal::SIGUSR1) => {
                    // The coordinator died (no namespace to end the tree): end it here.
                    self.signal_all(Signal::SIGKILL);
                    return ended;
                }
                Ok(Signal::SIGALRM) if stopping => {
                    // The command ignored the stop: ended by SIGKILL, as it would have been.
                    self.signal_all(Signal::SIGKILL);
                    return ended;
                }
                Ok(Signal::SIGTERM | Signal::SIGINT | Signal::SIGHUP) if !stopping => {
                    stopping = true;
                    if ended.is_none() {
                        self.signal_all(Signal::SIGTERM);
                        nix::unistd::alarm::set(STOP_GRACE_S);
                    }
                }
                Ok(_) | Err(_) => {}
            }
            if stopping && ended.is_some() {
                self.signal_all(Signal::SIGKILL);
                return ended;
            }
        }
    }

    /// Send `signal` to every process of the command's tree. SIGKILL: and reap them until none
    /// is left (outside a namespace, a process that forks while its tree is being killed has its
    /// children come to the init, and they are killed on the next turn).
    fn signal_all(&self, signal: Signal) {
        if self.namespace {
            // Every process of this PID namespace but the init: the command's whole tree.
            let _ = kill(Pid::from_raw(-1), signal);
        } else {
            for pid in descendants(std::process::id()) {
                let _ = kill(Pid::from_raw(pid as i32), signal);
            }
        }
        if signal != Signal::SIGKILL {
            return;
        }
        loop {
            match waitpid(None, None) {
                Err(Errno::ECHILD) => return,
                Err(Errno::EINTR) | Ok(_) => {}
                Err(_) => return,
            }
            if !self.namespace {
                for pid in descendants(std::process::id()) {
                    let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
                }
            }
        }
    }

    /// The command's pid as the coordinator sees it: its own where there is no namespace, else
    /// the init's only child as /proc (the coordinator's) lists it.
    fn outer_pid(&self, pid: i32) -> i32 {
        if !self.namespace {
            return pid;
        }
        let outer = std::fs::read_link("/proc/self")
            .ok()
            .and_then(|link| link.to_str()?.parse::<u32>().ok());
        outer.map_or(0, |init| {
            children(init)
                .into_iter()
                .next()
                .map_or(init as i32, |child| child as i32)
        })
    }
}

/// Reap every child that ended, noting the command's raw wait status; false once no child is
/// left.
fn reap(command: Pid, ended: &mut Option<i32>) -> bool {
    loop {
        match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::Exited(pid, code)) => {
                if pid == command {
                    *ended = Some((code & 0xff) << 8);
                }
            }
            Ok(WaitStatus::Signaled(pid, signal, core)) => {
                if pid == command {
                    *ended = Some(signal as i32 | if core { 0x80 } else { 0 });
                }
            }
            Ok(WaitStatus::StillAlive) => return true,
            Ok(_) | Err(Errno::EINTR) => {}
            Err(_) => return false,
        }
    }
}

/// The children of `pid`, every thread's, as /proc lists them.
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|list| {
            list.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// Every process below `pid`.
fn descendants(pid: u32) -> BTreeSet<u32> {
    let mut found = BTreeSet::new();
    let mut todo = vec![pid];
    while let Some(parent) = todo.pop() {
        for child in children(parent) {
            if found.insert(child) {
                todo.push(child);
            }
        }
    }
    found
}
