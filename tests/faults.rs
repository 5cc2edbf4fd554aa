//! Faults during a soak: stop signals at random moments, a killed coordinator, a killed or
//! frozen worker, a result directory that is read-only or full, and a foreign signal aimed at
//! the signalfd subscriber. Each asserts what is left behind: the result, the exit code, and
//! that no rtsoak process survives. Behaviour only, no latency figure.

mod common;
#[path = "faults/queue.rs"]
mod queue;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::process::{finish, group_members, start, survivors_after, wait_for_rt_worker};
use common::{assert_code_passed_or_starved, is_root, load, rtsoak_path, serial, skip};
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use rtsoak_record::result::RunStatus;

/// A small deterministic generator (xorshift64*), so a failing seed can be replayed.
struct Seeded(u64);

impl Seeded {
    fn below(&mut self, limit: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % limit
    }
}

#[test]
fn sigint_and_sigterm_at_random_moments_save_an_interrupted_result_and_leave_no_process() {
    let _serial = serial();
    for seed in [11_u64, 23, 37, 41] {
        let mut random = Seeded(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let signal = if seed % 2 == 1 {
            Signal::SIGINT
        } else {
            Signal::SIGTERM
        };
        let dir = tempfile::tempdir().unwrap();
        let child = start(
            &[
                "compare",
                "-q",
                "--profile",
                "ci",
                "--duration",
                "1s",
                "-t",
                "futex,eventfd,signalfd",
            ],
            dir.path(),
        );
        let pgid = child.id() as i32;
        // From the first worker on (the handlers are installed by then), anywhere in the
        // ~4 s the three runs take: during setup, a run, between runs or at the end.
        wait_for_rt_worker(pgid, 1);
        let delay_ms = random.below(4_000);
        std::thread::sleep(Duration::from_millis(delay_ms));
        let context = format!("seed {seed}: {signal} after {delay_ms} ms");
        if signal == Signal::SIGINT {
            // A terminal's Ctrl-C reaches the whole group, workers included.
            let _ = killpg(Pid::from_raw(pgid), signal);
        } else {
            // A service manager or `kill` reaches the coordinator.
            let _ = kill(Pid::from_raw(pgid), signal);
        }
        let (output, stderr) = finish(child);
        assert_eq!(output.status.code(), Some(130), "{context}\n{stderr}");
        assert_eq!(
            survivors_after(pgid, Duration::from_secs(1)),
            Vec::<i32>::new(),
            "{context}: no rtsoak process is left"
        );
        let doc = load(dir.path());
        assert!(doc.interrupted, "{context}");
        assert!(doc.finished_at.is_some(), "{context}");
        let expected = format!("stopped by {}", signal.as_str());
        for run in doc.runs.iter().filter(|r| r.status != RunStatus::Completed) {
            assert_eq!(run.status, RunStatus::Interrupted, "{context}: {run:?}");
            assert!(
                run.reason.as_deref().unwrap_or("").contains(&expected),
                "{context}: {:?}",
                run.reason
            );
        }
    }
}

#[test]
fn a_sigkilled_coordinator_takes_every_worker_with_it_within_a_second() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let mut child = start(
        &[
            "run",
            "--transport",
            "futex",
            "-q",
            "--profile",
            "ci",
            "--duration",
            "10s",
        ],
        dir.path(),
    );
    let pgid = child.id() as i32;
    wait_for_rt_worker(pgid, 0);
    std::thread::sleep(Duration::from_millis(500));
    assert!(group_members(pgid).len() > 2, "noise workers run too");
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        survivors_after(pgid, Duration::from_secs(1)),
        Vec::<i32>::new()
    );
}

#[test]
fn a_sigkilled_worker_is_named_and_what_ran_is_saved_with_a_failure_exit_code() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let child = start(
        &[
            "run",
            "--transport",
            "futex",
            "-q",
            "--profile",
            "ci",
            "--no-noise",
            "--duration",
            "20s",
        ],
        dir.path(),
    );
    let pgid = child.id() as i32;
    let subscriber = wait_for_rt_worker(pgid, 1);
    // Past two of the ci profile's 1 s intervals, so the subscriber has shipped some.
    std::thread::sleep(Duration::from_millis(2_500));
    kill(Pid::from_raw(subscriber), Signal::SIGKILL).unwrap();
    let (output, stderr) = finish(child);
    assert_eq!(output.status.code(), Some(5), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(15), "stopped early");
    assert_eq!(
        survivors_after(pgid, Duration::from_secs(1)),
        Vec::<i32>::new()
    );
    let doc = load(dir.path());
    let run = &doc.runs[0];
    assert_eq!(run.status, RunStatus::Failed);
    let reason = run.reason.as_deref().unwrap();
    assert!(
        reason.starts_with(&format!(
            "the RT subscriber worker (pid {subscriber}) ended early: signal: 9 (SIGKILL)"
        )),
        "{reason}"
    );
    assert!(run.integrity.sent > 0, "the publisher's sends are kept");
    assert!(
        run.series["send_call"].summary.count > 0,
        "the publisher's figures are kept"
    );
    assert!(
        run.series["delivery"].summary.count > 0
            && run
                .intervals
                .iter()
                .any(|i| i.series.contains_key("delivery")),
        "the killed subscriber's finished intervals are kept"
    );
    assert!(!reason.contains("interval frames"), "{reason}");
    assert!(run.measured_ns > 0 && run.measured_ns < 15_000_000_000);
    assert!(!doc.verdict.as_ref().unwrap().pass);
    assert!(stderr.contains("rtsoak verdict: FAIL"), "{stderr}");
}

