//! Blocked: an RT task left its CPU in `D` (uninterruptible) with no lock event before it,
//! until it runs again: waiting in the kernel for something else. The `sched_waking` that ends
//! the sleep names the task that woke it.
//!
//! It owns what the wait names; the walker decides when it opens and ends. A `D` sleep that
//! began as a lock wait is that lock wait, never this.

use rtsoak_record::result::explain::{TaskRef, Wait};

/// An RT task blocked in the kernel.
#[derive(Debug, Clone, Default)]
pub(super) struct Blocked {
    /// The task whose `sched_waking` woke it, once one has.
    woken_by: Option<TaskRef>,
}

impl Blocked {
    /// `waker` woke it (the last waking before it runs wins).
    pub(super) fn woken_by(&mut self, waker: TaskRef) {
        self.woken_by = Some(waker);
    }

    /// The finished wait.
    pub(super) fn close(self) -> Wait {
        Wait::Blocked {
            woken_by: self.woken_by,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::role;

    #[test]
    fn a_blocked_wait_names_the_last_task_that_woke_it() {
        assert_eq!(Blocked::default().close(), Wait::Blocked { woken_by: None });
        let mut blocked = Blocked::default();
        blocked.woken_by(role::task(50, "kworker/2:1", 120));
        blocked.woken_by(role::task(9, "rtsoak-pub", 59));
        let Wait::Blocked {
            woken_by: Some(waker),
        } = blocked.close()
        else {
            panic!("a blocked wait with its waker")
        };
        assert_eq!(waker.pid, 9);
    }
}
