//! The trace, read as a sequence of waits of the RT tasks. Fed one parsed line at a time (in the
//! order `trace_pipe` gives them), it follows every CPU's running task and every task's CPU, and
//! records an [`Episode`] whenever an RT task is held back:
//!
//! - **lock**: from `lock:contention_begin` (or, where the kernel has no lock event on that path,
//!   as for a PI futex, from the `sched_pi_setprio` the waiter emits) until it has the lock. The
//!   waiter's `sched_pi_setprio` names the owner and its boost; from then on the owner's CPU is
//!   followed, so the time it spent runnable but off-CPU, and who had its CPU, are known. The
//!   owner's CPU history is kept from before the wait began: the task that preempts a holder
//!   usually got there before the RT task blocked.
//! - **preempted**: the RT task left its CPU still runnable, until it is back.
//! - **waiting for CPU**: woken while its CPU ran another task, until it runs.
//! - **idle wakeup**: woken while its CPU was idle, until it runs (the idle-state exit and the
//!   wakeup IPI lie in between).
//! - **blocked**: left its CPU in `D` without a lock event, until it runs; who woke it.
//! - **interrupt / softirq**: a handler ran on its CPU while it was there.
//!
//! Only waits at least `min_us` long are kept: a cause must cover half of a spike over the
//! threshold, so shorter ones can explain nothing (and there is one idle wakeup per period).
//! Nothing here guesses: a wait the trace does not show is not recorded.

use std::collections::HashMap;

use super::event::{Event, Pid, Record};
use super::role;
use crate::result::explain::{Holder, LockRef, TaskRef, Wait};

/// Most episodes kept for one run; beyond it they are counted, not stored.
const MAX_EPISODES: usize = 2_000_000;
/// The kernel priority of a `SCHED_OTHER` task at nice 0.
const NORMAL_PRIO: i32 = 120;

/// The lock kind of a wait in `FUTEX_LOCK_PI` (and the other PI futex operations).
pub const PI_FUTEX: &str = "PI futex (rt_mutex)";

/// futex(2) operations that wait on an rt_mutex (`FUTEX_CMD_MASK` applied).
const FUTEX_PI_OPS: [u32; 4] = [6, 8, 11, 13];
const FUTEX_CMD_MASK: u32 = 0x7f;

/// One wait of an RT task.
#[derive(Debug, Clone, PartialEq)]
pub struct Episode {
    pub task: TaskRef,
    pub start_us: u64,
    pub end_us: u64,
    pub wait: Wait,
}

/// An RT task on its CPU from `start_us` to `end_us` without a switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OnCpu {
    pub pid: Pid,
    pub start_us: u64,
    pub end_us: u64,
}

/// What is known of any task from the trace so far.
#[derive(Debug, Clone)]
struct TaskState {
    comm: String,
    prio: i32,
    cpu: Option<usize>,
    running: bool,
    /// Left its CPU runnable at this time (preempted), not yet back.
    preempted_since: Option<u64>,
    /// On a CPU since this time.
    running_since: Option<u64>,
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

/// What runs on a CPU.
#[derive(Debug, Clone, Default)]
struct CpuState {
    current: Pid,
    irq: Option<(u64, String)>,
    softirq: Option<(u64, String)>,
}

/// An RT task's wait in progress.
#[derive(Debug, Clone)]
struct Open {
    start_us: u64,
    kind: OpenKind,
    /// The task has left its CPU since the wait began (a lock wait without a contention event
    /// ends when it is back).
    left_cpu: bool,
}

#[derive(Debug, Clone)]
enum OpenKind {
    Lock {
        lock: LockRef,
        /// Opened by `contention_begin` (ends at `contention_end`), else by PI alone.
        contended: bool,
        holder: Option<OpenHolder>,
    },
    Preempted {
        by: TaskRef,
    },
    WaitingForCpu {
        by: TaskRef,
    },
    IdleWakeup {
        cpu: usize,
    },
    Blocked {
        woken_by: Option<TaskRef>,
    },
}

/// The owner of the lock an RT task waits on, followed while it waits.
#[derive(Debug, Clone)]
struct OpenHolder {
    pid: Pid,
    task: TaskRef,
    boost_prio: i32,
    /// Off-CPU while runnable since this time (if it is now).
    waiting_since: Option<u64>,
    /// Time each preemptor had the holder's CPU, us.
    preemptors: Vec<(TaskRef, u64)>,
}

impl OpenHolder {
    fn charge(&mut self, by: TaskRef, us: u64) {
        if us == 0 {
            return;
        }
        match self.preemptors.iter_mut().find(|(t, _)| t.pid == by.pid) {
            Some((_, total)) => *total += us,
            None => self.preemptors.push((by, us)),
        }
    }

