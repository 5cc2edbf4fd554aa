//! One rtsoak per RT CPU: two soaks on the same RT CPUs (two nightly timers firing in the same
//! window, a hand run beside a scheduled one) would each measure the other. Before anything runs,
//! `run` and `compare` bind one abstract-namespace unix socket per RT CPU (`\0rtsoak-cpu4`) and
//! hold it until they exit. A name can be bound once (`EADDRINUSE` means held), the kernel
//! releases it when the holder dies however it dies, and it has no file system path, so there is
//! no file another user could plant a symlink or hard link for. A second rtsoak refuses at once,
//! naming the holder, or waits up to a limit.
//!
//! Who holds a CPU is asked of the kernel, not of a note the holder wrote: the waiting side
//! connects to the socket (the holder listens with a backlog and never accepts, so holding takes
//! no thread) and reads `SO_PEERCRED` on its own, not-yet-accepted socket, which gives the
//! listener's pid and uid; its `comm` and `cmdline` come from /proc, escaped before anyone
//! prints them.
//!
//! Abstract names belong to a network namespace: every rtsoak that must exclude the others has
//! to share one (the systemd units do not set `PrivateNetwork=` for that reason).
//!
//! Owns: the lock sockets. Never blocks without a limit, never connects in a way that can block
//! (the connect is non-blocking: a full backlog only makes the holder unknown).

use std::os::fd::{AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::socket::{
    AddressFamily, Backlog, SockFlag, SockType, UnixAddr, bind, connect, getsockopt, listen,
    socket, sockopt,
};

use rtsoak_record::text::printable_bytes;

/// The environment variable older rtsoak versions used to move their lock files. The locks have
/// no files now; it is refused if set, so a setting that no longer does anything is not trusted
/// to.
pub const RETIRED_LOCK_DIR_ENV: &str = "RTSOAK_LOCK_DIR";

/// Another rtsoak holds one of the RT CPUs.
#[derive(Debug, thiserror::Error)]
#[error(
    "CPU {cpu} is already the RT CPU of another rtsoak run ({holder}); two soaks on the same RT \
     CPUs would measure each other. Wait for it to finish, queue behind it with \
     --wait-for-cpus DURATION, or choose other CPUs with --rt-cpus (lock: abstract unix socket \
     @{})",
    lock_name(*cpu)
)]
pub struct CpusBusy {
    /// The CPU found locked.
    pub cpu: usize,
    /// Who holds it, as the kernel says (pid, uid) and /proc shows it, already escaped.
    pub holder: String,
}

/// The locks on the RT CPUs, held until dropped.
#[derive(Debug)]
pub struct CpuLocks {
    _held: Vec<OwnedFd>,
}

/// The abstract socket name of CPU `cpu`'s lock (without the leading NUL).
pub(crate) fn lock_name(cpu: usize) -> String {
    format!("rtsoak-cpu{cpu}")
}

/// Lock every CPU of `cpus`, all or none. With `wait`, keep trying (once every `poll`) until it
/// runs out.
pub fn lock(
    cpus: &[usize],
    wait: Duration,
    mut waiting: impl FnMut(&CpusBusy),
) -> anyhow::Result<CpuLocks> {
    lock_named(cpus, wait, &mut waiting, &lock_name)
}

/// [`lock`] with the names chosen by `name` (the tests use names of their own, so they never
/// meet a real run's locks).
fn lock_named(
    cpus: &[usize],
    wait: Duration,
    waiting: &mut dyn FnMut(&CpusBusy),
    name: &dyn Fn(usize) -> String,
) -> anyhow::Result<CpuLocks> {
    const POLL: Duration = Duration::from_millis(250);
    let mut cpus = cpus.to_vec();
    cpus.sort_unstable();
    cpus.dedup();
    let deadline = Instant::now() + wait;
    let mut told = false;
    loop {
        match try_lock_all(&cpus, name)? {
            Ok(held) => return Ok(CpuLocks { _held: held }),
            Err(cpu) if Instant::now() < deadline => {
                if !told {
                    waiting(&busy(cpu, &name(cpu)));
                    told = true;
                }
                std::thread::sleep(POLL.min(deadline.saturating_duration_since(Instant::now())));
            }
            Err(cpu) => return Err(busy(cpu, &name(cpu)).into()),
        }
    }
}

