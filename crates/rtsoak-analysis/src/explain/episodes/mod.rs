//! The trace, read as a sequence of waits of the RT tasks. Fed one parsed line at a time (in the
//! order `trace_pipe` gives them), it follows every CPU's running task and every task's CPU
//! ([`sched`]), and records an [`Episode`] whenever an RT task is held back. Each kind of wait
//! has a file of its own, with what it knows while it lasts and what it becomes:
//!
//! - [`lock`]: waiting for a lock, and the owner priority inheritance names, followed on its
//!   CPU while the RT task waits;
//! - [`preempted`]: the RT task left its CPU still runnable, until it is back;
//! - [`wakeup`]: woken, until it runs: while its CPU ran another task (waiting for CPU), or
//!   while it was idle (idle wakeup);
//! - [`blocked`]: left its CPU in `D` without a lock event, until it runs; who woke it;
//! - [`handler`]: an interrupt or softirq handler ran on its CPU while it was there.
//!
//! This walker holds what they share: which event opens which kind, when each ends, the
//! scheduler's state, and the episodes kept. Only waits at least `min_us` long are kept: a
//! cause must cover half of a spike over the threshold, so shorter ones can explain nothing
//! (and there is one idle wakeup per period). Nothing here guesses: a wait the trace does not
//! show is not recorded.

use std::collections::HashMap;

use super::event::{Event, Pid, Record};
use super::role;
use blocked::Blocked;
use handler::Handlers;
use lock::{FutexCall, LockWait, OpenHolder};
use preempted::Preempted;
use rtsoak_record::result::explain::{TaskRef, Wait};
use sched::Sched;
use wakeup::Wakeup;

mod blocked;
mod handler;
mod lock;
mod preempted;
mod sched;
mod wakeup;

/// Most episodes kept for one run; beyond it they are counted, not stored.
const MAX_EPISODES: usize = 2_000_000;

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

/// An RT task's wait in progress.
#[derive(Debug, Clone)]
struct Open {
    start_us: u64,
    kind: OpenKind,
    /// The task has left its CPU since the wait began (a lock wait without a contention event
    /// ends when it is back).
    left_cpu: bool,
}

/// The kinds of wait that last until an event ends them (a handler's is whole at its exit).
#[derive(Debug, Clone)]
enum OpenKind {
    Lock(LockWait),
    Preempted(Preempted),
    Woken(Wakeup),
    Blocked(Blocked),
}

impl OpenKind {
    /// Whether the task getting its CPU back ends the wait (`left_cpu`: it left since the wait
    /// began).
    fn ends_on_switch_in(&self, left_cpu: bool) -> bool {
        match self {
            OpenKind::Lock(lock) => lock.ends_on_switch_in(left_cpu),
            _ => true,
        }
    }

    /// The finished wait at `now`.
    fn close(self, sched: &Sched, now: u64) -> Wait {
        match self {
            OpenKind::Lock(lock) => lock.close(sched, now),
            OpenKind::Preempted(preempted) => preempted.close(),
            OpenKind::Woken(wakeup) => wakeup.close(),
            OpenKind::Blocked(blocked) => blocked.close(),
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
    sched: Sched,
    /// The interrupt and softirq handlers running on each CPU.
    handlers: HashMap<usize, Handlers>,
    open: HashMap<Pid, Open>,
    /// Last `futex(2)` entry per watched task.
    futex: HashMap<Pid, FutexCall>,
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
            let state = self.sched.task_mut(record.pid);
            if state.comm != record.comm {
                record.comm.clone_into(&mut state.comm);
            }
        }
        if !matches!(record.event, Event::StackFrame { .. } | Event::Lost { .. }) {
            self.seen_running(record.cpu, now, record.pid);
        }
        self.dispatch(record, now);
    }