    fn close(self) -> Holder {
        let preempted_us = self.preemptors.iter().map(|(_, us)| us).sum();
        Holder {
            task: self.task,
            boosted_to: Some(role::priority(self.boost_prio)),
            preempted_us,
            preempted_by: self
                .preemptors
                .into_iter()
                .max_by_key(|(_, us)| *us)
                .map(|(task, _)| task),
        }
    }
}

/// Builds the RT tasks' episodes from trace records.
#[derive(Debug, Default)]
pub struct Episodes {
    /// The RT tasks whose waits are recorded.
    watched: Vec<Pid>,
    /// Shortest wait kept, us.
    min_us: u64,
    tasks: HashMap<Pid, TaskState>,
    cpus: HashMap<usize, CpuState>,
    open: HashMap<Pid, Open>,
    /// Last `futex(2)` entry per watched task: (time, uaddr, op).
    futex: HashMap<Pid, (u64, u64, u32)>,
    /// A stack trace is being printed for the contention that just began in this task.
    stack_for: Option<Pid>,
    /// Finished episodes, in the order they ended.
    pub done: Vec<Episode>,
    pub dropped: u64,
    /// Events the kernel buffer lost, and when (the time of the last event before).
    pub losses: Vec<(u64, u64)>,
    /// Stretches an RT task ran on its CPU without leaving it, at least `min_us` long: what
    /// an unexplained spike's reason can say the trace did show.
    pub on_cpu: Vec<OnCpu>,
    last_us: u64,
}

impl Episodes {
    /// Record the waits of the tasks `watched` (the RT publisher and subscriber) that last at
    /// least `min_us`.
    pub fn new(watched: &[Pid], min_us: u64) -> Self {
        Episodes {
            watched: watched.to_vec(),
            min_us,
            ..Default::default()
        }
    }

    /// Episodes as a finished trace left them (tests of what reads them).
    #[cfg(test)]
    pub fn recorded(done: Vec<Episode>, losses: Vec<(u64, u64)>, on_cpu: Vec<OnCpu>) -> Self {
        Episodes {
            done,
            losses,
            on_cpu,
            ..Default::default()
        }
    }

    fn is_watched(&self, pid: Pid) -> bool {
        self.watched.contains(&pid)
    }

    /// Take one record.
    pub fn feed(&mut self, record: &Record) {
        let now = record.at_us.max(self.last_us);
        if record.at_us > 0 {
            self.last_us = now;
        }
        if !matches!(record.event, Event::StackFrame { .. }) {
            self.stack_for = None;
        }
        // Some kernels (Debian's 6.1-rt) print the comm fields of filtered events empty; the
        // line's own task name comes from the kernel's saved command lines and is always there.
        if !record.comm.is_empty() && record.pid != 0 {
            let state = self.tasks.entry(record.pid).or_default();
            if state.comm != record.comm {
                record.comm.clone_into(&mut state.comm);
            }
        }
        if !matches!(record.event, Event::StackFrame { .. } | Event::Lost { .. }) {
            self.seen_running(record.cpu, now, record.pid);
        }
        match &record.event {
            Event::Switch {
                prev_pid,
                prev_comm,
                prev_prio,
                prev_runnable,
                prev_blocked,
                next_pid,
                next_comm,
                next_prio,
            } => {
                // `prev` is the task the line is about: its header names it when the field is empty.
                let prev = Seen {
                    pid: *prev_pid,
                    comm: if prev_comm.is_empty() {
                        &record.comm
                    } else {
                        prev_comm
                    },
                    prio: *prev_prio,
                };
                let next = Seen {
                    pid: *next_pid,
                    comm: next_comm,
                    prio: *next_prio,
                };
                self.switch(record.cpu, now, prev, (*prev_runnable, *prev_blocked), next);
            }
            Event::Waking {
                pid, target_cpu, ..
            } => {
                let waker = self.task_ref(record.pid, &record.comm);
                self.waking(now, *pid, *target_cpu, waker);
            }
            Event::PiSetprio {
                pid,
                comm,
                old_prio,
                new_prio,
            } => self.pi_setprio(record.pid, now, *pid, comm, *old_prio, *new_prio),
            Event::ContentionBegin { address, flags } => {
                if self.is_watched(record.pid) {
                    self.begin_contention(record.pid, now, *address, flags);
                    self.stack_for = Some(record.pid);
                }
            }
            Event::ContentionEnd { .. } => {
                if let Some(open) = self.open.get(&record.pid)
                    && matches!(
                        open.kind,
                        OpenKind::Lock {
                            contended: true,
                            ..
                        }
                    )
                {
                    self.close(record.pid, now);
                }
            }
            Event::StackFrame { symbol } => self.stack_frame(symbol),
            Event::IrqEntry { irq, name } => {
                self.cpu(record.cpu).irq = Some((now, format!("{irq}:{name}")));
            }
            Event::IrqExit => {
                if let Some((start, name)) = self.cpu(record.cpu).irq.take() {
                    self.handler(record.cpu, start, now, Wait::Interrupt { name });
                }
            }
            Event::SoftirqEntry { action } => {
                self.cpu(record.cpu).softirq = Some((now, action.clone()));
            }
            Event::SoftirqExit => {
                if let Some((start, action)) = self.cpu(record.cpu).softirq.take() {
                    self.handler(record.cpu, start, now, Wait::Softirq { action });
                }
            }
            Event::FutexEnter { uaddr, op } => {
                if self.is_watched(record.pid) {
                    self.futex.insert(record.pid, (now, *uaddr, *op));
                }
            }
            Event::Lost { events, .. } => self.losses.push((self.last_us, *events)),
        }
    }

