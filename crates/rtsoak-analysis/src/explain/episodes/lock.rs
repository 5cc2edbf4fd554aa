//! Lock waits: an RT task waiting for a lock, from `lock:contention_begin` (or, where the kernel
//! has no lock event on that path, as for a PI futex, from the `sched_pi_setprio` the waiter
//! emits) until it has the lock. The waiter's `sched_pi_setprio` names the owner and its boost;
//! from then on the owner's CPU is followed, so the time it spent runnable but off-CPU, and who
//! had its CPU, are known. The owner's CPU history is kept from before the wait began: the task
//! that preempts a holder usually got there before the RT task blocked.
//!
//! It owns what a lock wait knows while it lasts and what it becomes; the walker decides when
//! one opens and closes, and it never changes what the trace knows of the scheduler.

use super::sched::{Sched, TaskState};
use crate::explain::event::Pid;
use crate::explain::role;
use rtsoak_record::result::explain::{Holder, LockKind, LockRef, TaskRef, Wait};

/// futex(2) operations that wait on an rt_mutex (`FUTEX_CMD_MASK` applied).
const FUTEX_PI_OPS: [u32; 4] = [6, 8, 11, 13];
const FUTEX_CMD_MASK: u32 = 0x7f;

/// The last `futex(2)` an RT task entered: a PI operation names the PI futex a lock wait with
/// no contention event is on.
#[derive(Debug, Clone, Copy)]
pub(super) struct FutexCall {
    pub(super) uaddr: u64,
    pub(super) op: u32,
}

/// An RT task's lock wait in progress.
#[derive(Debug, Clone)]
pub(super) struct LockWait {
    lock: LockRef,
    /// Opened by `contention_begin` (ends at `contention_end`), else by PI alone.
    contended: bool,
    holder: Option<OpenHolder>,
}

impl LockWait {
    /// `lock:contention_begin` on the lock at `address`, of the kind its `flags` say; the
    /// owner is not known yet.
    pub(super) fn contended(address: u64, flags: &str) -> Self {
        LockWait {
            lock: LockRef {
                kind: lock_kind(flags),
                address: Some(format!("{address:#x}")),
                futex_uaddr: None,
                caller: None,
            },
            contended: true,
            holder: None,
        }
    }

    /// A boost of `holder` with no contention event before it: an rt_mutex, and a PI futex if
    /// the task's last `futex` call is a PI operation.
    pub(super) fn priority_inherited(futex: Option<&FutexCall>, holder: OpenHolder) -> Self {
        let futex = futex.filter(|call| FUTEX_PI_OPS.contains(&(call.op & FUTEX_CMD_MASK)));
        LockWait {
            lock: LockRef {
                kind: if futex.is_some() {
                    LockKind::PiFutex
                } else {
                    LockKind::RtMutex
                },
                address: None,
                futex_uaddr: futex.map(|call| format!("{:#x}", call.uaddr)),
                caller: None,
            },
            contended: false,
            holder: Some(holder),
        }
    }

    /// Priority inheritance named `holder` the owner: a new owner replaces the one followed,
    /// the same one keeps its history and the highest boost it got.
    pub(super) fn name_holder(&mut self, holder: OpenHolder) {
        match &mut self.holder {
            Some(existing) if existing.pid == holder.pid => {
                existing.boost_prio = existing.boost_prio.min(holder.boost_prio)
            }
            slot => *slot = Some(holder),
        }
    }

    /// A frame of the stack printed at contention: the first outside the locking primitives
    /// names the caller.
    pub(super) fn stack_frame(&mut self, symbol: &str) {
        if self.lock.caller.is_none() && !is_lock_primitive(symbol) {
            self.lock.caller = Some(symbol.to_string());
        }
    }

    /// Opened by `contention_begin`, so `contention_end` ends it.
    pub(super) fn ends_at_contention_end(&self) -> bool {
        self.contended
    }

    /// Without a contention event the wait ends when the task is back on its CPU, once it has
    /// left it (`left_cpu`): before that it has not slept on the lock yet.
    pub(super) fn ends_on_switch_in(&self, left_cpu: bool) -> bool {
        !self.contended && left_cpu
    }

