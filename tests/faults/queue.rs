//! `--wait-for-cpus` with real runs: waiters get the RT CPUs in the order they asked, a client
//! that asks again as its run ends goes to the back, and a run that does not wait is refused
//! while others queue. Invariants only (which run came after which, who named whom), never a
//! figure; other rtsoak runs on this machine may share the queue, so positions are bounds.

use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use super::common::process::{finish, start, wait_for_rt_worker};
use super::common::{assert_code_passed_or_starved, load, rtsoak_path, serial};
use rtsoak_record::result::ResultDoc;
use rtsoak_record::{CpuHolderRole, CpuWait};

const SOAK: [&str; 9] = [
    "run",
    "-t",
    "eventfd",
    "-q",
    "--profile",
    "ci",
    "--no-noise",
    "--duration",
    "1s",
];

/// A short run that queues for the CPUs, its result in `dir`.
fn waiting(dir: &Path) -> Child {
    start(&[&SOAK[..], &["--wait-for-cpus", "60s"]].concat(), dir)
}

/// Wait until process `pid` holds a ticket in the queue of one of this machine's CPUs.
fn until_queued(pid: u32) {
    let cpus = std::thread::available_parallelism().unwrap().get();
    let queued = || {
        (0..cpus).any(|cpu| {
            (1..=64).any(|number| {
                matches!(
                    rtsoak_sys::cpu_lock::listener_of(&format!("rtsoak-cpu{cpu}-ticket-{number}")),
                    Ok(Some((holder, _))) if holder == pid
                )
            })
        })
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while !queued() {
        assert!(Instant::now() < deadline, "pid {pid} never queued");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The run finished (passed, or starved by the machine: see `assert_code_passed_or_starved`)
/// and said where it waited; its result.
fn finished_after_waiting(child: Child, dir: &Path) -> (ResultDoc, CpuWait) {
    let (output, stderr) = finish(child);
    let doc = load(dir);
    assert_code_passed_or_starved(output.status.code(), &doc, &stderr);
    assert!(stderr.contains("queue position"), "{stderr}");
    assert!(stderr.contains("Took RT CPUs"), "{stderr}");
    let wait = doc.cpu_wait.clone().expect("the result records the wait");
    (doc, wait)
}

/// Whether `wait` names process `pid` in `role`.
fn names(wait: &CpuWait, role: CpuHolderRole, pid: u32) -> bool {
    wait.waited_behind
        .iter()
        .any(|h| h.role == role && h.pid == Some(pid))
}

#[test]
fn two_waiters_and_a_client_running_back_to_back_get_the_rt_cpus_in_arrival_order() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name);
    let client = start(&[&SOAK[..8], &["4s"]].concat(), &path("client-first"));
    let client_pid = client.id();
    wait_for_rt_worker(client_pid as i32, 1);
    let first = waiting(&path("first"));
    let first_pid = first.id();
    until_queued(first_pid);
    let second = waiting(&path("second"));
    let second_pid = second.id();
    until_queued(second_pid);

    // Not waiting, it is refused, and told of the queue.
    let output = Command::new(rtsoak_path())
        .args(SOAK)
        .arg("-o")
        .arg(path("refused"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(6), "{stderr}");
    assert!(stderr.contains("queued for it"), "{stderr}");

    // The client's run ends, and it starts the next at once.
    let (output, stderr) = finish(client);
    assert_code_passed_or_starved(output.status.code(), &load(&path("client-first")), &stderr);
    let again = waiting(&path("client-again"));

    let (first, first_wait) = finished_after_waiting(first, &path("first"));
    let (second, second_wait) = finished_after_waiting(second, &path("second"));
    let (again, again_wait) = finished_after_waiting(again, &path("client-again"));
    let client = load(&path("client-first"));
    for (earlier, later, what) in [
        (
            &client,
            &first,
            "the first waiter after the client's first run",
        ),
        (&first, &second, "the second waiter after the first"),
        (&second, &again, "the client's next run after both waiters"),
    ] {
        assert!(
            later.runs[0].started_at >= earlier.finished_at.clone().unwrap(),
            "{what}"
        );
    }
    assert!(
        names(&first_wait, CpuHolderRole::Holding, client_pid),
        "{first_wait:?}"
    );
    assert!(
        names(&second_wait, CpuHolderRole::Queued, first_pid),
        "{second_wait:?}"
    );
    assert!(
        names(&again_wait, CpuHolderRole::Queued, second_pid),
        "{again_wait:?}"
    );
    // Each found someone queued ahead when it arrived.
    assert!(second_wait.queue_position >= 2, "{second_wait:?}");
    assert!(again_wait.queue_position >= 2, "{again_wait:?}");
}
