//! Processes and threads: which tasks the scheduler may place on given CPUs
//! (`/proc/PID/task/TID/status` `Cpus_allowed_list`), whether each is a kernel thread
//! (`PF_KTHREAD` in `stat`), and whether `irqbalance` runs (`/proc/PID/comm`).
//!
//! Owns: reading and parsing these files. Never judges whether a task belongs on a CPU, and
//! never moves one. Tasks vanish while they are read: a task that disappears is skipped.

use super::SysRoot;
use rtsoak_record::Task;
use rtsoak_record::cpulist;

/// `PF_KTHREAD` in the flags field of `/proc/PID/stat` (include/linux/sched.h).
const PF_KTHREAD: u64 = 0x0020_0000;

/// Process ids: the all-digit entries of `/proc`, sorted numerically.
fn pids(root: &SysRoot, dir: &str) -> Vec<i32> {
    let mut pids: Vec<i32> = root
        .list_dir(dir)
        .iter()
        .filter_map(|entry| entry.parse().ok())
        .collect();
    pids.sort_unstable();
    pids
}

/// Every thread allowed on at least one of `cpus`, except those of `exclude_pid` (rtsoak
/// itself), in pid then tid order.
pub(crate) fn tasks_allowed_on(
    root: &SysRoot,
    cpus: &[usize],
    exclude_pid: Option<i32>,
) -> Vec<Task> {
    let mut tasks = Vec::new();
    for pid in pids(root, "/proc") {
        if Some(pid) == exclude_pid {
            continue;
        }
        for tid in pids(root, &format!("/proc/{pid}/task")) {
            let dir = format!("/proc/{pid}/task/{tid}");
            let Some(task) = read_task(root, &dir, pid, tid) else {
                continue;
            };
            if task.allowed.iter().any(|cpu| cpus.contains(cpu)) {
                tasks.push(task);
            }
        }
    }
    tasks
}

fn read_task(root: &SysRoot, dir: &str, pid: i32, tid: i32) -> Option<Task> {
    let (comm, flags) = parse_stat(&root.read(&format!("{dir}/stat")).ok()?)?;
    let status = root.read(&format!("{dir}/status")).ok()?;
    let allowed = status.lines().find_map(|line| {
        let list = line.strip_prefix("Cpus_allowed_list:")?;
        cpulist::parse_or_empty(list.trim()).ok()
    })?;
    Some(Task {
        pid,
        tid,
        comm,
        kernel_thread: flags & PF_KTHREAD != 0,
        allowed,
    })
}

/// `comm` and `flags` of a `/proc/PID/stat` line. `comm` is in parentheses and may itself hold
/// spaces and parentheses, so the fields are counted from the last `)`: state, ppid, pgrp,
/// session, tty_nr, tpgid, then flags. Any process names itself, so `comm` is escaped here,
/// before anything prints or records it.
pub(crate) fn parse_stat(stat: &str) -> Option<(String, u64)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let comm = rtsoak_record::text::printable(stat.get(open + 1..close)?).into_owned();
    let flags = stat
        .get(close + 1..)?
        .split_whitespace()
        .nth(6)?
        .parse()
        .ok()?;
    Some((comm, flags))
}

/// Pids of running `irqbalance` processes (it moves interrupts around, onto RT CPUs too).
pub(crate) fn irqbalance_pids(root: &SysRoot) -> Vec<i32> {
    pids(root, "/proc")
        .into_iter()
        .filter(|pid| {
            root.read_trimmed(&format!("/proc/{pid}/comm")).as_deref() == Some("irqbalance")
        })
        .collect()
}

/// The pid `/proc/self` points at: the reading process on the live machine, `None` in a
/// fixture tree without that link.
pub(crate) fn own_pid(root: &SysRoot) -> Option<i32> {
    root.read_link("/proc/self")?.to_str()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_from_the_last_parenthesis() {
        let stat = "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0";
        assert_eq!(parse_stat(stat), Some(("kthreadd".into(), 2_129_984)));
        let tricky = "77 (a) b (c) R 1 77 77 0 -1 4194560 12 0";
        assert_eq!(parse_stat(tricky), Some(("a) b (c".into(), 4_194_560)));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn only_a_kernel_thread_bound_to_one_cpu_counts_as_per_cpu() {
        let task = |kernel_thread, allowed: &[usize]| Task {
            pid: 1,
            tid: 1,
            comm: "x".into(),
            kernel_thread,
            allowed: allowed.to_vec(),
        };
        assert!(task(true, &[5]).is_per_cpu_kernel_thread());
        assert!(!task(true, &[0, 5]).is_per_cpu_kernel_thread());
        assert!(!task(false, &[5]).is_per_cpu_kernel_thread());
    }
}