    /// `had` had `cpu` until `now` and left it (`preempted`: runnable), `next` gets it: if the
    /// holder waited for that CPU, `had` kept it from it.
    pub(super) fn charge_holder(
        &mut self,
        sched: &Sched,
        cpu: usize,
        now: u64,
        had: &TaskRef,
        preempted: bool,
        next: Pid,
    ) {
        let Some(holder) = &mut self.holder else {
            return;
        };
        if let Some(since) = holder.waiting_since
            && sched.cpu_of(holder.pid) == Some(cpu)
        {
            holder.charge(had.clone(), now.saturating_sub(since));
            holder.waiting_since = (next != holder.pid).then_some(now);
        }
        if holder.pid == had.pid && preempted {
            holder.waiting_since = Some(now);
        }
    }

    /// The finished wait at `now`.
    pub(super) fn close(self, sched: &Sched, now: u64) -> Wait {
        Wait::Lock {
            lock: self.lock,
            holder: self.holder.map(|holder| holder.close(sched, now)),
        }
    }
}

/// The owner of the lock an RT task waits on, followed while it waits.
#[derive(Debug, Clone)]
pub(super) struct OpenHolder {
    pid: Pid,
    task: TaskRef,
    boost_prio: i32,
    /// Off-CPU while runnable since this time (if it is now).
    waiting_since: Option<u64>,
    /// Time each preemptor had the holder's CPU, us.
    preemptors: Vec<(TaskRef, u64)>,
}

impl OpenHolder {
    /// `owner` (as the trace knew it, `state`) boosted from `old_prio` to `new_prio` at `now`.
    pub(super) fn boosted(
        owner: Pid,
        state: &TaskState,
        (old_prio, new_prio): (i32, i32),
        now: u64,
    ) -> Self {
        let waiting_since = if state.running {
            None
        } else {
            // Runnable and off its CPU: charge the CPU's task from now (the wait's start).
            state.preempted_since.map(|_| now)
        };
        OpenHolder {
            pid: owner,
            task: role::task(owner, &state.comm, old_prio),
            boost_prio: new_prio,
            waiting_since,
            preemptors: Vec::new(),
        }
    }

    fn charge(&mut self, by: TaskRef, us: u64) {
        if us == 0 {
            return;
        }
        match self.preemptors.iter_mut().find(|(t, _)| t.pid == by.pid) {
            Some((_, total)) => *total += us,
            None => self.preemptors.push((by, us)),
        }
    }

    /// The holder as the wait ends at `now`: a wait for its CPU still going is charged to the
    /// task on it.
    fn close(mut self, sched: &Sched, now: u64) -> Holder {
        if let Some(since) = self.waiting_since.take()
            && let Some(by) = sched.cpu_of(self.pid).and_then(|cpu| sched.current_on(cpu))
        {
            self.charge(by, now.saturating_sub(since));
        }
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

/// `lock:contention_begin`'s flags as a lock kind. On PREEMPT_RT, spinlock_t, rwlock_t and
/// mutexes are rt_mutex-based and flagged `RT`.
fn lock_kind(flags: &str) -> LockKind {
    let has = |flag: &str| flags.split('|').any(|f| f == flag);
    if has("RT") {
        LockKind::SleepingSpinlock
    } else if has("MUTEX") {
        LockKind::Mutex
    } else if has("SPIN") {
        LockKind::Spinlock
    } else if has("READ") || has("WRITE") {
        LockKind::RwSemaphore
    } else {
        LockKind::Other
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
    use crate::explain::episodes::tests::run;
    use rtsoak_record::result::explain::{LockKind, TaskRole, Wait};

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
        assert_eq!(lock.kind, LockKind::PiFutex);
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
        assert_eq!(lock.kind, LockKind::SleepingSpinlock);
        assert_eq!(lock.address.as_deref(), Some("0xffff888100aa0010"));
        assert_eq!(lock.caller.as_deref(), Some("futex_wake"));
        assert_eq!(holder.as_ref().unwrap().task.pid, 248);
        assert_eq!(episodes.done[0].end_us - episodes.done[0].start_us, 401);
    }
}
