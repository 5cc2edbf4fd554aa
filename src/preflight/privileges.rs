//! Privileges, found by trying in the running process, never guessed from the uid or
//! capability bits: a scratch thread takes the RT policy and exits, a buffer the size a worker
//! locks is locked and unlocked, and `pidfd_getfd` duplicates one of our own fds.
//!
//! Owns: the trials and their record. Never leaves the process changed: the scratch thread dies,
//! the memory is unlocked, the duplicate fd is closed. The check itself takes the record as a
//! value, so fixtures can describe an unprivileged user.

use std::os::fd::AsRawFd;

use rtsoak_record::{Policy, Privileges, Trial};
use rtsoak_sys::{pidfd, sched};

/// Memory an RT worker locks: its binary, stacks, rings, histograms (measured: 6-11 MiB).
pub(crate) const WORKER_LOCK_BYTES: usize = 16 << 20;

/// Try each privilege in this process, for a pair that runs `policy` at `priority`.
pub(crate) fn try_privileges(policy: Policy, priority: u8) -> Privileges {
    let rt_priority = if policy.is_realtime() {
        trial(
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
        memory_lock: trial(
            format!("mlock of {} MiB", WORKER_LOCK_BYTES >> 20),
            sched::try_lock(WORKER_LOCK_BYTES),
        ),
        pidfd_getfd: trial(
            "pidfd_open and pidfd_getfd on this process".to_string(),
            try_pidfd_getfd(),
        ),
    }
}

/// The record of one trial: what was tried and its error, if it failed.
fn trial<E: std::fmt::Display>(tried: String, result: Result<(), E>) -> Trial {
    Trial {
        tried,
        error: result.err().map(|e| e.to_string()),
    }
}

/// Duplicate our own pidfd through `pidfd_getfd`: the same call, with the same permission check
/// (ptrace access, Yama, seccomp), that a publisher makes on a subscriber.
fn try_pidfd_getfd() -> Result<(), rtsoak_sys::SysError> {
    let own = pidfd::open(std::process::id() as i32)?;
    let _duplicate = pidfd::getfd(&own, own.as_raw_fd())?;
    Ok(())
}