    /// Close every open wait at the end of the trace.
    pub fn finish(&mut self) {
        let pids: Vec<Pid> = self.open.keys().copied().collect();
        for pid in pids {
            self.close(pid, self.last_us);
        }
    }

    fn cpu(&mut self, cpu: usize) -> &mut CpuState {
        self.cpus.entry(cpu).or_default()
    }

    fn task_ref(&self, pid: Pid, comm: &str) -> TaskRef {
        let prio = self.tasks.get(&pid).map_or(NORMAL_PRIO, |t| t.prio);
        role::task(pid, comm, prio)
    }

    fn current_on(&self, cpu: usize) -> Option<TaskRef> {
        let pid = self.cpus.get(&cpu)?.current;
        let state = self.tasks.get(&pid)?;
        Some(role::task(pid, &state.comm, state.prio))
    }

    /// `prev` leaves `cpu` (`runnable`: preempted; `blocked`: in `D`), `next` gets it.
    fn switch(
        &mut self,
        cpu: usize,
        now: u64,
        prev: Seen,
        (prev_runnable, prev_blocked): (bool, bool),
        next: Seen,
    ) {
        self.charge_holders(cpu, now, prev.task(), prev_runnable, next.pid);
        let state = self.tasks.entry(prev.pid).or_default();
        prev.comm.clone_into(&mut state.comm);
        state.prio = prev.prio;
        state.cpu = Some(cpu);
        state.running = false;
        state.preempted_since = prev_runnable.then_some(now);
        let ran_since = state.running_since.take();
        if let Some(start_us) = ran_since
            && now - start_us >= self.min_us
            && self.watched.contains(&prev.pid)
            && self.on_cpu.len() < MAX_EPISODES
        {
            self.on_cpu.push(OnCpu {
                pid: prev.pid,
                start_us,
                end_us: now,
            });
        }
        if self.is_watched(prev.pid) {
            if let Some(open) = self.open.get_mut(&prev.pid) {
                open.left_cpu = true;
            } else if prev_runnable {
                self.open(prev.pid, now, OpenKind::Preempted { by: next.task() });
            } else if prev_blocked {
                self.open(prev.pid, now, OpenKind::Blocked { woken_by: None });
            }
        }
        let state = self.tasks.entry(next.pid).or_default();
        next.comm.clone_into(&mut state.comm);
        state.prio = next.prio;
        self.switch_in(cpu, now, next.pid);
    }

    /// `pid` emitted an event on `cpu`, so it runs there now: every event is written by the
    /// task on its CPU (or by an interrupt over it). Where the trace had another task there, it
    /// missed the switch: the filter drops switches between two normal tasks, and some kernels
    /// (this project's 6.18 CI guest, on its second CPU) write no `sched_switch` when a CPU
    /// leaves idle. The task that was there left at some unseen time, so it is only marked off
    /// its CPU (no on-CPU stretch, no new wait); `pid`'s own wait ends here, its first sign of
    /// running.
    fn seen_running(&mut self, cpu: usize, now: u64, pid: Pid) {
        let current = self.cpus.get(&cpu).map(|c| c.current);
        if current == Some(pid) {
            return;
        }
        if let Some(prev) = current {
            if let Some(task) = self.current_on(cpu) {
                self.charge_holders(cpu, now, task, false, pid);
            }
            if let Some(state) = self.tasks.get_mut(&prev)
                && state.cpu == Some(cpu)
            {
                state.running = false;
                state.running_since = None;
                state.preempted_since = None;
            }
            if self.is_watched(prev)
                && let Some(open) = self.open.get_mut(&prev)
            {
                open.left_cpu = true;
            }
        }
        self.switch_in(cpu, now, pid);
    }

