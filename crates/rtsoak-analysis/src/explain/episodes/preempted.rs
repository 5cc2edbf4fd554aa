//! Preempted: an RT task left its CPU still runnable (`prev_state` `R`), until it is back on
//! it. The task switched in is the one that took it.
//!
//! It owns what the wait names; the walker decides when it opens and ends.

use rtsoak_record::result::explain::{TaskRef, Wait};

/// An RT task off its CPU while runnable.
#[derive(Debug, Clone)]
pub(super) struct Preempted {
    /// The task that got its CPU.
    by: TaskRef,
}

impl Preempted {
    /// Switched off its CPU for `next`.
    pub(super) fn by(next: TaskRef) -> Self {
        Preempted { by: next }
    }

    /// The finished wait.
    pub(super) fn close(self) -> Wait {
        Wait::Preempted { by: self.by }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::role;

    #[test]
    fn a_preemption_names_the_task_that_took_the_cpu() {
        let ktimers = role::task(30, "ktimers/2", 1);
        assert_eq!(
            Preempted::by(ktimers.clone()).close(),
            Wait::Preempted { by: ktimers }
        );
    }
}
