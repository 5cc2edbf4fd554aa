//! What the trace has shown of the scheduler so far: each task's name, priority and CPU, and
//! the task each CPU runs. The walker ([`super`]) keeps it up to date as lines come in; every
//! kind of wait reads it to name the tasks involved.
//!
//! It records no wait and never names a kind of one: the kinds stand on it, not it on them.

use std::collections::HashMap;

use crate::explain::event::Pid;
use crate::explain::role;
use rtsoak_record::result::explain::TaskRef;

/// The kernel priority of a `SCHED_OTHER` task at nice 0.
const NORMAL_PRIO: i32 = 120;

/// What is known of any task from the trace so far.
#[derive(Debug, Clone)]
pub(super) struct TaskState {
    pub(super) comm: String,
    pub(super) prio: i32,
    pub(super) cpu: Option<usize>,
    pub(super) running: bool,
    /// Left its CPU runnable at this time (preempted), not yet back.
    pub(super) preempted_since: Option<u64>,
    /// On a CPU since this time.
    pub(super) running_since: Option<u64>,
}

impl Default for TaskState {
    /// A task the trace has named but not yet scheduled: a normal priority until it says.
    fn default() -> Self {
        TaskState {
            comm: String::new(),
            prio: NORMAL_PRIO,
            cpu: None,
            running: false,
            preempted_since: None,
            running_since: None,
        }
    }
}

/// Every task and CPU the trace has named.
#[derive(Debug, Default)]
pub(super) struct Sched {
    pub(super) tasks: HashMap<Pid, TaskState>,
    /// The task each CPU runs (pid 0: idle).
    pub(super) current: HashMap<usize, Pid>,
}

impl Sched {
    /// `pid`'s state, a nameless normal task if the trace has not named it before.
    pub(super) fn task_mut(&mut self, pid: Pid) -> &mut TaskState {
        self.tasks.entry(pid).or_default()
    }

    /// `pid` named `comm`, at the priority the trace last gave it.
    pub(super) fn task_ref(&self, pid: Pid, comm: &str) -> TaskRef {
        let prio = self.tasks.get(&pid).map_or(NORMAL_PRIO, |t| t.prio);
        role::task(pid, comm, prio)
    }

    /// `pid` as the trace knows it (nameless, at a normal priority, if not at all).
    pub(super) fn named(&self, pid: Pid) -> TaskRef {
        self.task_ref(pid, self.tasks.get(&pid).map_or("", |t| &t.comm))
    }

    /// The task on `cpu`, if the trace has seen one there and named it.
    pub(super) fn current_on(&self, cpu: usize) -> Option<TaskRef> {
        let pid = *self.current.get(&cpu)?;
        let state = self.tasks.get(&pid)?;
        Some(role::task(pid, &state.comm, state.prio))
    }

    /// The CPU `pid` last ran on (or was switched off).
    pub(super) fn cpu_of(&self, pid: Pid) -> Option<usize> {
        self.tasks.get(&pid).and_then(|t| t.cpu)
    }
}
