//! Privileges, found by trying in the running process, never guessed from the uid or
//! capability bits: a scratch thread takes the RT policy and exits, a buffer the size a worker
//! locks is locked and unlocked, and `pidfd_getfd` duplicates one of our own fds.
//!
//! Owns: the trials and their record. Never leaves the process changed: the scratch thread dies,
//! the memory is unlocked, the duplicate fd is closed. The check itself takes the record as a
//! value, so fixtures can describe an unprivileged user.

use std::os::fd::AsRawFd;

use serde::{Deserialize, Serialize};

use crate::record::Policy;
use crate::sys::{pidfd, sched};

/// Memory an RT worker locks: its binary, stacks, rings, histograms (measured: 6-11 MiB).
pub const WORKER_LOCK_BYTES: usize = 16 << 20;

/// One trial: what was tried and, if it failed, how.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trial {
    /// What was tried (`SCHED_FIFO priority 40 on a scratch thread`).
    pub tried: String,
    /// The failure (`sched_setscheduler failed: EPERM: Operation not permitted`), or none.
    pub error: Option<String>,
}

impl Trial {
    /// A trial that succeeded.
    pub fn granted(tried: &str) -> Self {
        Trial {
            tried: tried.to_string(),
            error: None,
        }
    }

    /// A trial that failed with `error`.
    pub fn refused(tried: &str, error: &str) -> Self {
        Trial {
            tried: tried.to_string(),
            error: Some(error.to_string()),
        }
    }

    fn from_result<E: std::fmt::Display>(tried: String, result: Result<(), E>) -> Self {
        Trial {
            tried,
            error: result.err().map(|e| e.to_string()),
        }
    }

    /// True if it worked.
    pub fn is_granted(&self) -> bool {
        self.error.is_none()
    }
}

/// What this process may do that a run needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Privileges {
    /// The RT pair's scheduling policy and priority.
    pub rt_priority: Trial,
    /// Locking [`WORKER_LOCK_BYTES`] of memory, as each worker's `mlockall` will.
    pub memory_lock: Trial,
    /// `pidfd_getfd`, which publishers use to reach a subscriber's ring or eventfd.
    pub pidfd_getfd: Trial,
}

impl Privileges {
    /// Try each privilege in this process, for a pair that runs `policy` at `priority`.
    pub fn gather(policy: Policy, priority: u8) -> Self {
        let rt_priority = if policy.is_realtime() {
            Trial::from_result(
                format!(
                    "SCHED_{} priority {priority} on a scratch thread",
                    policy.name().to_uppercase()
                ),
                sched::try_policy(policy.into(), priority),
            )
        } else {
            Trial::granted("nothing: the plan asks for SCHED_OTHER")
        };
        Privileges {
            rt_priority,
            memory_lock: Trial::from_result(
                format!("mlock of {} MiB", WORKER_LOCK_BYTES >> 20),
                sched::try_lock(WORKER_LOCK_BYTES),
            ),
            pidfd_getfd: Trial::from_result(
                "pidfd_open and pidfd_getfd on this process".to_string(),
                try_pidfd_getfd(),
            ),
        }
    }
}

/// Duplicate our own pidfd through `pidfd_getfd`: the same call, with the same permission check
/// (ptrace access, Yama, seccomp), that a publisher makes on a subscriber.
fn try_pidfd_getfd() -> Result<(), crate::sys::SysError> {
    let own = pidfd::open(std::process::id() as i32)?;
    let _duplicate = pidfd::getfd(&own, own.as_raw_fd())?;
    Ok(())
}