/// One attempt: every lock, or none held and the first busy CPU.
fn try_lock_all(
    cpus: &[usize],
    name: &dyn Fn(usize) -> String,
) -> anyhow::Result<Result<Vec<OwnedFd>, usize>> {
    let mut held = Vec::with_capacity(cpus.len());
    for &cpu in cpus {
        match bind_listening(&name(cpu)) {
            Ok(socket) => held.push(socket),
            Err(Errno::EADDRINUSE) => return Ok(Err(cpu)),
            Err(errno) => anyhow::bail!(
                "binding the RT CPU lock @{} (an abstract unix socket) failed: {errno}; rtsoak \
                 needs AF_UNIX sockets (check a seccomp filter or RestrictAddressFamilies=)",
                name(cpu)
            ),
        }
    }
    Ok(Ok(held))
}

/// A non-blocking, close-on-exec unix stream socket: no worker or external noise command
/// inherits it, and no call on it waits.
fn unix_stream() -> Result<OwnedFd, Errno> {
    socket(
        AddressFamily::Unix,
        SockType::Stream,
        SockFlag::SOCK_CLOEXEC | SockFlag::SOCK_NONBLOCK,
        None,
    )
}

/// A unix stream socket bound to the abstract `name` and listening, close-on-exec so no worker
/// or external noise command inherits the lock.
pub(crate) fn bind_listening(name: &str) -> Result<OwnedFd, Errno> {
    let socket = unix_stream()?;
    bind(
        socket.as_raw_fd(),
        &UnixAddr::new_abstract(name.as_bytes())?,
    )?;
    // Connections queue here unaccepted: the waiting side only reads the credentials.
    listen(&socket, Backlog::new(64)?)?;
    Ok(socket)
}

/// Who listens on the abstract `name`: `Ok(Some((pid, uid)))`, `Ok(None)` when its pid is not visible
/// from here (another PID namespace) or the backlog is full, `Err(ECONNREFUSED)` when nobody
/// does.
pub fn listener_of(name: &str) -> Result<Option<(u32, u32)>, Errno> {
    let socket = unix_stream()?;
    match connect(
        socket.as_raw_fd(),
        &UnixAddr::new_abstract(name.as_bytes())?,
    ) {
        Ok(()) => {}
        // Listening, but its backlog is full: held, holder unknown.
        Err(Errno::EAGAIN) => return Ok(None),
        Err(errno) => return Err(errno),
    }
    let cred = getsockopt(&socket, sockopt::PeerCredentials)?;
    // Pid 0: the listener lives in a PID namespace this process cannot see into.
    Ok((cred.pid() > 0).then_some((cred.pid() as u32, cred.uid())))
}

/// Whether a live process holds the abstract `name` (the trace instances' owner sockets use it
/// too): `Some(false)` only when the kernel refuses the connection, as it does once the holder
/// is gone; `None` when it cannot be told.
pub fn has_listener(name: &str) -> Option<bool> {
    match listener_of(name) {
        Ok(_) => Some(true),
        Err(Errno::ECONNREFUSED) => Some(false),
        Err(_) => None,
    }
}

/// [`bind_listening`] with an `io::Error` (`AddrInUse` when it is held).
pub fn bind_abstract(name: &str) -> std::io::Result<OwnedFd> {
    bind_listening(name).map_err(Into::into)
}