    /// Lock holders waiting for `cpu`: the task that had it (`had`) had it until now.
    fn charge_holders(&mut self, cpu: usize, now: u64, had: TaskRef, preempted: bool, next: Pid) {
        for open in self.open.values_mut() {
            let OpenKind::Lock {
                holder: Some(holder),
                ..
            } = &mut open.kind
            else {
                continue;
            };
            if let Some(since) = holder.waiting_since
                && self.tasks.get(&holder.pid).and_then(|t| t.cpu) == Some(cpu)
            {
                holder.charge(had.clone(), now.saturating_sub(since));
                holder.waiting_since = (next != holder.pid).then_some(now);
            }
            if holder.pid == had.pid && preempted {
                holder.waiting_since = Some(now);
            }
        }
    }

    /// `pid` gets `cpu` at `now`: its wait for it, if it had one, ends.
    fn switch_in(&mut self, cpu: usize, now: u64, pid: Pid) {
        let state = self.tasks.entry(pid).or_default();
        state.cpu = Some(cpu);
        state.running = true;
        state.preempted_since = None;
        state.running_since = Some(now);
        self.cpu(cpu).current = pid;
        if self.is_watched(pid)
            && let Some(open) = self.open.get(&pid)
        {
            let ends = match &open.kind {
                OpenKind::Lock { contended, .. } => !contended && open.left_cpu,
                _ => true,
            };
            if ends {
                self.close(pid, now);
            }
        }
    }

    fn waking(&mut self, now: u64, pid: Pid, target_cpu: usize, waker: TaskRef) {
        if !self.is_watched(pid) {
            return;
        }
        if let Some(open) = self.open.get_mut(&pid) {
            if let OpenKind::Blocked { woken_by } = &mut open.kind {
                *woken_by = Some(waker);
            }
            return;
        }
        match self.cpus.get(&target_cpu).map(|c| c.current) {
            Some(0) => self.open(pid, now, OpenKind::IdleWakeup { cpu: target_cpu }),
            Some(current) if current != pid => {
                if let Some(by) = self.current_on(target_cpu) {
                    self.open(pid, now, OpenKind::WaitingForCpu { by });
                }
            }
            _ => {}
        }
    }

    fn pi_setprio(
        &mut self,
        waiter: Pid,
        now: u64,
        owner: Pid,
        comm: &str,
        old_prio: i32,
        new_prio: i32,
    ) {
        // The owner's priority as the trace now knows it (and its name, where the event gave it).
        let state = self.tasks.entry(owner).or_default();
        state.prio = new_prio;
        if !comm.is_empty() {
            comm.clone_into(&mut state.comm);
        }
        if !self.is_watched(waiter) || waiter == owner || new_prio >= old_prio {
            return;
        }
        let owner_state = self.tasks.get(&owner).cloned().unwrap_or_default();
        let waiting_since = if owner_state.running {
            None
        } else {
            // Runnable and off its CPU: charge the CPU's task from now (the wait's start).
            owner_state.preempted_since.map(|_| now)
        };
        let holder = OpenHolder {
            pid: owner,
            task: role::task(owner, &owner_state.comm, old_prio),
            boost_prio: new_prio,
            waiting_since,
            preemptors: Vec::new(),
        };
        if let Some(open) = self.open.get_mut(&waiter)
            && let OpenKind::Lock { holder: slot, .. } = &mut open.kind
        {
            match slot {
                Some(existing) if existing.pid == owner => {
                    existing.boost_prio = existing.boost_prio.min(new_prio)
                }
                _ => *slot = Some(holder),
            }
            return;
        }
        // No contention event on this path: a PI futex if the task is in FUTEX_LOCK_PI.
        let futex = self
            .futex
            .get(&waiter)
            .filter(|(_, _, op)| FUTEX_PI_OPS.contains(&(op & FUTEX_CMD_MASK)));
        let lock = LockRef {
            kind: if futex.is_some() {
                PI_FUTEX.to_string()
            } else {
                "rt_mutex".to_string()
            },
            address: None,
            futex_uaddr: futex.map(|(_, uaddr, _)| format!("{uaddr:#x}")),
            caller: None,
        };
        self.open(
            waiter,
            now,
            OpenKind::Lock {
                lock,
                contended: false,
                holder: Some(holder),
            },
        );
    }

    fn begin_contention(&mut self, pid: Pid, now: u64, address: u64, flags: &str) {
        if self.open.contains_key(&pid) {
            self.close(pid, now);
        }
        let lock = LockRef {
            kind: lock_kind(flags).to_string(),
            address: Some(format!("{address:#x}")),
            futex_uaddr: None,
            caller: None,
        };
        self.open(
            pid,
            now,
            OpenKind::Lock {
                lock,
                contended: true,
                holder: None,
            },
        );
    }

