//! Taking the RT CPUs in turn: look at the queue, take them where nobody holds or queues for
//! them, else refuse or take a ticket, move up, and take the locks when first (the rules are in
//! the module's documentation above).
//!
//! Owns: the order of the steps. Never takes a lock while a lower ticket is held on one of the
//! run's CPUs, never closes the ticket before the locks are held, never sleeps past the limit.

use std::collections::BTreeSet;
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use rtsoak_record::{CpuHolder, CpuHolderRole, CpuWait};

use super::holders::{self, Queued};
use super::ticket::{self, Seen, Ticket};
use super::{CpuLocks, CpusBusy, Names, Waiting, try_lock_all, unix_socket_error};

/// How often the first in the queue tries the locks: the gap it leaves between two soaks.
const FIRST_POLL: Duration = Duration::from_millis(100);
/// How often the others look whether they moved up.
const POLL: Duration = Duration::from_millis(250);

/// Lock every CPU of `cpus` (sorted, without repeats), all or none, in turn: at once where
/// nobody holds them or queues for them, else after those queued ahead, waiting up to `wait`.
pub(super) fn lock_in_turn(
    cpus: &[usize],
    wait: Duration,
    waiting: &mut dyn FnMut(&Waiting<'_>),
    names: &Names,
) -> anyhow::Result<CpuLocks> {
    let started = Instant::now();
    let queued = ticket::held(names, cpus).map_err(|e| queue_error(names, cpus, e))?;
    if queued.is_empty() {
        match try_lock_all(cpus, names)? {
            Ok(held) => {
                return Ok(CpuLocks {
                    _held: held,
                    wait: None,
                });
            }
            Err(cpu) if wait.is_zero() => return Err(refusal(names, cpus, Some(cpu), &queued)),
            Err(_) => {}
        }
    } else if wait.is_zero() {
        return Err(refusal(names, cpus, None, &queued));
    }
    let highest = queued.iter().map(|seen| seen.number).max().unwrap_or(0);
    let Some(ticket) =
        Ticket::take(names, cpus, highest).map_err(|e| queue_error(names, cpus, e))?
    else {
        let behind = holders::behind(names, cpus, &queued);
        let mut busy = busy(names, cpus, None, &behind);
        busy.queue_full = true;
        return Err(busy.into());
    };
    let line = Line {
        names,
        cpus,
        ticket,
        started,
        deadline: started + wait,
        ahead: None,
        behind: Vec::new(),
        arrival: None,
    };
    line.wait(waiting)
}

/// A run with its ticket, waiting.
struct Line<'a> {
    names: &'a Names,
    cpus: &'a [usize],
    ticket: Ticket,
    started: Instant,
    deadline: Instant,
    /// The processes queued ahead at the last look.
    ahead: Option<BTreeSet<Queued>>,
    /// Whom it waits behind, as described when those ahead last changed.
    behind: Vec<CpuHolder>,
    /// Its position and whom it waited behind at its first look, for the result.
    arrival: Option<(u32, Vec<CpuHolder>)>,
}

impl Line<'_> {
    /// Look, and take the locks when first, until they are taken or the wait runs out.
    fn wait(mut self, waiting: &mut dyn FnMut(&Waiting<'_>)) -> anyhow::Result<CpuLocks> {
        loop {
            let (position, changed) = self.look()?;
            let mut locked = None;
            // First: no ticket below its own on any of its CPUs (a newcomer binds above every
            // ticket it saw, and a ticket never moves past another, so none can appear there).
            if position == 1 {
                match try_lock_all(self.cpus, self.names)? {
                    Ok(held) => return Ok(self.took(held)),
                    Err(cpu) => locked = Some(cpu),
                }
            }
            waiting(&Waiting {
                position,
                waited: self.started.elapsed(),
                behind: &self.behind,
                changed,
            });
            let now = Instant::now();
            if now >= self.deadline {
                let mut busy = busy(self.names, self.cpus, locked, &self.behind);
                busy.waited = Some(self.started.elapsed());
                // The ticket closes as `self` drops: the queue behind moves up.
                return Err(busy.into());
            }
            let poll = if locked.is_some() { FIRST_POLL } else { POLL };
            std::thread::sleep(poll.min(self.deadline - now));
        }
    }

    /// Move up as far as the queue lets, and see who is ahead: its position, and whether those
    /// ahead changed since the last look (then whom it waits behind is described again).
    fn look(&mut self) -> anyhow::Result<(u32, bool)> {
        let (names, cpus) = (self.names, self.cpus);
        self.ticket.drain();
        self.ticket
            .move_down(names, cpus)
            .map_err(|e| queue_error(names, cpus, e))?;
        let ahead = self.tickets_ahead()?;
        let queued = holders::queued(&ahead);
        let position = queued.len() as u32 + 1;
        let changed = self.ahead.as_ref() != Some(&queued);
        if changed {
            self.behind = holders::behind(names, cpus, &ahead);
            self.ahead = Some(queued);
            self.arrival
                .get_or_insert_with(|| (position, self.behind.clone()));
        }
        Ok((position, changed))
    }

    /// The tickets held below its own on its CPUs.
    fn tickets_ahead(&self) -> anyhow::Result<Vec<Seen>> {
        ticket::held_below(self.names, self.cpus, self.ticket.number())
            .map_err(|e| queue_error(self.names, self.cpus, e))
    }

    /// The locks are held: now the ticket closes, and the wait goes in the result.
    fn took(self, held: Vec<OwnedFd>) -> CpuLocks {
        let (queue_position, waited_behind) = self.arrival.unwrap_or((1, Vec::new()));
        let wait = CpuWait {
            waited_ns: self.started.elapsed().as_nanos() as u64,
            queue_position,
            waited_behind,
        };
        drop(self.ticket);
        CpuLocks {
            _held: held,
            wait: Some(wait),
        }
    }
}

/// The refusal of a run on `cpus` that arrived to find them held (`locked`, the CPU found held)
/// or the tickets `queued` held.
fn refusal(names: &Names, cpus: &[usize], locked: Option<usize>, queued: &[Seen]) -> anyhow::Error {
    busy(names, cpus, locked, &holders::behind(names, cpus, queued)).into()
}

/// The busy error naming the CPU found `locked`, or else the first one a holder or the queue
/// has.
fn busy(names: &Names, cpus: &[usize], locked: Option<usize>, behind: &[CpuHolder]) -> CpusBusy {
    let first_of = |role: CpuHolderRole| {
        behind
            .iter()
            .find(|h| h.role == role)
            .and_then(|h| h.cpus.first().copied())
    };
    let cpu = locked
        .or_else(|| first_of(CpuHolderRole::Holding))
        .or_else(|| first_of(CpuHolderRole::Queued))
        .or_else(|| cpus.first().copied())
        .unwrap_or_default();
    CpusBusy::new(cpu, names.lock(cpu), locked.is_some(), behind)
}

/// A failed call on one of the ticket sockets of `cpus`.
fn queue_error(names: &Names, cpus: &[usize], errno: Errno) -> anyhow::Error {
    let cpu = cpus.first().copied().unwrap_or_default();
    unix_socket_error(&format!("{}-ticket-N", names.lock(cpu)), errno)
}
