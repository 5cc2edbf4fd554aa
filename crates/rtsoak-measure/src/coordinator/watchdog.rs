//! The watchdog: ends a run whose RT worker stopped making progress (stopped, stuck in the
//! kernel, spinning outside its loop) instead of waiting on it until the planned end. It reads
//! only the heartbeats the workers publish in their [`WorkerSlot`]s and `/proc/PID/stat`; it
//! never signals a worker itself (the coordinator's reap does that).

use std::sync::atomic::Ordering;

use rtsoak_sys::region::{Region, WorkerSlot, phase};

/// Silence shorter than this is never called a hang, whatever the period: a loaded VM can
/// stall a process for hundreds of milliseconds.
pub(crate) const WATCHDOG_MIN_NS: u64 = 2_000_000_000;

/// How long a worker may go without a heartbeat: two periods plus the delivery timeout, and
/// never less than [`WATCHDOG_MIN_NS`].
pub(super) fn deadline_ns(period_ns: u64, delivery_timeout_ns: u64) -> u64 {
    period_ns
        .saturating_mul(2)
        .saturating_add(delivery_timeout_ns)
        .max(WATCHDOG_MIN_NS)
}

/// One supervised worker: its role's name and its slot.
pub(crate) struct Watched<'a> {
    /// `RT publisher`, `RT subscriber`.
    pub(crate) name: &'static str,
    /// Its live slot.
    pub(crate) slot: &'a WorkerSlot,
}

/// The first worker (in the order given: the publisher first, since a silent publisher also
/// silences the subscriber) that has been silent past `deadline_ns` at `now_ns`, described.
/// Silence counts from `start_ns` (the first period) when a worker has not beaten yet.
pub(crate) fn silent(
    region: &Region,
    watched: &[Watched<'_>],
    start_ns: u64,
    now_ns: u64,
    deadline_ns: u64,
) -> Option<String> {
    if region.phase() != phase::RUN || now_ns < start_ns {
        return None;
    }
    watched.iter().find_map(|worker| {
        let last_ns = worker
            .slot
            .heartbeat_ns
            .load(Ordering::Relaxed)
            .max(start_ns);
        let silent_ns = now_ns.saturating_sub(last_ns);
        (silent_ns > deadline_ns).then(|| {
            let pid = worker.slot.pid.load(Ordering::Relaxed);
            format!(
                "the {} (pid {pid}) stopped responding: no heartbeat for {} ms (limit {} ms, \
                 process state {}); it was killed and the run ended. Look for what stopped it \
                 (a debugger, SIGSTOP, a throttled or starved CPU)",
                worker.name,
                silent_ns / 1_000_000,
                deadline_ns / 1_000_000,
                process_state(pid)
            )
        })
    })
}

/// The one-letter state of `pid` from `/proc/PID/stat` with its meaning, or `unknown`.
fn process_state(pid: i32) -> String {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The state follows the command name, which is in parentheses and may hold spaces.
    let state = stat
        .rfind(')')
        .and_then(|end| stat[end + 1..].split_whitespace().next())
        .unwrap_or("?");
    let meaning = match state {
        "R" => "running",
        "S" => "sleeping",
        "D" => "in uninterruptible sleep",
        "T" | "t" => "stopped",
        "Z" => "zombie",
        _ => "unknown",
    };
    format!("{state} ({meaning})")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsoak_sys::region::{RT_PUBLISHER_SLOT, RT_SUBSCRIBER_SLOT, SharedRegion};

    fn watched(region: &Region) -> [Watched<'_>; 2] {
        [
            Watched {
                name: "RT publisher",
                slot: &region.workers[RT_PUBLISHER_SLOT],
            },
            Watched {
                name: "RT subscriber",
                slot: &region.workers[RT_SUBSCRIBER_SLOT],
            },
        ]
    }

    #[test]
    fn the_deadline_is_never_shorter_than_the_minimum() {
        assert_eq!(deadline_ns(500_000, 1_000_000_000), WATCHDOG_MIN_NS);
        assert_eq!(deadline_ns(2_000_000_000, 1_000_000_000), 5_000_000_000);
        assert_eq!(deadline_ns(u64::MAX, u64::MAX), u64::MAX);
    }

    #[test]
    fn a_silent_publisher_is_named_before_the_subscriber_it_silences() {
        let shared = SharedRegion::create().unwrap();
        let region = shared.get();
        region.control.phase.store(phase::RUN, Ordering::Release);
        region.workers[RT_PUBLISHER_SLOT]
            .pid
            .store(4242, Ordering::Relaxed);
        let start = 1_000;
        let found = silent(region, &watched(region), start, start + 3_000, 2_000).unwrap();
        assert!(found.starts_with("the RT publisher (pid 4242) stopped responding: no heartbeat"));
    }

    #[test]
    fn a_silent_subscriber_is_named_while_the_publisher_beats() {
        let shared = SharedRegion::create().unwrap();
        let region = shared.get();
        region.control.phase.store(phase::RUN, Ordering::Release);
        region.workers[RT_PUBLISHER_SLOT]
            .heartbeat_ns
            .store(9_000, Ordering::Relaxed);
        let found = silent(region, &watched(region), 1_000, 10_000, 2_000).unwrap();
        assert!(found.starts_with("the RT subscriber"), "{found}");
    }

    #[test]
    fn beating_workers_and_runs_outside_the_run_phase_are_left_alone() {
        let shared = SharedRegion::create().unwrap();
        let region = shared.get();
        for slot in [RT_PUBLISHER_SLOT, RT_SUBSCRIBER_SLOT] {
            region.workers[slot]
                .heartbeat_ns
                .store(9_000, Ordering::Relaxed);
        }
        assert_eq!(silent(region, &watched(region), 1_000, 10_000, 2_000), None);
        assert_eq!(
            silent(region, &watched(region), 1_000, 100_000, 2_000),
            None,
            "setup"
        );
        region.control.phase.store(phase::RUN, Ordering::Release);
        assert!(silent(region, &watched(region), 1_000, 100_000, 2_000).is_some());
    }

    #[test]
    fn a_stopped_process_reads_as_stopped() {
        // Its child stopping and ending rings the process's bell (SIGCHLD): the bell's own
        // tests must not hear it.
        let _alone = super::super::bell::ringing_alone();
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGSTOP,
        )
        .unwrap();
        let mut state = String::new();
        for _ in 0..100 {
            state = process_state(pid);
            if state.starts_with('T') {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(state, "T (stopped)");
        assert_eq!(process_state(-1), "? (unknown)");
    }
}
