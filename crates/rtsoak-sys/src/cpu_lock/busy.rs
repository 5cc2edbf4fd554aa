//! The refusal when the RT CPUs are held or queued for: who has them, how long the queue is,
//! and what to do.

use std::fmt;
use std::time::Duration;

use rtsoak_record::{CpuHolder, CpuHolderRole};

use super::holders::describe;
use super::ticket::MAX_TICKET;

/// Another rtsoak holds one of the RT CPUs, or is queued for them (`--wait-for-cpus` queues in
/// the order asked, and nobody takes the CPUs ahead of the queue).
#[derive(Debug)]
pub struct CpusBusy {
    /// The CPU found locked, or else the first one queued for.
    pub(crate) cpu: usize,
    /// Who holds it, as the kernel says (pid, uid) and /proc shows it, already escaped; `None`
    /// when nobody does and it is only queued for.
    pub(crate) holder: Option<String>,
    /// How many rtsoak runs are queued for the CPUs (ahead of this one).
    pub(crate) queued: usize,
    /// The first of them, described like the holder.
    pub(crate) first_queued: Option<String>,
    /// Every ticket number is taken: the queue cannot be joined.
    pub(crate) queue_full: bool,
    /// How long this one waited before its `--wait-for-cpus` ran out; `None` when it did not.
    pub(crate) waited: Option<Duration>,
    /// The lock's abstract socket name, for the message.
    lock: String,
}

impl CpusBusy {
    /// The refusal for `cpu` (its lock `lock`, found held where `locked`), from whom the run
    /// found `behind` it.
    pub(super) fn new(cpu: usize, lock: String, locked: bool, behind: &[CpuHolder]) -> Self {
        let holding = behind
            .iter()
            .find(|h| h.role == CpuHolderRole::Holding && h.cpus.contains(&cpu));
        let queued: Vec<&CpuHolder> = behind
            .iter()
            .filter(|h| h.role == CpuHolderRole::Queued)
            .collect();
        CpusBusy {
            cpu,
            // Held, and nobody said who: a socket that does not listen, or one let go since.
            holder: holding
                .map(describe)
                .or_else(|| locked.then(|| "holder unknown".to_string())),
            queued: queued.len(),
            first_queued: queued.first().map(|h| describe(h)),
            queue_full: false,
            waited: None,
            lock,
        }
    }
}

impl fmt::Display for CpusBusy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let runs = if self.queued == 1 { "run" } else { "runs" };
        let first = self.first_queued.as_deref().unwrap_or("holder unknown");
        match &self.holder {
            Some(holder) => {
                write!(
                    f,
                    "CPU {} is already the RT CPU of another rtsoak run ({holder})",
                    self.cpu
                )?;
                if self.queued > 0 {
                    write!(
                        f,
                        "; {} more {runs} queued for it (first: {first})",
                        self.queued
                    )?;
                }
            }
            None => write!(
                f,
                "CPU {} is free, but the queue for it goes first ({} {runs} queued; first: \
                 {first})",
                self.cpu, self.queued
            )?,
        }
        if self.queue_full {
            write!(f, "; the queue is full ({MAX_TICKET} places)")?;
        }
        let wait = match self.waited {
            Some(waited) => {
                let waited = Duration::from_secs(waited.as_secs());
                write!(
                    f,
                    "; gave up after waiting {}",
                    humantime::format_duration(waited)
                )?;
                "wait longer with --wait-for-cpus DURATION"
            }
            None => "queue behind it with --wait-for-cpus DURATION",
        };
        write!(
            f,
            "; two soaks on the same RT CPUs would measure each other. Wait for it to finish, \
             {wait}, or choose other CPUs with --rt-cpus (lock: abstract unix socket @{}, queue: \
             @{}-ticket-N)",
            self.lock, self.lock
        )
    }
}

impl std::error::Error for CpusBusy {}
