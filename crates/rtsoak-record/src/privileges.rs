//! What this process may do that a run needs, found by trying (`preflight` tries), as the system
//! check records it.

use serde::{Deserialize, Serialize};

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
}

/// What this process may do that a run needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Privileges {
    /// The RT pair's scheduling policy and priority.
    pub rt_priority: Trial,
    /// Locking as much memory as each worker's `mlockall` will.
    pub memory_lock: Trial,
    /// `pidfd_getfd`, which publishers use to reach a subscriber's ring or eventfd.
    pub pidfd_getfd: Trial,
}
