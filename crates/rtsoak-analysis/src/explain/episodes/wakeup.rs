//! Woken, not yet running: an RT task's wait from its `sched_waking` until it runs on its CPU.
//! What that CPU ran at the waking tells the two apart:
//!
//! - **waiting for CPU**: another task had it, and the woken task waits for it to go;
//! - **idle wakeup**: it was idle, and the idle-state exit and the wakeup IPI lie in between
//!   (one per period, so only the long ones are kept).
//!
//! It owns which of the two a waking starts and what it becomes; the walker decides that a
//! waking starts one at all (not when the task already waits) and when it ends.

use super::sched::Sched;
use crate::explain::event::Pid;
use rtsoak_record::result::explain::{TaskRef, Wait};

/// A woken RT task's wait for its CPU.
#[derive(Debug, Clone)]
pub(super) enum Wakeup {
    /// Its CPU ran `by`.
    WaitingForCpu { by: TaskRef },
    /// Its CPU, `cpu`, was idle.
    IdleWakeup { cpu: usize },
}

impl Wakeup {
    /// `pid` woken onto `target_cpu`: a wait if the trace knows what that CPU ran, and it was
    /// not `pid` itself.
    pub(super) fn of(sched: &Sched, pid: Pid, target_cpu: usize) -> Option<Self> {
        match sched.current.get(&target_cpu).copied() {
            Some(0) => Some(Wakeup::IdleWakeup { cpu: target_cpu }),
            Some(current) if current != pid => sched
                .current_on(target_cpu)
                .map(|by| Wakeup::WaitingForCpu { by }),
            _ => None,
        }
    }

    /// The finished wait.
    pub(super) fn close(self) -> Wait {
        match self {
            Wakeup::WaitingForCpu { by } => Wait::WaitingForCpu { by },
            Wakeup::IdleWakeup { cpu } => Wait::IdleWakeup { cpu },
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::explain::episodes::Episodes;
    use crate::explain::event::parse;
    use rtsoak_record::result::explain::Wait;

    #[test]
    fn a_wakeup_onto_an_idle_cpu_is_a_wait_and_waits_shorter_than_the_minimum_are_dropped() {
        let lines = [
            "rtsoak-sub-10 [5] 4.000000: sched_switch: prev_comm=rtsoak-sub prev_pid=10 \
             prev_prio=59 prev_state=S ==> next_comm=swapper/5 next_pid=0 next_prio=120",
            "rtsoak-pub-9 [4] 4.000100: sched_waking: comm=rtsoak-sub pid=10 prio=59 \
             target_cpu=005",
            "<idle>-0 [5] 4.000400: sched_switch: prev_comm=swapper/5 prev_pid=0 \
             prev_prio=120 prev_state=R ==> next_comm=rtsoak-sub next_pid=10 next_prio=59",
            "rtsoak-sub-10 [5] 4.000500: sched_switch: prev_comm=rtsoak-sub prev_pid=10 \
             prev_prio=59 prev_state=S ==> next_comm=swapper/5 next_pid=0 next_prio=120",
            "rtsoak-pub-9 [4] 4.000600: sched_waking: comm=rtsoak-sub pid=10 prio=59 \
             target_cpu=005",
            "<idle>-0 [5] 4.000610: sched_switch: prev_comm=swapper/5 prev_pid=0 \
             prev_prio=120 prev_state=R ==> next_comm=rtsoak-sub next_pid=10 next_prio=59",
        ];
        let mut episodes = Episodes::new(&[10], 50);
        for line in lines {
            episodes.feed(&parse(line).unwrap());
        }
        episodes.finish();
        assert_eq!(
            episodes.done.len(),
            1,
            "the 10 us wakeup is below the minimum"
        );
        let episode = &episodes.done[0];
        assert_eq!((episode.start_us, episode.end_us), (4_000_100, 4_000_400));
        assert_eq!(episode.wait, Wait::IdleWakeup { cpu: 5 });
    }
}