    /// Act on one record's event, at `now`.
    fn dispatch(&mut self, record: &Record, now: u64) {
        match &record.event {
            Event::Switch { .. } => self.switch_record(record, now),
            Event::Waking {
                pid, target_cpu, ..
            } => {
                let waker = self.sched.task_ref(record.pid, &record.comm);
                self.waking(now, *pid, *target_cpu, waker);
            }
            Event::PiSetprio {
                pid,
                comm,
                old_prio,
                new_prio,
            } => self.pi_setprio(record.pid, now, *pid, comm, (*old_prio, *new_prio)),
            Event::ContentionBegin { address, flags } => {
                if self.is_watched(record.pid) {
                    self.begin_contention(record.pid, now, *address, flags);
                    self.stack_for = Some(record.pid);
                }
            }
            Event::ContentionEnd { .. } => {
                if let Some(Open {
                    kind: OpenKind::Lock(lock),
                    ..
                }) = self.open.get(&record.pid)
                    && lock.ends_at_contention_end()
                {
                    self.close(record.pid, now);
                }
            }
            Event::StackFrame { symbol } => self.stack_frame(symbol),
            Event::IrqEntry { irq, name } => self.handlers(record.cpu).irq_entry(now, *irq, name),
            Event::IrqExit => {
                if let Some((start, wait)) = self.handlers(record.cpu).irq_exit() {
                    self.handler(record.cpu, start, now, wait);
                }
            }
            Event::SoftirqEntry { action } => self.handlers(record.cpu).softirq_entry(now, action),
            Event::SoftirqExit => {
                if let Some((start, wait)) = self.handlers(record.cpu).softirq_exit() {
                    self.handler(record.cpu, start, now, wait);
                }
            }
            Event::FutexEnter { uaddr, op } => {
                if self.is_watched(record.pid) {
                    let call = FutexCall {
                        uaddr: *uaddr,
                        op: *op,
                    };
                    self.futex.insert(record.pid, call);
                }
            }
            Event::Lost { events, .. } => self.losses.push((self.last_us, *events)),
        }
    }

    /// A `sched_switch` record.
    fn switch_record(&mut self, record: &Record, now: u64) {
        let Event::Switch {
            prev_pid,
            prev_comm,
            prev_prio,
            prev_runnable,
            prev_blocked,
            next_pid,
            next_comm,
            next_prio,
        } = &record.event
        else {
            return;
        };
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
        self.switch(record.cpu, now, prev, *prev_runnable, *prev_blocked, next);
    }

    /// Close every open wait at the end of the trace.
    pub fn finish(&mut self) {
        let pids: Vec<Pid> = self.open.keys().copied().collect();
        for pid in pids {
            self.close(pid, self.last_us);
        }
    }

    fn handlers(&mut self, cpu: usize) -> &mut Handlers {
        self.handlers.entry(cpu).or_default()
    }

