//! Tickets: a waiter's place in the queue, one abstract socket per CPU of its run, all with
//! one number; and the sweep that finds which numbers are held.
//!
//! Owns: binding, moving down and draining a ticket, and asking whether a name is held. Never
//! blocks: every socket is non-blocking, and a connect that would wait answers "held" at once.

use std::os::fd::OwnedFd;

use nix::errno::Errno;
use nix::sys::socket::{SockFlag, accept4};

use super::{Names, bind_listening, listener_of};

/// The highest ticket number: a queue this long for the same CPUs is refused as full.
pub(super) const MAX_TICKET: u32 = 64;

/// Who listens on a name, as `SO_PEERCRED` told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Peer {
    pub(super) pid: u32,
    pub(super) uid: u32,
}

/// A ticket name found held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Seen {
    pub(super) cpu: usize,
    pub(super) number: u32,
    /// `None`: held, but the kernel did not say by whom (another PID namespace, a full
    /// backlog, a socket of another type).
    pub(super) peer: Option<Peer>,
}

/// Whether `name` is held: `Ok(None)` when free, `Ok(Some(peer))` when held.
fn probe(name: &str) -> Result<Option<Option<Peer>>, Errno> {
    match listener_of(name) {
        Ok(peer) => Ok(Some(peer.map(|(pid, uid)| Peer { pid, uid }))),
        // Nobody listens: free, or bound by a socket that does not listen, which is no ticket.
        Err(Errno::ECONNREFUSED) => Ok(None),
        // Bound by a socket of another type: held, but by no rtsoak.
        Err(Errno::EPROTOTYPE) => Ok(Some(None)),
        Err(errno) => Err(errno),
    }
}

/// The tickets held on `cpus` with a number below `below`, each CPU swept from the top down:
/// tickets only move down, bound before closed, so a ticket that stays in the queue while the
/// sweep passes is met at one number or the next.
pub(super) fn held_below(names: &Names, cpus: &[usize], below: u32) -> Result<Vec<Seen>, Errno> {
    let mut seen = Vec::new();
    for &cpu in cpus {
        for number in (1..below).rev() {
            if let Some(peer) = probe(&names.ticket(cpu, number))? {
                seen.push(Seen { cpu, number, peer });
            }
        }
    }
    Ok(seen)
}

/// The tickets held on `cpus`, however high.
pub(super) fn held(names: &Names, cpus: &[usize]) -> Result<Vec<Seen>, Errno> {
    held_below(names, cpus, MAX_TICKET + 1)
}

/// A place in the queue: ticket `number` held on every CPU of the run.
#[derive(Debug)]
pub(super) struct Ticket {
    number: u32,
    sockets: Vec<OwnedFd>,
}

impl Ticket {
    /// The first number above `highest` that is free on every one of `cpus`, taken; `None`
    /// when every number up to [`MAX_TICKET`] is taken.
    pub(super) fn take(names: &Names, cpus: &[usize], highest: u32) -> Result<Option<Self>, Errno> {
        for number in highest + 1..=MAX_TICKET {
            if let Some(sockets) = bind_all(names, cpus, number)? {
                return Ok(Some(Ticket { number, sockets }));
            }
        }
        Ok(None)
    }

    /// Its number.
    pub(super) fn number(&self) -> u32 {
        self.number
    }

    /// Move down while the number below is free on every one of `cpus` (the ones it holds):
    /// the lower number is bound before the higher one closes, so whoever sweeps downward
    /// meets it at one or the other.
    pub(super) fn move_down(&mut self, names: &Names, cpus: &[usize]) -> Result<(), Errno> {
        while self.number > 1 {
            let Some(sockets) = bind_all(names, cpus, self.number - 1)? else {
                break;
            };
            self.sockets = sockets;
            self.number -= 1;
        }
        Ok(())
    }

    /// Accept and close what queued on its sockets: each is someone who looked at who holds it
    /// (`SO_PEERCRED` needs no accept), and unaccepted they would fill its backlog and make it
    /// nameless. Bounded, so a flood cannot keep it here.
    pub(super) fn drain(&self) {
        for socket in &self.sockets {
            for _ in 0..256 {
                if accept4(socket, SockFlag::SOCK_CLOEXEC | SockFlag::SOCK_NONBLOCK).is_err() {
                    break;
                }
            }
        }
    }
}

/// Ticket `number` bound on every one of `cpus`, or `None` (and none kept) when one of them is
/// taken.
fn bind_all(names: &Names, cpus: &[usize], number: u32) -> Result<Option<Vec<OwnedFd>>, Errno> {
    let mut sockets = Vec::with_capacity(cpus.len());
    for &cpu in cpus {
        match bind_listening(&names.ticket(cpu, number)) {
            Ok(socket) => sockets.push(socket),
            Err(Errno::EADDRINUSE) => return Ok(None),
            Err(errno) => return Err(errno),
        }
    }
    Ok(Some(sockets))
}
