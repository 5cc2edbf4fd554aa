use super::*;
use std::io::Read;
use std::time::{Duration, Instant};

/// The pids of `pid`'s children, as /proc lists them (every thread's).
fn children(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return found;
    };
    for task in tasks.flatten() {
        let list = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        found.extend(
            list.split_whitespace()
                .filter_map(|p| p.parse::<u32>().ok()),
        );
    }
    found
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z'))
    })
}

fn sh(script: &str, output: &std::fs::File) -> Confined {
    spawn_confined(
        Path::new("/bin/sh"),
        &[OsStr::new("sh"), OsStr::new("-c"), OsStr::new(script)],
        output.as_fd(),
        &[0],
    )
    .unwrap()
}

use std::os::fd::AsFd;

#[test]
fn the_program_runs_as_its_namespaces_init_pinned_with_its_output_where_asked() {
    let mut output = tempfile::tempfile().unwrap();
    let mut confined = sh(
        "echo pid $$; grep Cpus_allowed_list /proc/self/status; echo err >&2; \
         read x || echo stdin empty",
        &output,
    );
    assert!(confined.process.wait().unwrap().success());
    let mut text = String::new();
    std::io::Seek::rewind(&mut output).unwrap();
    output.read_to_string(&mut text).unwrap();
    assert!(text.contains("Cpus_allowed_list:\t0\n"), "{text}");
    assert!(
        text.contains("err\n") && text.contains("stdin empty"),
        "{text}"
    );
    match confined.confinement {
        Confinement::None(errno) => rtsoak_testing::skip(&format!(
            "this kernel gave no PID namespace ({errno}): checked the rest only"
        )),
        _ => assert!(text.starts_with("pid 1\n"), "{text}"),
    }
}

#[test]
fn everything_the_program_started_dies_with_it() {
    let output = tempfile::tempfile().unwrap();
    // Two descendants in a session of their own (setsid), out of the program's process group.
    let mut confined = sh("setsid sleep 1000 & setsid sleep 1001 & wait", &output);
    if let Confinement::None(errno) = confined.confinement {
        confined.process.kill().unwrap();
        rtsoak_testing::skip(&format!("this kernel gave no PID namespace ({errno})"));
        return;
    }
    let init = confined.process.id();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut started = children(init);
    while started.len() < 2 {
        assert!(Instant::now() < deadline, "the sleeps never started");
        std::thread::sleep(Duration::from_millis(10));
        started = children(init);
    }
    confined.process.kill().unwrap();
    confined.process.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while started.iter().any(|&pid| alive(pid)) {
        assert!(
            Instant::now() < deadline,
            "{started:?} outlived their namespace's init"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_program_that_cannot_be_executed_says_why_on_the_channel() {
    let output = tempfile::tempfile().unwrap();
    let mut confined = spawn_confined(
        Path::new("/nonexistent/init"),
        &[OsStr::new("init")],
        output.as_fd(),
        &[0],
    )
    .unwrap();
    assert_eq!(confined.process.wait().unwrap().code(), Some(127));
    let mut record = [0; Report::BYTES];
    confined.channel.read_exact(&mut record).unwrap();
    assert_eq!(
        Report::from_bytes(record),
        Some(Report::ExecFailed(libc::ENOENT))
    );
}

#[test]
fn reports_read_back_as_written() {
    for report in [
        Report::ExecFailed(2),
        Report::Started(4242),
        Report::NotStarted(13),
        Report::Ended(15),
    ] {
        assert_eq!(Report::from_bytes(report.to_bytes()), Some(report));
    }
    assert_eq!(Report::from_bytes([9; Report::BYTES]), None);
}
