//! The wait for the RT CPUs, as the details and the Markdown report show it: how long the
//! invocation queued for its RT CPUs (`--wait-for-cpus`) and whom it waited behind. A nightly
//! run that started an hour late behind another soak says so beside its figures, not only in
//! the JSON.

use crate::text::seconds;
use rtsoak_record::{CpuHolder, CpuHolderRole, CpuWait};

/// A line for the wait, then one per process it waited behind; none where the invocation took
/// its CPUs at once.
pub(crate) fn lines(wait: Option<&CpuWait>) -> Vec<String> {
    let Some(wait) = wait else {
        return Vec::new();
    };
    let ahead = match wait.queue_position {
        0 | 1 => "no other run queued ahead".to_string(),
        2 => "1 other run queued ahead".to_string(),
        n => format!("{} other runs queued ahead", n - 1),
    };
    let mut lines = vec![format!(
        "waited {} s for the RT CPUs before the first run ({ahead} on arrival)",
        seconds(wait.waited_ns)
    )];
    lines.extend(wait.waited_behind.iter().map(behind));
    lines
}

/// `  behind pid 4242 (uid 0) holding CPUs 2,3: rtsoak run ...`, with what the kernel could
/// not say left out.
fn behind(holder: &CpuHolder) -> String {
    let who = match (holder.pid, holder.uid) {
        (Some(pid), Some(uid)) => format!("pid {pid} (uid {uid})"),
        (Some(pid), None) => format!("pid {pid}"),
        _ => "a process the kernel did not name".to_string(),
    };
    let role = match holder.role {
        CpuHolderRole::Holding => "holding",
        CpuHolderRole::Queued => "queued for",
    };
    let cpus: Vec<String> = holder.cpus.iter().map(usize::to_string).collect();
    let noun = if holder.cpus.len() == 1 {
        "CPU"
    } else {
        "CPUs"
    };
    let command = holder
        .command
        .as_deref()
        .map_or(String::new(), |c| format!(": {c}"));
    format!("  behind {who} {role} {noun} {}{command}", cpus.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holder(role: CpuHolderRole, cpus: Vec<usize>, pid: Option<u32>) -> CpuHolder {
        CpuHolder {
            role,
            cpus,
            pid,
            uid: pid.map(|_| 0),
            command: pid.map(|_| "rtsoak run -t futex".to_string()),
        }
    }

    #[test]
    fn no_wait_says_nothing() {
        assert!(lines(None).is_empty());
    }

    #[test]
    fn a_wait_names_its_length_its_place_and_everyone_ahead() {
        let wait = CpuWait {
            waited_ns: 95_500_000_000,
            queue_position: 2,
            waited_behind: vec![
                holder(CpuHolderRole::Holding, vec![2, 3], Some(4242)),
                holder(CpuHolderRole::Queued, vec![3], None),
            ],
        };
        assert_eq!(
            lines(Some(&wait)),
            [
                "waited 95.5 s for the RT CPUs before the first run (1 other run queued ahead on \
                 arrival)",
                "  behind pid 4242 (uid 0) holding CPUs 2,3: rtsoak run -t futex",
                "  behind a process the kernel did not name queued for CPU 3",
            ]
        );
    }

    #[test]
    fn the_first_in_the_queue_waited_for_the_holder_alone() {
        let wait = CpuWait {
            waited_ns: 3_000_000_000,
            queue_position: 1,
            waited_behind: Vec::new(),
        };
        assert_eq!(
            lines(Some(&wait)),
            [
                "waited 3 s for the RT CPUs before the first run (no other run queued ahead on arrival)"
            ]
        );
    }
}
