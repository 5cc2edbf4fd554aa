//! `--on-threshold` and `--on-end` in real runs: the actions happen (a signal reaches a process
//! the test owns, a command writes its file, a trace snapshot holds the sample's marker), the
//! result records each firing with its sample and each action with how it ended, a command
//! that hangs is stopped at its timeout leaving no process, and an action that cannot be done
//! is refused before anything runs. Invariants only: no delay is asserted (this VM's timer
//! jitter is large; docs/actions.md has the measured figures).

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::time::{Duration, Instant};

use common::{is_root, load, rtsoak, serial, skip};
use rtsoak_record::Series;
use rtsoak_record::action::ActionKind;
use rtsoak_record::result::actions::{ActionRecord, ActionStatus, RunActions};

/// A 1 s run of one transport in which every delivery crosses the limit (1 us), with `args`.
fn run_firing(dir: &Path, args: &[&str]) -> std::process::Output {
    rtsoak()
        .args([
            "run",
            "-q",
            "-t",
            "eventfd",
            "--profile",
            "ci",
            "--duration",
            "1s",
        ])
        .args(["--on-threshold-limit", "1us"])
        .args(args)
        .arg("-o")
        .arg(dir.join("result"))
        .output()
        .unwrap()
}

/// The on-threshold record of the one run of `dir`'s result.
fn run_actions(dir: &Path) -> RunActions {
    let doc = load(&dir.join("result"));
    assert_eq!(doc.runs.len(), 1);
    doc.runs[0]
        .actions
        .clone()
        .expect("the run records its actions")
}

/// True if `pid` is a live process (not a zombie).
fn live(pid: i32) -> bool {
    common::process::stat_fields(pid).is_some_and(|fields| fields[0] != "Z")
}

#[test]
fn signal_exec_and_on_end_happen_in_a_real_run_and_the_result_says_so() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let mut target = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let (fired, ended) = (dir.path().join("fired"), dir.path().join("ended"));
    let signal = format!("signal=SIGTERM,pid={}", target.id());
    let exec = format!("exec=/usr/bin/touch,{}", fired.display());
    let at_end = format!("exec=/usr/bin/touch,{}", ended.display());
    let output = run_firing(
        dir.path(),
        &[
            "--on-threshold",
            &signal,
            "--on-threshold",
            &exec,
            "--on-end",
            &at_end,
        ],
    );
    let doc = load(&dir.path().join("result"));
    common::assert_passed_or_starved(&output, &doc);

    // The actions happened.
    assert_eq!(target.wait().unwrap().signal(), Some(libc::SIGTERM));
    assert!(fired.exists() && ended.exists());
    // And the result says what fired them and how each went.
    let actions = run_actions(dir.path());
    assert_eq!(actions.firings.len(), 1, "the first crossing only fires");
    assert!(actions.crossed >= 1);
    let firing = &actions.firings[0];
    let sample = &firing.sample;
    assert_eq!(
        (sample.series, sample.transport.as_str()),
        (Series::Delivery, "eventfd")
    );
    assert!(sample.latency_ns > 1_000 && sample.observed_at_ns >= sample.at_ns);
    let kinds: Vec<ActionKind> = firing.actions.iter().map(|a| a.kind).collect();
    assert_eq!(kinds, [ActionKind::Signal, ActionKind::Exec]);
    for action in &firing.actions {
        assert_eq!(action.status, ActionStatus::Done, "{action:?}");
        let (at_ns, delay_ns) = (action.at_ns.unwrap(), action.delay_ns.unwrap());
        assert_eq!(at_ns, sample.observed_at_ns + delay_ns, "{action:?}");
    }
    assert_eq!(firing.actions[0].pid, Some(target.id() as i32));
    assert_eq!(firing.actions[1].exit_code, Some(0));
    let [end] = &doc.end_actions[..] else {
        panic!("one on-end record: {:?}", doc.end_actions);
    };
    assert_eq!(
        (end.kind, end.status, end.exit_code),
        (ActionKind::Exec, ActionStatus::Done, Some(0))
    );
    assert!(end.delay_ns.is_none(), "an on-end action follows no sample");
}

