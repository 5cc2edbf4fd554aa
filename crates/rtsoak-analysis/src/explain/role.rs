//! Who a traced task is to rtsoak, from the name it carries in the trace: every worker names
//! itself by role (`record::Role::comm`), and the kernel's own threads have well-known names.

use super::event::Pid;
use rtsoak_record::Role;
use rtsoak_record::result::explain::{TaskRef, TaskRole};

/// Name prefixes of kernel threads that preempt or delay user tasks.
const KERNEL_THREADS: [&str; 12] = [
    "ksoftirqd/",
    "kworker/",
    "rcu",
    "migration/",
    "ktimers/",
    "cpuhp/",
    "watchdog/",
    "kthreadd",
    "irq_work/",
    "idle_inject/",
    "kcompactd",
    "kswapd",
];

/// The task `pid` named `comm` at kernel priority `prio`.
pub(super) fn task(pid: Pid, comm: &str, prio: i32) -> TaskRef {
    TaskRef {
        pid,
        comm: comm.to_string(),
        role: role(pid, comm),
        priority: priority(prio),
    }
}

fn role(pid: Pid, comm: &str) -> TaskRole {
    if let Some(role) = Role::from_comm(comm) {
        return match role {
            Role::Publisher => TaskRole::RtPublisher,
            Role::Subscriber => TaskRole::RtSubscriber,
            Role::NoisePublisher => TaskRole::NoisePublisher,
            Role::NoiseSubscriber => TaskRole::NoiseSubscriber,
            Role::Burst => TaskRole::Burst,
            Role::Load => TaskRole::LoadGenerator,
        };
    }
    if pid == 0 || comm.starts_with("swapper/") || comm == "<idle>" {
        TaskRole::Idle
    } else if comm.starts_with("irq/") {
        TaskRole::InterruptThread
    } else if KERNEL_THREADS.iter().any(|prefix| comm.starts_with(prefix)) {
        TaskRole::KernelThread
    } else if comm.starts_with("rtsoak") {
        TaskRole::Rtsoak
    } else {
        TaskRole::Other
    }
}

/// A kernel priority as a user names it: 0-99 are real-time (kernel 49 is `FIFO 50`), 100 and
/// above are normal tasks.
pub(super) fn priority(prio: i32) -> String {
    if (0..100).contains(&prio) {
        format!("FIFO {}", 99 - prio)
    } else {
        "normal".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_come_from_the_names_workers_give_themselves_and_the_kernels_threads() {
        let cases = [
            (1, "rtsoak-npub", TaskRole::NoisePublisher),
            (1, "rtsoak-burst", TaskRole::Burst),
            (1, "rtsoak-pub", TaskRole::RtPublisher),
            (1, "rtsoak", TaskRole::Rtsoak),
            (1, "irq/24-virtio0", TaskRole::InterruptThread),
            (1, "ksoftirqd/3", TaskRole::KernelThread),
            (1, "rcuc/3", TaskRole::KernelThread),
            (0, "swapper/3", TaskRole::Idle),
            (1, "bash", TaskRole::Other),
        ];
        for (pid, comm, role) in cases {
            assert_eq!(task(pid, comm, 120).role, role, "{comm}");
        }
        assert_eq!(priority(49), "FIFO 50");
        assert_eq!(priority(59), "FIFO 40");
        assert_eq!(priority(120), "normal");
    }
}