#[test]
fn a_subscriber_stopped_past_the_delivery_timeout_loses_messages_exits_4_and_fails() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    // A 200 ms delivery timeout: a 700 ms stop makes messages late (lost) long before the
    // watchdog (2 s) would call the subscriber hung.
    let profile = dir.path().join("short-timeout.toml");
    let text = include_str!("../profiles/ci.toml")
        .replace("delivery_timeout_ms = 1000", "delivery_timeout_ms = 200");
    assert!(
        text.contains("delivery_timeout_ms = 200"),
        "the ci profile changed"
    );
    std::fs::write(&profile, text).unwrap();
    let out = dir.path().join("result");
    let child = start(
        &[
            "run",
            "--transport",
            "eventfd",
            "-q",
            "--profile",
            profile.to_str().unwrap(),
            "--no-noise",
            "--duration",
            "4s",
            "--export",
            "prometheus",
        ],
        &out,
    );
    let pgid = child.id() as i32;
    let subscriber = wait_for_rt_worker(pgid, 1);
    std::thread::sleep(Duration::from_millis(1_000));
    kill(Pid::from_raw(subscriber), Signal::SIGSTOP).unwrap();
    std::thread::sleep(Duration::from_millis(700));
    kill(Pid::from_raw(subscriber), Signal::SIGCONT).unwrap();
    let (output, stderr) = finish(child);
    let doc = load(&out);
    let run = &doc.runs[0];
    assert_eq!(run.status, RunStatus::Completed, "{:?}", run.reason);
    assert!(
        run.integrity.lost > 0 && run.integrity.late > 0,
        "{:?}",
        run.integrity
    );
    assert_eq!(output.status.code(), Some(4), "{stderr}");
    let verdict = doc.verdict.as_ref().unwrap();
    assert!(!verdict.pass);
    // The verdict line on stderr, and every failure under the table.
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(stderr.contains("rtsoak verdict: FAIL"), "{stderr}");
    assert!(
        table.contains("  failure: eventfd: ") && table.contains("messages lost"),
        "{table}"
    );
    let metrics = std::fs::read_to_string(out.join("rtsoak.prom")).unwrap();
    let lost = metrics
        .lines()
        .find(|l| l.starts_with("rtsoak_messages_lost{"))
        .and_then(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .expect("rtsoak_messages_lost is exported");
    assert_eq!(lost, run.integrity.lost as f64, "{metrics}");
}

#[test]
fn a_publisher_stopped_for_50_ms_misses_about_100_periods_and_every_one_is_counted() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    // Judged as the nightly profile judges: not one missed period allowed.
    let profile = dir.path().join("no-misses.toml");
    std::fs::write(
        &profile,
        common::ci_profile_with_verdict("max_missed_periods = 0"),
    )
    .unwrap();
    let out = dir.path().join("result");
    let child = start(
        &[
            "run",
            "--transport",
            "eventfd",
            "-q",
            "--profile",
            profile.to_str().unwrap(),
            "--no-noise",
            "--period",
            "500us",
            "--duration",
            "4s",
        ],
        &out,
    );
    let pgid = child.id() as i32;
    let publisher = wait_for_rt_worker(pgid, 0);
    // Well into the measured phase (200 ms warm-up), then 50 ms without a period.
    std::thread::sleep(Duration::from_millis(1_500));
    kill(Pid::from_raw(publisher), Signal::SIGSTOP).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    kill(Pid::from_raw(publisher), Signal::SIGCONT).unwrap();
    let (output, stderr) = finish(child);
    let doc = load(&out);
    let i = doc.runs[0].integrity;
    assert_eq!(i.planned_periods, 8_000);
    assert!(
        i.missed_periods >= 90,
        "50 ms at 500 us is 100 periods, all counted as missed: {i:?}"
    );
    assert_eq!(
        i.sent + i.missed_periods,
        i.planned_periods,
        "every planned period was sent or counted: {i:?}"
    );
    assert_eq!(i.lost, 0);
    // Judged: a breach of the limit, exit 1.
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let verdict = doc.verdict.as_ref().unwrap();
    assert!(
        verdict
            .breaches
            .iter()
            .any(|b| b.what.key() == "verdict.max_missed_periods"
                && b.figure == i.missed_periods as f64),
        "{:?}",
        verdict.breaches
    );
    // Shown: the table's eventfd row carries the count in its missed column.
    let table = String::from_utf8_lossy(&output.stdout);
    let header = table
        .lines()
        .find(|l| l.starts_with("transport") && l.contains("missed"))
        .expect("the runs table has a missed column");
    let column = header
        .split_whitespace()
        .position(|c| c == "missed")
        .unwrap();
    // The row under that header: at 80 columns the figures and the counts are two tables.
    let row = table
        .lines()
        .skip_while(|l| *l != header)
        .find(|l| l.starts_with("eventfd "))
        .expect("an eventfd row");
    assert_eq!(
        row.split_whitespace().nth(column),
        Some(i.missed_periods.to_string().as_str()),
        "{table}"
    );
    // And said in words under it.
    assert!(
        doc.caveats.iter().any(|c| c.text.contains("missed")),
        "{:?}",
        doc.caveats
    );
}

