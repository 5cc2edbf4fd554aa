//! rtsoak as a process group the tests can reach into: started in a group of its own, its RT
//! workers found by their report memfd and its other workers by their task name, and what is
//! left of the group after it ends.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use super::rtsoak_path;

/// Start rtsoak with `args` in a process group of its own (the group id is its pid).
pub(crate) fn start(args: &[&str], dir: &Path) -> Child {
    Command::new(rtsoak_path())
        .args(args)
        .arg("-o")
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap()
}

/// Fields after the command name in `/proc/PID/stat` (state first), if the process exists.
pub(crate) fn stat_fields(pid: i32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = stat.rsplit_once(')')?.1;
    Some(after.split_whitespace().map(str::to_string).collect())
}

/// Live (zombies excluded) processes of process group `pgid`.
pub(crate) fn group_members(pgid: i32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| stat_fields(*pid).is_some_and(|f| f[0] != "Z" && f[2].parse() == Ok(pgid)))
        .collect()
}

/// Wait up to `limit` for the group to empty; the members still alive after it.
pub(crate) fn survivors_after(pgid: i32, limit: Duration) -> Vec<i32> {
    let deadline = Instant::now() + limit;
    while !group_members(pgid).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    group_members(pgid)
}

/// The RT worker in `slot` (0 publisher, 1 subscriber) of the coordinator `pgid`: found by the
/// report memfd every worker keeps open as fd 5.
pub(crate) fn rt_worker(pgid: i32, slot: usize) -> Option<i32> {
    let name = format!("rtsoak-report-{slot} ");
    group_members(pgid).into_iter().find(|pid| {
        std::fs::read_link(format!("/proc/{pid}/fd/5"))
            .is_ok_and(|link| link.to_string_lossy().contains(&name))
    })
}

/// Wait until the RT worker in `slot` exists and is in its loop (its pair is running).
pub(crate) fn wait_for_rt_worker(pgid: i32, slot: usize) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let (Some(pid), Some(_)) = (rt_worker(pgid, slot), rt_worker(pgid, 1 - slot)) {
            return pid;
        }
        assert!(Instant::now() < deadline, "the RT pair never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub(crate) fn finish(child: Child) -> (Output, String) {
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    (output, stderr)
}

/// The live worker of process group `pgid` whose task name is `comm` (`rtsoak-load`), once it
/// exists; panics after 30 s.
pub(crate) fn wait_for_worker_named(pgid: i32, comm: &str) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let found = group_members(pgid).into_iter().find(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == comm)
        });
        if let Some(pid) = found {
            return pid;
        }
        assert!(Instant::now() < deadline, "no {comm} worker started");
        std::thread::sleep(Duration::from_millis(20));
    }
}
