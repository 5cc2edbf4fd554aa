//! One rtsoak per RT CPU, in the order they asked: two soaks on the same RT CPUs (two nightly
//! timers firing in the same window, a hand run beside a scheduled one) would each measure the
//! other. Before anything runs, `run` and `compare` take their RT CPUs here and hold them until
//! they exit. A second rtsoak refuses at once, naming the holder, or with `--wait-for-cpus`
//! queues: the first to queue runs next, however often a later client asks again.
//!
//! **The locks.** One abstract-namespace unix socket per RT CPU (`\0rtsoak-cpu4`), bound and
//! listening. A name can be bound once (`EADDRINUSE` means held), the kernel releases it when the
//! holder dies however it dies, and it has no file system path, so there is no file another user
//! could plant a symlink or hard link for. A run takes all of its CPUs or none.
//!
//! **The queue.** A waiter holds a ticket: one more abstract socket per CPU of its run,
//! `\0rtsoak-cpu4-ticket-K`, with the same number K (1 to 64) on every CPU.
//! - Arriving, waiting or not, an rtsoak looks at the tickets of its CPUs. If any is held it
//!   does not take the CPUs, even where they are free: without `--wait-for-cpus` it refuses,
//!   naming the holder and the queue; with it, it binds K = (highest number held) + 1 on each
//!   of its CPUs (a rival arriving in the same instant has taken a name: K + 1). With no ticket
//!   held it tries the locks, and queues only if they are held.
//! - A waiter whose number is the lowest held on every one of its CPUs tries the locks (every
//!   100 ms; the others look every 250 ms), and closes its tickets only once it holds the locks,
//!   so no one slips in between.
//! - A waiter moves its ticket down into the number below whenever that is free on all its CPUs,
//!   binding the lower number before closing the higher: numbers stay as small as the queue,
//!   and no ticket ever passes another.
//!
//! One number across all of a run's CPUs orders every two waiters that share a CPU the same way
//! on each CPU they share, so overlapping sets cannot deadlock: the waiter with the lowest number
//! anywhere waits only for running soaks, which end. It is first come, first served per CPU: a
//! run on CPUs 4-5 queued ahead of one on 5-6 keeps the latter waiting even while 6 is free.
//! A waiter that dies loses its tickets with its sockets, and the ones behind move down; one
//! whose wait runs out closes them and refuses.
//!
//! Whether a ticket is held is asked of each name (a non-blocking connect: refused means free),
//! from 64 down to 1, not read from `/proc/net/unix`, whose page-by-page listing can
//! skip a socket while others come and go. Tickets only move down, one number at a time, bound
//! before closed, so a downward sweep meets every ticket that stays in the queue.
//!
//! **Who.** Who holds a lock or a ticket is asked of the kernel, not of a note the holder wrote:
//! the asking side connects to the socket (a lock's holder listens with a backlog and never
//! accepts, so holding takes no thread; a waiter accepts and closes what queued on its tickets
//! at each look, so theirs never fill) and reads `SO_PEERCRED` on its own, not-yet-accepted
//! socket, which gives the listener's pid and uid; its `comm` and `cmdline` come from /proc,
//! escaped before anyone prints them.
//!
//! **Other users.** Any local user may bind these names, as they may run rtsoak: a ticket held
//! by a process that never takes its turn holds the queue as a stopped run holds the lock.
//! Nobody waits beyond its `--wait-for-cpus`, and whoever waits sees every process ahead named
//! (pid, uid and command) in its progress and in the error when the wait runs out. A name bound
//! by a socket that does not listen is no ticket: it is passed over.
//!
//! Abstract names belong to a network namespace: every rtsoak that must exclude the others has
//! to share one (the systemd units do not set `PrivateNetwork=` for that reason).
//!
//! Owns: the lock and ticket sockets. Never blocks without a limit, never connects in a way that
//! can block (the connect is non-blocking: a full backlog only makes the holder unknown).

mod busy;
mod holders;
mod queue;
#[cfg(test)]
mod tests;
mod ticket;