#[test]
fn a_second_rtsoak_on_the_same_rt_cpus_is_refused_or_waits_its_turn() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let soak = [
        "run",
        "-t",
        "eventfd",
        "-q",
        "--profile",
        "ci",
        "--no-noise",
    ];
    let first = start(
        &[&soak[..], &["--duration", "3s"]].concat(),
        &dir.path().join("first"),
    );
    let first_pid = first.id();
    wait_for_rt_worker(first_pid as i32, 1);

    let refused = dir.path().join("refused");
    let output = Command::new(rtsoak_path())
        .args(soak)
        .args(["--duration", "1s", "-o"])
        .arg(&refused)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(6), "{stderr}");
    assert!(
        stderr.contains("already the RT CPU of another rtsoak run")
            && stderr.contains(&format!("pid {first_pid}"))
            && stderr.contains("--wait-for-cpus"),
        "names the holder and the way out: {stderr}"
    );
    assert!(!refused.exists(), "a refusal leaves no result directory");

    let queued = dir.path().join("queued");
    let output = Command::new(rtsoak_path())
        .args(soak)
        .args(["--duration", "1s", "--wait-for-cpus", "60s", "-o"])
        .arg(&queued)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let (first_output, first_stderr) = finish(first);
    let (first, queued) = (load(&dir.path().join("first")), load(&queued));
    // Quiet runs, yet a VM's stalls may starve the pair past the profile's missed-period limit.
    assert_code_passed_or_starved(output.status.code(), &queued, &stderr);
    assert!(stderr.contains("Waiting for RT CPUs"), "{stderr}");
    assert_code_passed_or_starved(first_output.status.code(), &first, &first_stderr);
    assert!(
        queued.runs[0].started_at >= first.finished_at.clone().unwrap(),
        "the waiting run started after the first had finished"
    );
}

#[test]
fn a_frozen_worker_is_caught_by_the_watchdog_named_and_the_run_ends() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let child = start(
        &[
            "run",
            "--transport",
            "futex",
            "-q",
            "--profile",
            "ci",
            "--no-noise",
            "--duration",
            "60s",
        ],
        dir.path(),
    );
    let pgid = child.id() as i32;
    let publisher = wait_for_rt_worker(pgid, 0);
    std::thread::sleep(Duration::from_millis(1_000));
    kill(Pid::from_raw(publisher), Signal::SIGSTOP).unwrap();
    let stopped = Instant::now();
    let (output, stderr) = finish(child);
    // The watchdog's 2 s, then 2 s for the workers to finish before they are killed.
    assert!(
        stopped.elapsed() < Duration::from_secs(8),
        "ended {:?} after the stop, not at the planned end",
        stopped.elapsed()
    );
    assert_eq!(output.status.code(), Some(5), "{stderr}");
    assert_eq!(
        survivors_after(pgid, Duration::from_secs(1)),
        Vec::<i32>::new(),
        "the frozen worker was killed"
    );
    let doc = load(dir.path());
    let run = &doc.runs[0];
    assert_eq!(run.status, RunStatus::Failed);
    let reason = run.reason.as_deref().unwrap();
    assert!(
        reason.starts_with(&format!(
            "the RT publisher (pid {publisher}) stopped responding: no heartbeat for"
        )),
        "{reason}"
    );
    assert!(reason.contains("process state T (stopped)"), "{reason}");
    assert!(
        run.series["delivery"].summary.count > 0,
        "what ran before the freeze is kept"
    );
}