/// The busy error for `cpu`, naming its holder as well as can be found out.
fn busy(cpu: usize, name: &str) -> CpusBusy {
    let holder = match listener_of(name) {
        Ok(Some((pid, uid))) => describe(pid, uid),
        _ => "holder unknown".to_string(),
    };
    CpusBusy { cpu, holder }
}

/// `pid 1234, uid 0, rtsoak compare --profile nightly`: the command line from /proc, escaped
/// (another user wrote it) and cut.
fn describe(pid: u32, uid: u32) -> String {
    let read = |what: &str| std::fs::read(format!("/proc/{pid}/{what}")).unwrap_or_default();
    let mut cmdline = read("cmdline");
    if cmdline.last() == Some(&0) {
        cmdline.pop();
    }
    let command = if cmdline.is_empty() {
        let mut comm = read("comm");
        if comm.last() == Some(&b'\n') {
            comm.pop();
        }
        comm
    } else {
        cmdline
            .iter()
            .map(|&b| if b == 0 { b' ' } else { b })
            .collect()
    };
    const MAX: usize = 200;
    let cut = command.len().saturating_sub(MAX);
    let mut text = format!(
        "pid {pid}, uid {uid}, {}",
        printable_bytes(&command[..command.len().min(MAX)])
    );
    if cut > 0 {
        text.push_str(&format!("…({cut} more bytes)"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names of this test process's own, so a real run's locks are never met.
    fn test_names(tag: &'static str) -> impl Fn(usize) -> String {
        move |cpu| format!("rtsoak-test-{}-{tag}-cpu{cpu}", std::process::id())
    }

    #[test]
    fn a_second_lock_on_a_shared_cpu_is_refused_naming_the_holder_and_the_way_out() {
        let names = test_names("second");
        let first = lock_named(&[5, 4], Duration::ZERO, &mut |_| {}, &names).unwrap();
        let error = lock_named(&[3, 4], Duration::ZERO, &mut |_| {}, &names).unwrap_err();
        let busy = error.downcast_ref::<CpusBusy>().expect("typed");
        assert_eq!(busy.cpu, 4);
        let me = format!(
            "pid {}, uid {}",
            std::process::id(),
            nix::unistd::geteuid().as_raw()
        );
        assert!(busy.holder.starts_with(&me), "{}", busy.holder);
        let text = error.to_string();
        assert!(text.contains("--wait-for-cpus"), "{text}");
        assert!(text.contains("--rt-cpus"), "{text}");
        // All or none: CPU 3 was not kept locked by the failed attempt.
        drop(lock_named(&[3], Duration::ZERO, &mut |_| {}, &names).unwrap());
        drop(first);
        drop(lock_named(&[3, 4], Duration::ZERO, &mut |_| {}, &names).unwrap());
    }

    #[test]
    fn a_waiting_lock_is_told_once_and_taken_when_the_holder_lets_go() {
        let names = test_names("wait");
        let first = lock_named(&[1], Duration::ZERO, &mut |_| {}, &names).unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(600));
            drop(first);
        });
        let mut told = 0;
        let second = lock_named(&[1], Duration::from_secs(30), &mut |_| told += 1, &names);
        release.join().unwrap();
        assert!(second.is_ok());
        assert_eq!(told, 1);
    }

    #[test]
    fn a_wait_that_runs_out_is_refused() {
        let names = test_names("runs-out");
        let _first = lock_named(&[1], Duration::ZERO, &mut |_| {}, &names).unwrap();
        let started = Instant::now();
        let error = lock_named(&[1], Duration::from_millis(300), &mut |_| {}, &names);
        assert!(error.unwrap_err().downcast_ref::<CpusBusy>().is_some());
        assert!(started.elapsed() >= Duration::from_millis(300));
    }

    #[test]
    fn nobody_listening_is_told_apart_from_a_holder() {
        assert_eq!(
            listener_of(&format!("rtsoak-test-{}-nobody", std::process::id())),
            Err(Errno::ECONNREFUSED)
        );
    }
}