    /// The first frame of the stack outside the locking primitives names the caller.
    fn stack_frame(&mut self, symbol: &str) {
        let Some(pid) = self.stack_for else { return };
        if let Some(Open {
            kind: OpenKind::Lock { lock, .. },
            ..
        }) = self.open.get_mut(&pid)
            && lock.caller.is_none()
            && !is_lock_primitive(symbol)
        {
            lock.caller = Some(symbol.to_string());
        }
    }

    fn handler(&mut self, cpu: usize, start: u64, end: u64, wait: Wait) {
        let Some(current) = self.cpus.get(&cpu).map(|c| c.current) else {
            return;
        };
        if !self.is_watched(current) {
            return;
        }
        let Some(state) = self.tasks.get(&current) else {
            return;
        };
        let task = role::task(current, &state.comm, state.prio);
        self.push(Episode {
            task,
            start_us: start,
            end_us: end,
            wait,
        });
    }

    fn open(&mut self, pid: Pid, now: u64, kind: OpenKind) {
        self.open.insert(
            pid,
            Open {
                start_us: now,
                kind,
                left_cpu: false,
            },
        );
    }

    fn close(&mut self, pid: Pid, now: u64) {
        let Some(open) = self.open.remove(&pid) else {
            return;
        };
        let state = self.tasks.get(&pid).cloned().unwrap_or_default();
        let task = role::task(pid, &state.comm, state.prio);
        let wait = match open.kind {
            OpenKind::Lock { lock, holder, .. } => Wait::Lock {
                lock,
                holder: holder.map(|mut holder| {
                    if let Some(since) = holder.waiting_since.take() {
                        let cpu = self.tasks.get(&holder.pid).and_then(|t| t.cpu);
                        if let Some(by) = cpu.and_then(|cpu| self.current_on(cpu)) {
                            holder.charge(by, now.saturating_sub(since));
                        }
                    }
                    holder.close()
                }),
            },
            OpenKind::Preempted { by } => Wait::Preempted { by },
            OpenKind::WaitingForCpu { by } => Wait::WaitingForCpu { by },
            OpenKind::IdleWakeup { cpu } => Wait::IdleWakeup { cpu },
            OpenKind::Blocked { woken_by } => Wait::Blocked { woken_by },
        };
        self.push(Episode {
            task,
            start_us: open.start_us,
            end_us: now,
            wait,
        });
    }

    fn push(&mut self, episode: Episode) {
        if episode.end_us - episode.start_us < self.min_us {
            return;
        }
        if self.done.len() < MAX_EPISODES {
            self.done.push(episode);
        } else {
            self.dropped += 1;
        }
    }
}

/// One side of a `sched_switch`, as the trace gave it.
struct Seen<'a> {
    pid: Pid,
    comm: &'a str,
    prio: i32,
}

impl Seen<'_> {
    fn task(&self) -> TaskRef {
        role::task(self.pid, self.comm, self.prio)
    }
}

/// `lock:contention_begin`'s flags as a lock kind. On PREEMPT_RT, spinlock_t, rwlock_t and
/// mutexes are rt_mutex-based and flagged `RT`.
fn lock_kind(flags: &str) -> &'static str {
    let has = |flag: &str| flags.split('|').any(|f| f == flag);
    if has("RT") {
        "sleeping spinlock (rt_mutex)"
    } else if has("MUTEX") {
        "mutex"
    } else if has("SPIN") {
        "spinlock"
    } else if has("READ") || has("WRITE") {
        "rw_semaphore"
    } else {
        "lock"
    }
}