#[test]
fn a_command_that_hangs_is_stopped_at_its_timeout_and_later_firings_find_it_busy() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let child_pid = dir.path().join("child-pid");
    // A shell ignoring SIGTERM, and its child, which inherits that, writes its pid as this
    // test sees it (`/proc` is the host's, so `/proc/self` names it by its pid here, not in the
    // command's PID namespace), then sleeps: only the SIGKILL 2 s after the SIGTERM ends them.
    let script = format!(
        "trap '' TERM; sh -c 'read -r pid rest < /proc/self/stat; echo $pid > {}; exec sleep \
         60' & wait",
        child_pid.display()
    );
    let argv = ["/usr/bin/sh", "-c", &script];
    let stubborn = format!("exec={}", serde_json::to_string(&argv).unwrap());
    let started = Instant::now();
    let output = run_firing(
        dir.path(),
        &[
            "--on-threshold",
            &stubborn,
            "--on-threshold-every",
            "100ms",
            "--on-end",
            "exec=/usr/bin/sleep,60",
            "--action-timeout",
            "1s",
        ],
    );
    let took = started.elapsed();
    let doc = load(&dir.path().join("result"));
    common::assert_passed_or_starved(&output, &doc);
    assert!(
        took < Duration::from_secs(30),
        "rtsoak's end waited {took:?}"
    );

    let actions = run_actions(dir.path());
    let records: Vec<&ActionRecord> = actions.firings.iter().map(|f| &f.actions[0]).collect();
    let first = records[0];
    assert_eq!(first.status, ActionStatus::TimedOut, "{first:?}");
    assert!(
        first.error.as_deref().unwrap().contains("killed"),
        "{first:?}"
    );
    assert!(first.duration_ns >= 1_000_000_000, "{first:?}");
    // One command at a time: every later firing of the run found it still running.
    assert!(
        records[1..].iter().all(|r| r.status == ActionStatus::Busy),
        "{records:?}"
    );
    let [end] = &doc.end_actions[..] else {
        panic!("one on-end record: {:?}", doc.end_actions);
    };
    assert_eq!(
        (end.status, end.exit_signal),
        (ActionStatus::TimedOut, Some(libc::SIGTERM))
    );
    assert!(
        end.error
            .as_deref()
            .unwrap()
            .contains("stopped with SIGTERM"),
        "{end:?}"
    );
    // Nothing of either command is left.
    let grandchild: i32 = std::fs::read_to_string(&child_pid)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    for pid in [first.pid.unwrap(), end.pid.unwrap(), grandchild] {
        assert!(!live(pid), "process {pid} outlived rtsoak");
    }
}

const TRACEFS: &str = "/sys/kernel/tracing";

#[test]
fn a_trace_action_saves_the_buffer_with_the_samples_marker_and_restores_tracing() {
    let _serial = serial();
    if !is_root() {
        skip("the trace action needs root (tracefs)");
        return;
    }
    let mount = rtsoak_sys::trace::mount_if_missing();
    assert!(
        !matches!(mount, rtsoak_sys::trace::Mount::Failed(_)),
        "{mount:?}"
    );
    let tracing_on = Path::new(TRACEFS).join("tracing_on");
    let before = std::fs::read_to_string(&tracing_on).unwrap();
    std::fs::write(&tracing_on, "0").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let output = run_firing(
        dir.path(),
        &["--on-threshold", "trace", "--on-end", "trace"],
    );
    let after = std::fs::read_to_string(&tracing_on).unwrap();
    std::fs::write(&tracing_on, before.trim()).unwrap();
    let doc = load(&dir.path().join("result"));
    common::assert_passed_or_starved(&output, &doc);
    assert_eq!(
        after.trim(),
        "0",
        "tracing is off again, as rtsoak found it"
    );

    let actions = run_actions(dir.path());
    let firing = &actions.firings[0];
    let record = &firing.actions[0];
    assert_eq!(
        (record.kind, record.status),
        (ActionKind::Trace, ActionStatus::Done)
    );
    let saved = dir
        .path()
        .join("result")
        .join(record.file.as_deref().unwrap());
    let text = std::fs::read_to_string(&saved).unwrap();
    let marker = format!(
        "rtsoak on-threshold: delivery {} ns, seq {}, eventfd",
        firing.sample.latency_ns, firing.sample.seq
    );
    assert!(
        text.contains(&marker),
        "{marker} not in {}",
        saved.display()
    );
    let end = &doc.end_actions[0];
    assert_eq!(end.status, ActionStatus::Done, "{end:?}");
    let end_text =
        std::fs::read_to_string(dir.path().join("result").join(end.file.as_deref().unwrap()))
            .unwrap();
    assert!(end_text.contains("rtsoak on-end"));
}

#[test]
fn an_action_that_cannot_be_done_is_refused_before_anything_runs() {
    let gone = {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    };
    let signal = format!("signal=USR1,pid={gone}");
    for (args, says) in [
        (vec!["--on-threshold", &signal], "no process"),
        (
            vec!["--on-end", "exec=no-such-program-rtsoak"],
            "no-such-program-rtsoak",
        ),
        (vec!["--on-threshold", "snapshot"], "unknown action"),
        (
            vec!["--on-threshold", "exec=/usr/bin/echo,,x"],
            "empty argument",
        ),
        (vec!["--on-threshold-every", "1s"], "--on-threshold ACTION"),
        (
            vec!["--action-timeout", "5s", "--on-end", "trace"],
            "exec action",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let output = rtsoak()
            .args([
                "run",
                "-t",
                "eventfd",
                "--profile",
                "ci",
                "--duration",
                "1s",
            ])
            .args(&args)
            .arg("-o")
            .arg(dir.path().join("result"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(!dir.path().join("result").exists(), "{args:?}: nothing ran");
    }
}

#[test]
fn as_root_a_program_in_a_directory_others_may_write_is_never_run() {
    use std::os::unix::fs::PermissionsExt;
    if !is_root() {
        skip("the refusal is root's");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let open = dir.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let planted = open.join("touch");
    std::fs::copy("/usr/bin/touch", &planted).unwrap();
    let exec = format!(
        "exec={},{}",
        planted.display(),
        dir.path().join("ran").display()
    );
    let output = rtsoak()
        .args([
            "run",
            "-t",
            "eventfd",
            "--profile",
            "ci",
            "--duration",
            "1s",
        ])
        .args(["--on-end", &exec, "-o"])
        .arg(dir.path().join("result"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("on-end action") && stderr.contains("writable"),
        "{stderr}"
    );
    assert!(!dir.path().join("ran").exists());
}