/// Mount a tmpfs of `size` on `dir` (root only); unmounted on drop.
struct Tmpfs<'a>(&'a Path);

impl<'a> Tmpfs<'a> {
    fn mount(dir: &'a Path, options: &str) -> Option<Self> {
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "rtsoak-test"])
            .arg(dir)
            .status()
            .ok()?;
        status.success().then_some(Tmpfs(dir))
    }
}

impl Drop for Tmpfs<'_> {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0).status();
    }
}

#[test]
fn a_read_only_result_directory_is_refused_before_anything_runs() {
    if !is_root() {
        skip("mounting a read-only tmpfs needs root");
        return;
    }
    let _serial = serial();
    let base = tempfile::tempdir().unwrap();
    let Some(_mount) = Tmpfs::mount(base.path(), "size=64k,ro") else {
        skip("mount -t tmpfs failed (no mount privilege in this container)");
        return;
    };
    let out = base.path().join("result");
    let output = Command::new(rtsoak_path())
        .args([
            "run",
            "--transport",
            "futex",
            "-q",
            "--profile",
            "ci",
            "--duration",
            "1s",
        ])
        .arg("-o")
        .arg(base.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "the result directory {} is not writable: choose another with --output",
            base.path().display()
        )),
        "{stderr}"
    );
    assert!(stderr.contains("Read-only file system"), "{stderr}");
    assert!(output.stdout.is_empty(), "nothing ran, nothing to show");
    assert!(!out.exists());
}

#[test]
fn a_full_disk_still_prints_every_measured_run_then_the_error() {
    if !is_root() {
        skip("mounting a small tmpfs needs root");
        return;
    }
    let _serial = serial();
    let base = tempfile::tempdir().unwrap();
    let Some(_mount) = Tmpfs::mount(base.path(), "size=64k") else {
        skip("mount -t tmpfs failed (no mount privilege in this container)");
        return;
    };
    // Fill it: an empty file still fits (the up-front check passes), a result does not.
    let mut filler = std::fs::File::create(base.path().join("filler")).unwrap();
    while std::io::Write::write_all(&mut filler, &[0; 4096]).is_ok() {}
    drop(filler);
    let output = Command::new(rtsoak_path())
        .args([
            "compare",
            "-q",
            "--profile",
            "ci",
            "--no-noise",
            "--duration",
            "1s",
            "-t",
            "futex,eventfd",
        ])
        .arg("-o")
        .arg(base.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(5), "{stdout}\n{stderr}");
    assert!(
        stdout.lines().any(|l| l.starts_with("futex ")),
        "the measured run is on stdout:\n{stdout}"
    );
    assert!(
        !stdout.lines().any(|l| l.starts_with("eventfd ")),
        "the comparison stopped at the first failed save:\n{stdout}"
    );
    assert!(
        stderr.contains("the table above holds every run measured"),
        "{stderr}"
    );
    assert!(stderr.contains("No space left on device"), "{stderr}");
    let left: Vec<_> = std::fs::read_dir(base.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["filler"], "no partial result or temporary file");
}

#[test]
fn foreign_signals_at_the_signalfd_subscriber_are_counted_and_ignored() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let child = start(
        &[
            "run",
            "--transport",
            "signalfd",
            "-q",
            "--profile",
            "ci",
            "--no-noise",
            "--duration",
            "3s",
        ],
        dir.path(),
    );
    let pgid = child.id() as i32;
    let subscriber = wait_for_rt_worker(pgid, 1);
    std::thread::sleep(Duration::from_millis(1_000));
    let wake_signal = libc::SIGRTMIN() + 1; // the signalfd transport's wake signal;
    for value in 0..20 {
        // SAFETY: sigqueue with a plain integer value to a process this test started.
        let sent = unsafe {
            libc::sigqueue(
                subscriber,
                wake_signal,
                libc::sigval {
                    sival_ptr: value as *mut libc::c_void,
                },
            )
        };
        assert_eq!(sent, 0, "sigqueue: {}", std::io::Error::last_os_error());
        std::thread::sleep(Duration::from_millis(20));
    }
    let (output, stderr) = finish(child);
    let doc = load(dir.path());
    assert_code_passed_or_starved(output.status.code(), &doc, &stderr);
    let run = &doc.runs[0];
    assert_eq!(run.status, RunStatus::Completed);
    assert_eq!(run.integrity.lost, 0, "no message was lost to the noise");
    let subscriber = run
        .workers
        .iter()
        .find(|w| w.pid == subscriber)
        .expect("the subscriber's record");
    assert!(
        subscriber.counters.foreign_wakeups > 0,
        "{:?}",
        subscriber.counters
    );
}