/// A frame of the locking code itself (or of the tracing that printed the stack), not the
/// function that wanted the lock.
fn is_lock_primitive(symbol: &str) -> bool {
    symbol.contains("spin_lock")
        || symbol.contains("slowlock")
        || [
            "rt_spin",
            "rtlock",
            "rt_mutex",
            "__rt_mutex",
            "mutex_lock",
            "__mutex",
            "_raw_spin",
            "queued_spin",
            "rwsem",
            "rwbase",
            "down_",
            "trace_",
            "__traceiter",
            "contention",
            "native_queued",
            "do_raw_spin",
            "rt_read",
            "rt_write",
            "__down",
            "stack_trace",
            "__ftrace",
        ]
        .iter()
        .any(|prefix| symbol.starts_with(prefix))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::event::parse;
    use crate::result::explain::TaskRole;

    fn run(watched: &[Pid], lines: &[&str]) -> Episodes {
        let mut episodes = Episodes::new(watched, 1);
        for line in lines {
            episodes.feed(&parse(line).unwrap_or_else(|| panic!("parses: {line}")));
        }
        episodes.finish();
        episodes
    }

    #[test]
    fn a_pi_futex_held_by_a_preempted_holder_is_one_lock_wait_with_its_holder_and_preemptor() {
        // The holder (FIFO 10) was preempted by a FIFO 50 burst before the RT task blocked.
        let episodes = run(
            &[300],
            &[
                "rtsoak-npub-200 [000] 1.000000: sched_switch: prev_comm=rtsoak-npub prev_pid=200 \
                 prev_prio=89 prev_state=R+ ==> next_comm=rtsoak-burst next_pid=201 next_prio=49",
                "rtsoak-pub-300 [001] 1.000500: sys_futex(uaddr: 0x7f0010, op: 0x86, val: 0, \
                 utime: 0, uaddr2: 0, val3: 0)",
                "rtsoak-pub-300 [001] 1.000510: sched_pi_setprio: comm=rtsoak-npub pid=200 \
                 oldprio=89 newprio=59",
                "rtsoak-pub-300 [001] 1.000520: sched_switch: prev_comm=rtsoak-pub prev_pid=300 \
                 prev_prio=59 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120",
                "rtsoak-burst-201 [000] 1.003000: sched_switch: prev_comm=rtsoak-burst \
                 prev_pid=201 prev_prio=49 prev_state=S ==> next_comm=rtsoak-npub next_pid=200 \
                 next_prio=59",
                "rtsoak-npub-200 [000] 1.003010: sched_pi_setprio: comm=rtsoak-npub pid=200 \
                 oldprio=59 newprio=89",
                "<idle>-0 [001] 1.003020: sched_switch: prev_comm=swapper/1 prev_pid=0 \
                 prev_prio=120 prev_state=R ==> next_comm=rtsoak-pub next_pid=300 next_prio=59",
            ],
        );
        assert_eq!(episodes.done.len(), 1, "{:#?}", episodes.done);
        let episode = &episodes.done[0];
        assert_eq!((episode.start_us, episode.end_us), (1_000_510, 1_003_020));
        let Wait::Lock { lock, holder } = &episode.wait else {
            panic!("a lock wait: {episode:?}")
        };
        assert_eq!(lock.kind, "PI futex (rt_mutex)");
        assert_eq!(lock.futex_uaddr.as_deref(), Some("0x7f0010"));
        let holder = holder.as_ref().expect("the holder is named");
        assert_eq!(
            (holder.task.pid, holder.task.role),
            (200, TaskRole::NoisePublisher)
        );
        assert_eq!(holder.boosted_to.as_deref(), Some("FIFO 40"));
        let by = holder
            .preempted_by
            .as_ref()
            .expect("its preemptor is named");
        assert_eq!(
            (by.pid, by.role, by.priority.as_str()),
            (201, TaskRole::Burst, "FIFO 50")
        );
        assert_eq!(
            holder.preempted_us, 2_490,
            "from the boost to the holder running again"
        );
    }

    /// One PI-futex round as this project's 6.18 CI guest traces it: the RT task's CPU leaves
    /// idle without a `sched_switch`, so its own next event is the first sign it runs again.
    fn round_without_the_switch_from_idle(at: f64, holder: Pid, burst: Pid) -> Vec<String> {
        let t = |offset_us: u64| format!("{:.6}", at + offset_us as f64 / 1e6);
        vec![
            format!(
                "rtsoak-npub-{holder} [000] {}: sched_switch: prev_comm=rtsoak-npub \
                 prev_pid={holder} prev_prio=89 prev_state=R+ ==> next_comm=rtsoak-burst \
                 next_pid={burst} next_prio=49",
                t(0)
            ),
            format!(
                "<idle>-0 [001] {}: sched_waking: comm=rtsoak-pub pid=300 prio=59 \
                 target_cpu=001",
                t(100)
            ),
            format!(
                "rtsoak-pub-300 [001] {}: sys_futex(uaddr: 0x7f0010, op: 0x86, val: 0, \
                 utime: 0, uaddr2: 0, val3: 0)",
                t(500)
            ),
            format!(
                "rtsoak-pub-300 [001] {}: sched_pi_setprio: comm=rtsoak-npub pid={holder} \
                 oldprio=89 newprio=59",
                t(510)
            ),
            format!(
                "rtsoak-pub-300 [001] {}: sched_switch: prev_comm=rtsoak-pub prev_pid=300 \
                 prev_prio=59 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120",
                t(520)
            ),
            format!(
                "rtsoak-burst-{burst} [000] {}: sched_switch: prev_comm=rtsoak-burst \
                 prev_pid={burst} prev_prio=49 prev_state=X ==> next_comm=rtsoak-npub \
                 next_pid={holder} next_prio=59",
                t(10_000)
            ),
            format!(
                "rtsoak-npub-{holder} [000] {}: sched_pi_setprio: comm=rtsoak-npub \
                 pid={holder} oldprio=59 newprio=89",
                t(10_010)
            ),
            format!(
                "rtsoak-npub-{holder} [000] {}: sched_waking: comm=rtsoak-pub pid=300 \
                 prio=59 target_cpu=001",
                t(10_012)
            ),
            format!(
                "rtsoak-pub-300 [001] {}: sys_futex(uaddr: 0x7f0010, op: 0x87, val: 0, \
                 utime: 0, uaddr2: 0, val3: 0)",
                t(10_040)
            ),
            format!(
                "rtsoak-pub-300 [001] {}: sched_switch: prev_comm=rtsoak-pub prev_pid=300 \
                 prev_prio=59 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120",
                t(10_080)
            ),
        ]
    }

    #[test]
    fn a_task_seen_running_without_a_switch_to_it_ends_its_wait_there() {
        // Before, the first round's lock wait never ended, and the second round's holder
        // replaced the first's: both rounds were blamed on the last holder.
        let mut lines = round_without_the_switch_from_idle(1.0, 200, 201);
        lines.extend(round_without_the_switch_from_idle(1.03, 202, 203));
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let episodes = run(&[300], &lines);
        let locks: Vec<_> = episodes
            .done
            .iter()
            .filter_map(|e| match &e.wait {
                Wait::Lock {
                    holder: Some(holder),
                    ..
                } => Some((
                    e.start_us,
                    e.end_us,
                    holder.task.pid,
                    holder.preempted_by.as_ref().map(|by| by.pid),
                )),
                _ => None,
            })
            .collect();
        assert_eq!(
            locks,
            [
                (1_000_510, 1_010_040, 200, Some(201)),
                (1_030_510, 1_040_040, 202, Some(203)),
            ],
            "{:#?}",
            episodes.done
        );
        // The wakeup onto the idle CPU ends at the task's first event, not at the next switch.
        let idle: Vec<_> = episodes
            .done
            .iter()
            .filter(|e| matches!(e.wait, Wait::IdleWakeup { .. }))
            .map(|e| (e.start_us, e.end_us))
            .collect();
        assert_eq!(idle, [(1_000_100, 1_000_500), (1_030_100, 1_030_500)]);
    }

    #[test]
    fn a_contended_sleeping_lock_names_its_address_caller_and_owner() {
        let episodes = run(
            &[244],
            &[
                "rtsoak-pub-244 [005] 2.000000: contention_begin: 0xffff888100aa0010 (flags=RT)",
                " => rt_spin_lock+0x3c/0x70",
                " => futex_wake+0x90/0x1b0",
                "rtsoak-pub-244 [005] 2.000003: sched_pi_setprio: comm=rtsoak-npub pid=248 \
                 oldprio=79 newprio=59",
                "rtsoak-pub-244 [005] 2.000004: sched_switch: prev_comm=rtsoak-pub prev_pid=244 \
                 prev_prio=59 prev_state=D ==> next_comm=swapper/5 next_pid=0 next_prio=120",
                "<idle>-0 [005] 2.000400: sched_switch: prev_comm=swapper/5 prev_pid=0 \
                 prev_prio=120 prev_state=R ==> next_comm=rtsoak-pub next_pid=244 next_prio=59",
                "rtsoak-pub-244 [005] 2.000401: contention_end: 0xffff888100aa0010 (ret=0)",
            ],
        );
        assert_eq!(
            episodes.done.len(),
            1,
            "one wait, not a lock and a block: {episodes:#?}"
        );
        let Wait::Lock { lock, holder } = &episodes.done[0].wait else {
            panic!()
        };
        assert_eq!(lock.kind, "sleeping spinlock (rt_mutex)");
        assert_eq!(lock.address.as_deref(), Some("0xffff888100aa0010"));
        assert_eq!(lock.caller.as_deref(), Some("futex_wake"));
        assert_eq!(holder.as_ref().unwrap().task.pid, 248);
        assert_eq!(episodes.done[0].end_us - episodes.done[0].start_us, 401);
    }

    #[test]
    fn preemption_waiting_for_cpu_blocking_and_interrupts_are_told_apart() {
        let episodes = run(
            &[10],
            &[
                // Preempted by a kernel thread for 50 us.
                "rtsoak-sub-10 [2] 3.000000: sched_switch: prev_comm=rtsoak-sub prev_pid=10 \
                 prev_prio=19 prev_state=R+ ==> next_comm=ktimers/2 next_pid=30 next_prio=1",
                "ktimers/2-30 [2] 3.000050: sched_switch: prev_comm=ktimers/2 prev_pid=30 \
                 prev_prio=1 prev_state=S ==> next_comm=rtsoak-sub next_pid=10 next_prio=19",
                // An interrupt while it runs.
                "rtsoak-sub-10 [2] 3.000100: irq_handler_entry: irq=24 name=virtio0",
                "rtsoak-sub-10 [2] 3.000130: irq_handler_exit: irq=24 ret=handled",
                // Sleeps (normal wait: no episode), then is woken while irq/24 runs.
                "rtsoak-sub-10 [2] 3.000200: sched_switch: prev_comm=rtsoak-sub prev_pid=10 \
                 prev_prio=19 prev_state=S ==> next_comm=irq/24-virtio0 next_pid=40 next_prio=0",
                "rtsoak-pub-9 [3] 3.000300: sched_waking: comm=rtsoak-sub pid=10 prio=19 \
                 target_cpu=002",
                "irq/24-virtio0-40 [2] 3.000380: sched_switch: prev_comm=irq/24-virtio0 \
                 prev_pid=40 prev_prio=0 prev_state=S ==> next_comm=rtsoak-sub next_pid=10 \
                 next_prio=19",
                // Blocked in D, woken by a kworker.
                "rtsoak-sub-10 [2] 3.000400: sched_switch: prev_comm=rtsoak-sub prev_pid=10 \
                 prev_prio=19 prev_state=D ==> next_comm=swapper/2 next_pid=0 next_prio=120",
                "kworker/2:1-50 [2] 3.000600: sched_waking: comm=rtsoak-sub pid=10 prio=19 \
                 target_cpu=002",
                "<idle>-0 [2] 3.000610: sched_switch: prev_comm=swapper/2 prev_pid=0 \
                 prev_prio=120 prev_state=R ==> next_comm=rtsoak-sub next_pid=10 next_prio=19",
            ],
        );
        let kinds: Vec<(u64, String)> = episodes
            .done
            .iter()
            .map(|e| {
                let chain = crate::result::explain::Chain {
                    task: e.task.clone(),
                    wait: e.wait.clone(),
                    blamed_us: 0,
                    share_percent: 0.0,
                };
                (e.end_us - e.start_us, chain.cause())
            })
            .collect();
        assert_eq!(
            kinds,
            [
                (
                    50,
                    "preempted by a kernel thread ktimers/2 (FIFO 98)".to_string()
                ),
                (30, "interrupt handler 24:virtio0 on its CPU".to_string()),
                (
                    80,
                    "woken while its CPU ran an interrupt thread irq/24-virtio0 (FIFO 99)"
                        .to_string()
                ),
                (
                    210,
                    "waiting in the kernel until woken by a kernel thread kworker/2 (normal)"
                        .to_string()
                ),
            ]
        );
    }

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

    #[test]
    fn empty_comm_fields_as_debians_6_1_rt_prints_them_are_filled_from_the_line_header() {
        let episodes = run(
            &[300],
            &[
                "rtsoak-npub-200 [000] 1.000000: sched_switch: prev_comm= prev_pid=200 \
                 prev_prio=89 prev_state=R+ ==> next_comm=rtsoak-burst next_pid=201 next_prio=49",
                "rtsoak-pub-300 [001] 1.000510: sched_pi_setprio: comm= pid=200 oldprio=89 \
                 newprio=59",
                "rtsoak-pub-300 [001] 1.000520: sched_switch: prev_comm= prev_pid=300 \
                 prev_prio=59 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120",
                "rtsoak-burst-201 [000] 1.003000: sched_switch: prev_comm= prev_pid=201 \
                 prev_prio=49 prev_state=S ==> next_comm=rtsoak-npub next_pid=200 next_prio=59",
                "<idle>-0 [001] 1.003020: sched_switch: prev_comm= prev_pid=0 prev_prio=120 \
                 prev_state=R ==> next_comm=rtsoak-pub next_pid=300 next_prio=59",
            ],
        );
        let Wait::Lock {
            holder: Some(holder),
            ..
        } = &episodes.done[0].wait
        else {
            panic!("{:?}", episodes.done)
        };
        assert_eq!(holder.task.role, TaskRole::NoisePublisher);
        assert_eq!(episodes.done[0].task.role, TaskRole::RtPublisher);
        let by = holder.preempted_by.as_ref().unwrap();
        assert_eq!((by.pid, by.role), (201, TaskRole::Burst));
    }
}
