//! What held an RT task back, as an identity: the same value for every spike it explains,
//! whichever pids played each part, so a series' causes add up across runs and a diff pairs
//! them across results by value. A cause is never worded here: the report crate words it, and
//! nothing keys on those words, so rewording one changes no result, count or pairing.

use serde::{Deserialize, Serialize};

use super::explain::{Chain, LockKind, TaskRef, TaskRole, Wait};

/// One cause of spikes. In the JSON an object whose `kind` is its stable id.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Cause {
    /// Blocked on a lock.
    Lock {
        /// The lock's kind, as the chain names it.
        lock: LockKind,
        /// The kernel function that took it, from the stack at contention.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        caller: Option<String>,
        /// Who held it, where priority inheritance named the owner.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        holder: Option<LockHolder>,
    },
    /// Runnable, and another task had its CPU.
    Preempted { by: Culprit },
    /// Woken, and its CPU was busy with another task.
    WaitingForCpu { by: Culprit },
    /// Woken onto its idle CPU and slow to run (idle-state exit, wakeup IPI, a VM's host).
    IdleWakeup,
    /// Blocked in the kernel without a lock event.
    Blocked {
        /// The task that woke it, if the trace showed one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        woken_by: Option<Culprit>,
    },
    /// A hard interrupt handler on its CPU.
    Interrupt { name: String },
    /// A softirq on its CPU.
    Softirq { action: String },
    /// A cause an older rtsoak stored in words this one does not recognise, kept with them:
    /// it pairs only with the same words.
    Unknown { text: String },
}

/// A task that held an RT task back, by its part in the run, not its pid.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Culprit {
    pub role: TaskRole,
    /// Its name where the role alone does not say who (a kernel or interrupt thread, another
    /// rtsoak process, a task outside rtsoak), a kworker's number cut off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `FIFO 50` for a real-time priority, `normal` otherwise.
    pub priority: String,
}

/// The holder of a lock an RT task blocked on.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct LockHolder {
    pub role: TaskRole,
    /// The priority inheritance gave it (`FIFO 80`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boosted_to: Option<String>,
    /// The task that had its CPU longest while the RT task waited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preempted_by: Option<Culprit>,
}

impl Chain {
    /// The cause this chain shows, by role: the same for every spike it explains.
    pub fn cause(&self) -> Cause {
        match &self.wait {
            Wait::Lock { lock, holder } => Cause::Lock {
                lock: lock.kind.clone(),
                caller: lock.caller.clone(),
                holder: holder.as_ref().map(|h| LockHolder {
                    role: h.task.role,
                    boosted_to: h.boosted_to.clone(),
                    preempted_by: h.preempted_by.as_ref().map(TaskRef::culprit),
                }),
            },
            Wait::Preempted { by } => Cause::Preempted { by: by.culprit() },
            Wait::WaitingForCpu { by } => Cause::WaitingForCpu { by: by.culprit() },
            Wait::IdleWakeup { .. } => Cause::IdleWakeup,
            Wait::Blocked { woken_by } => Cause::Blocked {
                woken_by: woken_by.as_ref().map(TaskRef::culprit),
            },
            Wait::Interrupt { name } => Cause::Interrupt { name: name.clone() },
            Wait::Softirq { action } => Cause::Softirq {
                action: action.clone(),
            },
        }
    }
}

impl TaskRef {
    /// This task as a cause names it.
    pub fn culprit(&self) -> Culprit {
        let named = matches!(
            self.role,
            TaskRole::KernelThread | TaskRole::InterruptThread | TaskRole::Rtsoak | TaskRole::Other
        );
        Culprit {
            role: self.role,
            name: named.then(|| self.kind()),
            priority: self.priority.clone(),
        }
    }

    /// The comm, with a kworker's pool-local number cut off (`kworker/u8:17` is `kworker/u8`,
    /// `kworker/1:2H` is `kworker/1H`): the kernel numbers workers as it creates them, so the
    /// number would split one cause into many.
    fn kind(&self) -> String {
        match self
            .comm
            .strip_prefix("kworker/")
            .and_then(|rest| rest.split_once(':'))
        {
            Some((pool, worker)) => {
                let high = if worker.ends_with('H') { "H" } else { "" };
                format!("kworker/{pool}{high}")
            }
            None => self.comm.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kworkers_number_does_not_split_a_cause_but_a_cpu_bound_threads_cpu_does() {
        let name = |comm: &str, role| {
            TaskRef {
                pid: 7,
                comm: comm.to_string(),
                role,
                priority: "normal".to_string(),
            }
            .culprit()
            .name
        };
        let kernel = TaskRole::KernelThread;
        assert_eq!(name("kworker/u8:17", kernel).as_deref(), Some("kworker/u8"));
        assert_eq!(name("kworker/1:2H", kernel).as_deref(), Some("kworker/1H"));
        assert_eq!(name("ksoftirqd/1", kernel).as_deref(), Some("ksoftirqd/1"));
        assert_eq!(name("rtsoak-pub", TaskRole::Burst), None, "a role says who");
    }

    #[test]
    fn a_cause_is_written_as_its_kind_and_fields() {
        let cause = Cause::Preempted {
            by: Culprit {
                role: TaskRole::KernelThread,
                name: Some("ktimers/1".into()),
                priority: "FIFO 98".into(),
            },
        };
        let json = serde_json::to_string(&cause).unwrap();
        assert_eq!(
            json,
            r#"{"kind":"preempted","by":{"role":"kernel_thread","name":"ktimers/1","priority":"FIFO 98"}}"#
        );
        assert_eq!(serde_json::from_str::<Cause>(&json).unwrap(), cause);
        assert_eq!(
            serde_json::to_string(&Cause::IdleWakeup).unwrap(),
            r#"{"kind":"idle_wakeup"}"#
        );
    }

    #[test]
    fn a_lock_cause_stored_with_the_old_phrase_is_the_same_cause_as_one_stored_with_the_id() {
        let old: Cause =
            serde_json::from_str(r#"{"kind":"lock","lock":"PI futex (rt_mutex)"}"#).unwrap();
        let new: Cause = serde_json::from_str(r#"{"kind":"lock","lock":"pi_futex"}"#).unwrap();
        let pi_futex = Cause::Lock {
            lock: LockKind::PiFutex,
            caller: None,
            holder: None,
        };
        assert_eq!((&old, &new), (&pi_futex, &pi_futex));
        assert_eq!(
            serde_json::to_string(&old).unwrap(),
            r#"{"kind":"lock","lock":"pi_futex"}"#
        );
    }
}
