//! The words for what held an RT task back: the one place a [`Cause`] or a spike's [`Why`]
//! becomes a sentence. The analysis emits them as identities and nothing keys on these words,
//! so rewording a phrase here changes what a reader sees and nothing else (`tests` below holds
//! a wording that shouts every cause to that).

use rtsoak_record::result::cause::{Cause, Culprit};
use rtsoak_record::result::explain::{LockKind, TaskRole, WaitShare, Why};

/// The cause in words, by role: `preempted by a kernel thread ktimers/1 (FIFO 98)`. A cause an
/// older rtsoak stored in words this one does not recognise keeps those words.
pub fn cause(cause: &Cause) -> String {
    worded(match cause {
        Cause::Lock {
            lock,
            caller,
            holder,
        } => {
            let mut text = format!("blocked on a {}", lock_kind(lock));
            if let Some(caller) = caller {
                text += &format!(" in {caller}");
            }
            if let Some(holder) = holder {
                text += &format!(" held by {}", role(holder.role));
                if let Some(boost) = &holder.boosted_to {
                    text += &format!(" boosted to {boost}");
                }
                if let Some(by) = &holder.preempted_by {
                    text += &format!(" and preempted by {}", culprit(by));
                }
            }
            text
        }
        Cause::Preempted { by } => format!("preempted by {}", culprit(by)),
        Cause::WaitingForCpu { by } => format!("woken while its CPU ran {}", culprit(by)),
        Cause::IdleWakeup => {
            "woken onto its idle CPU and slow to run (idle exit, wakeup IPI)".to_string()
        }
        Cause::Blocked { woken_by } => match woken_by {
            Some(by) => format!("waiting in the kernel until woken by {}", culprit(by)),
            None => "waiting in the kernel".to_string(),
        },
        Cause::Interrupt { name } => format!("interrupt handler {name} on its CPU"),
        Cause::Softirq { action } => format!("softirq {action} on its CPU"),
        Cause::Unknown { text } => text.clone(),
    })
}

/// A diff's or a decision's cause: a cause, or (none) the spikes no wait explained.
pub fn cause_or_unexplained(c: Option<&Cause>) -> String {
    c.map_or_else(|| worded("unexplained".to_string()), cause)
}

/// A spike's verdict in one line: its cause and for how long, or why it has none.
pub fn why(why: &Why) -> String {
    match why {
        Why::Explained(chain) => format!("{} for {} us", cause(&chain.cause()), chain.blamed_us),
        Why::Unexplained {
            reason: Some(reason),
            ..
        } => format!("unexplained: {reason}"),
        Why::Unexplained {
            largest_wait,
            on_cpu_percent,
            events_lost_near,
            reason: None,
        } => format!(
            "unexplained: {}",
            worded(unexplained(
                largest_wait.as_ref(),
                *on_cpu_percent,
                *events_lost_near
            ))
        ),
    }
}

/// What the trace showed of a spike no wait covered half of.
fn unexplained(
    largest_wait: Option<&WaitShare>,
    on_cpu_percent: Option<f64>,
    events_lost_near: bool,
) -> String {
    let mut text = match largest_wait {
        Some(wait) => format!(
            "the longest wait in the trace covers {:.0}% of it ({})",
            wait.share_percent,
            cause(&wait.cause)
        ),
        None => "no wait of the RT tasks in the trace during it".to_string(),
    };
    if let Some(percent) = on_cpu_percent {
        text += &format!(
            "; the RT task was on its CPU for {percent:.0}% of it and the trace shows nothing \
             holding it back there (time in the kernel path itself, or taken from the CPU below \
             the kernel: a hypervisor, firmware)"
        );
    }
    if events_lost_near {
        text += "; the kernel lost trace events around it";
    }
    text
}

/// The lock's kind in words; one this build does not know, as it was stored.
fn lock_kind(kind: &LockKind) -> &str {
    match kind {
        LockKind::SleepingSpinlock => "sleeping spinlock (rt_mutex)",
        LockKind::PiFutex => "PI futex (rt_mutex)",
        LockKind::RtMutex => "rt_mutex",
        LockKind::Mutex => "mutex",
        LockKind::Spinlock => "spinlock",
        LockKind::RwSemaphore => "rw_semaphore",
        LockKind::Other => "lock",
        LockKind::Unknown(text) => text,
    }
}