    /// `prev` leaves `cpu` (`runnable`: preempted; `blocked`: in `D`), `next` gets it.
    fn switch(
        &mut self,
        cpu: usize,
        now: u64,
        prev: Seen,
        prev_runnable: bool,
        prev_blocked: bool,
        next: Seen,
    ) {
        self.charge_holders(cpu, now, prev.task(), prev_runnable, next.pid);
        let state = self.sched.task_mut(prev.pid);
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
                let preempted = Preempted::by(next.task());
                self.open(prev.pid, now, OpenKind::Preempted(preempted));
            } else if prev_blocked {
                self.open(prev.pid, now, OpenKind::Blocked(Blocked::default()));
            }
        }
        let state = self.sched.task_mut(next.pid);
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
        let current = self.sched.current.get(&cpu).copied();
        if current == Some(pid) {
            return;
        }
        if let Some(prev) = current {
            if let Some(task) = self.sched.current_on(cpu) {
                self.charge_holders(cpu, now, task, false, pid);
            }
            if let Some(state) = self.sched.tasks.get_mut(&prev)
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
            if let OpenKind::Lock(lock) = &mut open.kind {
                lock.charge_holder(&self.sched, cpu, now, &had, preempted, next);
            }
        }
    }

    /// `pid` gets `cpu` at `now`: its wait for it, if it had one, ends.
    fn switch_in(&mut self, cpu: usize, now: u64, pid: Pid) {
        let state = self.sched.task_mut(pid);
        state.cpu = Some(cpu);
        state.running = true;
        state.preempted_since = None;
        state.running_since = Some(now);
        self.sched.current.insert(cpu, pid);
        if self.is_watched(pid)
            && let Some(open) = self.open.get(&pid)
            && open.kind.ends_on_switch_in(open.left_cpu)
        {
            self.close(pid, now);
        }
    }

    /// `waker` wakes `pid` onto `target_cpu`: a blocked task learns who woke it, and one not
    /// waiting yet waits for its CPU.
    fn waking(&mut self, now: u64, pid: Pid, target_cpu: usize, waker: TaskRef) {
        if !self.is_watched(pid) {
            return;
        }
        if let Some(open) = self.open.get_mut(&pid) {
            if let OpenKind::Blocked(blocked) = &mut open.kind {
                blocked.woken_by(waker);
            }
            return;
        }
        if let Some(wakeup) = Wakeup::of(&self.sched, pid, target_cpu) {
            self.open(pid, now, OpenKind::Woken(wakeup));
        }
    }

    /// `waiter` set `owner`'s priority from `old_prio` to `new_prio` (priority inheritance): a
    /// boost by a watched task names the owner of the lock it waits on, and opens that lock
    /// wait where no contention event did.
    fn pi_setprio(
        &mut self,
        waiter: Pid,
        now: u64,
        owner: Pid,
        comm: &str,
        (old_prio, new_prio): (i32, i32),
    ) {
        // The owner's priority as the trace now knows it (and its name, where the event gave it).
        let state = self.sched.task_mut(owner);
        state.prio = new_prio;
        if !comm.is_empty() {
            comm.clone_into(&mut state.comm);
        }
        if !self.is_watched(waiter) || waiter == owner || new_prio >= old_prio {
            return;
        }
        let state = self.sched.task_mut(owner);
        let holder = OpenHolder::boosted(owner, state, (old_prio, new_prio), now);
        if let Some(Open {
            kind: OpenKind::Lock(lock),
            ..
        }) = self.open.get_mut(&waiter)
        {
            lock.name_holder(holder);
            return;
        }
        // No contention event on this path: a PI futex if the task is in FUTEX_LOCK_PI.
        let lock = LockWait::priority_inherited(self.futex.get(&waiter), holder);
        self.open(waiter, now, OpenKind::Lock(lock));
    }

    fn begin_contention(&mut self, pid: Pid, now: u64, address: u64, flags: &str) {
        if self.open.contains_key(&pid) {
            self.close(pid, now);
        }
        let lock = LockWait::contended(address, flags);
        self.open(pid, now, OpenKind::Lock(lock));
    }

    /// A frame of the stack printed for the contention that just began.
    fn stack_frame(&mut self, symbol: &str) {
        let Some(pid) = self.stack_for else { return };
        if let Some(Open {
            kind: OpenKind::Lock(lock),
            ..
        }) = self.open.get_mut(&pid)
        {
            lock.stack_frame(symbol);
        }
    }

    /// A handler ran on `cpu` from `start` to `end`: a wait of the RT task there, if one is.
    fn handler(&mut self, cpu: usize, start: u64, end: u64, wait: Wait) {
        let Some(task) = self
            .sched
            .current_on(cpu)
            .filter(|task| self.is_watched(task.pid))
        else {
            return;
        };
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
        let task = self.sched.named(pid);
        let wait = open.kind.close(&self.sched, now);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::event::parse;
    use rtsoak_record::result::cause::{Cause, Culprit};
    use rtsoak_record::result::explain::TaskRole;

    /// The episodes of `watched` in `lines`, keeping every wait of a microsecond or more.
    pub(super) fn run(watched: &[Pid], lines: &[&str]) -> Episodes {
        let mut episodes = Episodes::new(watched, 1);
        for line in lines {
            episodes.feed(&parse(line).unwrap_or_else(|| panic!("parses: {line}")));
        }
        episodes.finish();
        episodes
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
        let kinds: Vec<(u64, Cause)> = episodes
            .done
            .iter()
            .map(|e| {
                let chain = rtsoak_record::result::explain::Chain {
                    task: e.task.clone(),
                    wait: e.wait.clone(),
                    blamed_us: 0,
                    share_percent: 0.0,
                };
                (e.end_us - e.start_us, chain.cause())
            })
            .collect();
        let culprit = |role, name: &str, priority: &str| Culprit {
            role,
            name: Some(name.into()),
            priority: priority.into(),
        };
        assert_eq!(
            kinds,
            [
                (
                    50,
                    Cause::Preempted {
                        by: culprit(TaskRole::KernelThread, "ktimers/2", "FIFO 98")
                    }
                ),
                (
                    30,
                    Cause::Interrupt {
                        name: "24:virtio0".into()
                    }
                ),
                (
                    80,
                    Cause::WaitingForCpu {
                        by: culprit(TaskRole::InterruptThread, "irq/24-virtio0", "FIFO 99")
                    }
                ),
                (
                    210,
                    Cause::Blocked {
                        woken_by: Some(culprit(TaskRole::KernelThread, "kworker/2", "normal"))
                    }
                ),
            ]
        );
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