use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::socket::{
    AddressFamily, Backlog, SockFlag, SockType, UnixAddr, bind, connect, getsockopt, listen,
    socket, sockopt,
};

use rtsoak_record::{CpuHolder, CpuWait};

pub use busy::CpusBusy;

/// The environment variable older rtsoak versions used to move their lock files. The locks have
/// no files now; it is refused if set, so a setting that no longer does anything is not trusted
/// to.
pub const RETIRED_LOCK_DIR_ENV: &str = "RTSOAK_LOCK_DIR";

/// The locks on the RT CPUs, held until dropped.
#[derive(Debug)]
pub struct CpuLocks {
    _held: Vec<OwnedFd>,
    wait: Option<CpuWait>,
}

impl CpuLocks {
    /// How long it took to get them and whom it waited behind; `None` when they were taken at
    /// once.
    pub fn wait(&self) -> Option<&CpuWait> {
        self.wait.as_ref()
    }
}

/// Where a waiting rtsoak stands, told at every look at the queue while it waits.
#[derive(Debug)]
pub struct Waiting<'a> {
    /// 1 when no other rtsoak is queued ahead of this one (it runs when the holder lets go), n
    /// when n - 1 are.
    pub position: u32,
    /// Since it asked for the CPUs.
    pub waited: Duration,
    /// Whom it waits behind: the holders of its CPUs, then those queued ahead, first in the queue
    /// first; described again whenever `changed`.
    pub behind: &'a [CpuHolder],
    /// True at the first look and whenever those queued ahead changed.
    pub changed: bool,
}

/// The abstract names of the locks and tickets (without the leading NUL). The tests use a prefix
/// of their own, so they never meet a real run's.
#[derive(Debug, Clone)]
struct Names {
    prefix: String,
}

impl Names {
    fn real() -> Self {
        Names {
            prefix: "rtsoak-cpu".to_string(),
        }
    }

    /// CPU `cpu`'s lock: `rtsoak-cpu4`.
    fn lock(&self, cpu: usize) -> String {
        format!("{}{cpu}", self.prefix)
    }

    /// Ticket `number` of CPU `cpu`'s queue: `rtsoak-cpu4-ticket-2`.
    fn ticket(&self, cpu: usize, number: u32) -> String {
        format!("{}{cpu}-ticket-{number}", self.prefix)
    }
}

/// Lock every CPU of `cpus`, all or none. With a `wait`, queue for them (told where it stands
/// at every look) until it runs out.
pub fn lock(
    cpus: &[usize],
    wait: Duration,
    mut waiting: impl FnMut(&Waiting<'_>),
) -> anyhow::Result<CpuLocks> {
    lock_named(cpus, wait, &mut waiting, &Names::real())
}

/// [`lock`] under the names `names` gives.
fn lock_named(
    cpus: &[usize],
    wait: Duration,
    waiting: &mut dyn FnMut(&Waiting<'_>),
    names: &Names,
) -> anyhow::Result<CpuLocks> {
    let mut cpus = cpus.to_vec();
    cpus.sort_unstable();
    cpus.dedup();
    queue::lock_in_turn(&cpus, wait, waiting, names)
}

/// One attempt: every lock, or none held and the first busy CPU.
fn try_lock_all(cpus: &[usize], names: &Names) -> anyhow::Result<Result<Vec<OwnedFd>, usize>> {
    let mut held = Vec::with_capacity(cpus.len());
    for &cpu in cpus {
        match bind_listening(&names.lock(cpu)) {
            Ok(socket) => held.push(socket),
            Err(Errno::EADDRINUSE) => return Ok(Err(cpu)),
            Err(errno) => return Err(unix_socket_error(&names.lock(cpu), errno)),
        }
    }
    Ok(Ok(held))
}

/// What a failed call on the lock or ticket socket `name` means, and what to do.
fn unix_socket_error(name: &str, errno: Errno) -> anyhow::Error {
    anyhow::anyhow!(
        "binding or asking for the RT CPU lock @{name} (an abstract unix socket) failed: \
         {errno}; rtsoak needs AF_UNIX sockets (check a seccomp filter or \
         RestrictAddressFamilies=)"
    )
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