/// `a burst thread (FIFO 50)`; a task the role does not name is named by its comm.
fn culprit(c: &Culprit) -> String {
    match &c.name {
        Some(name) => format!("{} {name} ({})", role(c.role), c.priority),
        None => format!("{} ({})", role(c.role), c.priority),
    }
}

/// The role in words, with an article.
fn role(role: TaskRole) -> &'static str {
    match role {
        TaskRole::RtPublisher => "the RT publisher",
        TaskRole::RtSubscriber => "the RT subscriber",
        TaskRole::NoisePublisher => "a noise publisher",
        TaskRole::NoiseSubscriber => "a noise subscriber",
        TaskRole::Burst => "a burst thread",
        TaskRole::LoadGenerator => "a load generator",
        TaskRole::Rtsoak => "an rtsoak process",
        TaskRole::InterruptThread => "an interrupt thread",
        TaskRole::KernelThread => "a kernel thread",
        TaskRole::Idle => "the idle task",
        TaskRole::Other => "a task outside rtsoak",
    }
}

#[cfg(test)]
thread_local! {
    /// A test's other wording: every cause and reason upper-cased.
    pub(crate) static SHOUT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// `text` in the wording in force (a test's shouting one, or the words as written).
fn worded(text: String) -> String {
    #[cfg(test)]
    if SHOUT.get() {
        return text.to_uppercase();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsoak_record::result::cause::LockHolder;

    fn kernel(name: &str, priority: &str) -> Culprit {
        Culprit {
            role: TaskRole::KernelThread,
            name: Some(name.into()),
            priority: priority.into(),
        }
    }

    #[test]
    fn every_lock_kind_reads_as_the_phrase_results_stored_before_the_ids() {
        let words = |lock| {
            cause(&Cause::Lock {
                lock,
                caller: None,
                holder: None,
            })
        };
        let phrases = [
            "sleeping spinlock (rt_mutex)",
            "PI futex (rt_mutex)",
            "rt_mutex",
            "mutex",
            "spinlock",
            "rw_semaphore",
            "lock",
            "ww_mutex",
        ];
        for phrase in phrases {
            assert_eq!(
                words(LockKind::parse(phrase)),
                format!("blocked on a {phrase}")
            );
        }
        assert_eq!(
            LockKind::parse("ww_mutex"),
            LockKind::Unknown("ww_mutex".into())
        );
    }

    #[test]
    fn causes_read_as_they_always_have() {
        let lock = Cause::Lock {
            lock: LockKind::SleepingSpinlock,
            caller: Some("futex_wake".into()),
            holder: Some(LockHolder {
                role: TaskRole::NoiseSubscriber,
                boosted_to: Some("FIFO 40".into()),
                preempted_by: Some(Culprit {
                    role: TaskRole::Burst,
                    name: None,
                    priority: "FIFO 50".into(),
                }),
            }),
        };
        assert_eq!(
            cause(&lock),
            "blocked on a sleeping spinlock (rt_mutex) in futex_wake held by a noise subscriber \
             boosted to FIFO 40 and preempted by a burst thread (FIFO 50)"
        );
        assert_eq!(
            cause(&Cause::Blocked {
                woken_by: Some(kernel("kworker/2", "normal"))
            }),
            "waiting in the kernel until woken by a kernel thread kworker/2 (normal)"
        );
        let unexplained = Why::Unexplained {
            largest_wait: Some(WaitShare {
                cause: Cause::Preempted {
                    by: kernel("ktimers/1", "FIFO 98"),
                },
                share_percent: 40.0,
            }),
            on_cpu_percent: None,
            events_lost_near: true,
            reason: None,
        };
        assert_eq!(
            why(&unexplained),
            "unexplained: the longest wait in the trace covers 40% of it (preempted by a kernel \
             thread ktimers/1 (FIFO 98)); the kernel lost trace events around it"
        );
    }
}

#[cfg(test)]
#[path = "why_tests.rs"]
mod rewording;
