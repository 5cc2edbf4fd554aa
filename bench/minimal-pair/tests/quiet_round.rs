//! A short quiet round of the minimal pair: it runs, prints one valid JSON document, and
//! accounts for every period of its measured phase. Only invariants are asserted, never a
//! latency: what a loaded machine does to a real-time pair is not the pair's to control (the
//! figures are `bench/harness-cost`'s, on a quiet machine).
//!
//! It starts SCHED_FIFO threads on CPUs 0 and 1: run it with the other real-time tests,
//! `flock /tmp/rtsoak-soak-tests.lock cargo test -p minimal-pair`.

use std::process::{Command, Output};

use serde_json::Value;

const PAIR: &str = env!("CARGO_BIN_EXE_minimal-pair");
const SERIES: [&str; 3] = ["timer", "send_call", "delivery"];

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Say why the round is not run; in CI (`RTSOAK_CI`, set by `.ci/run`, which runs as root)
/// that is a failure, as everywhere in rtsoak's tests.
fn skip(reason: &str) {
    assert!(
        std::env::var_os("RTSOAK_CI").is_none(),
        "a check CI must run was skipped: {reason}"
    );
    eprintln!("SKIPPED: {reason}");
}

fn pair(args: &[&str]) -> Output {
    Command::new(PAIR).args(args).output().unwrap()
}

fn count(doc: &Value, series: &str) -> u64 {
    doc[series]["count"]
        .as_u64()
        .unwrap_or_else(|| panic!("{series}.count in {doc}"))
}

fn field(doc: &Value, name: &str) -> u64 {
    doc[name]
        .as_u64()
        .unwrap_or_else(|| panic!("`{name}` in {doc}"))
}

/// One round of `mechanism`, 1 s measured after 100 ms of warm-up at 500 us, and what it printed.
fn quiet_round(mechanism: &str) -> Value {
    let output = pair(&[
        mechanism,
        "--duration-s",
        "1",
        "--warmup-ms",
        "100",
        "--period-us",
        "500",
        "--cpus",
        "0,1",
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{mechanism}: {:?}\n{stderr}",
        output.status
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "one line of JSON: {stdout}");
    serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{mechanism}: not JSON ({e}): {stdout}"))
}

/// Every measured period sent or counted missed, every send timed, every measured send
/// delivered or counted overrun, and each series' order statistics in order.
fn assert_every_period_accounted_for(mechanism: &str, doc: &Value) {
    assert_eq!(doc["mechanism"], mechanism);
    assert_eq!(field(doc, "period_ns"), 500_000);
    let planned = field(doc, "planned_periods");
    assert_eq!(planned, 2_000, "1 s of 500 us periods");
    let sent = count(doc, "timer");
    assert!(sent > 0, "{mechanism}: nothing sent: {doc}");
    assert_eq!(sent + field(doc, "missed"), planned, "{mechanism}: {doc}");
    assert_eq!(count(doc, "send_call"), sent, "{mechanism}: {doc}");
    assert_eq!(
        count(doc, "delivery") + field(doc, "overrun"),
        sent,
        "{mechanism}: {doc}"
    );
    assert!(
        ["defer-taskrun", "coop-taskrun"].contains(&doc["ring"].as_str().unwrap()),
        "{doc}"
    );
    assert!(doc["cpu_dma_latency"].is_boolean(), "{doc}");
    for series in SERIES {
        let figures: Vec<u64> = ["min_ns", "p50_ns", "p99_ns", "p99_9_ns", "max_ns"]
            .iter()
            .map(|name| field(&doc[series], name))
            .collect();
        assert!(
            figures.is_sorted(),
            "{mechanism} {series}: min <= p50 <= p99 <= p99.9 <= max: {figures:?}"
        );
    }
}

#[test]
fn a_quiet_round_of_each_mechanism_accounts_for_every_period_in_valid_json() {
    if !is_root() {
        skip("the minimal pair needs root (SCHED_FIFO, mlockall)");
        return;
    }
    for mechanism in ["eventfd", "futex"] {
        let doc = quiet_round(mechanism);
        assert_every_period_accounted_for(mechanism, &doc);
    }
}

/// A subscriber that fails in its setup ends the run with its own error, instead of leaving the
/// publisher waiting for it to get ready. CPU 1000 is within the parser's range but absent from
/// any machine this runs on, so pinning the subscriber to it fails.
#[test]
fn a_subscriber_that_cannot_start_ends_the_run_with_its_error() {
    if !is_root() {
        skip("the minimal pair needs root (mlockall) to reach the subscriber's setup");
        return;
    }
    if std::path::Path::new("/sys/devices/system/cpu/cpu1000").exists() {
        skip("this machine has a CPU 1000, which the test needs absent");
        return;
    }
    let mut child = Command::new(PAIR)
        .args(["eventfd", "--duration-s", "1", "--cpus", "0,1000"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Generous: the run ends at once when it works; a hung publisher never ends at all.
    let limit = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("the publisher waited for a subscriber that had failed");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("pinning to CPU 1000"), "{stderr}");
    assert!(output.stdout.is_empty(), "nothing on stdout: {stderr}");
}

#[test]
fn a_bad_argument_is_named_with_the_usage_and_exit_2() {
    for (args, named) in [
        (&["pipe"][..], "unknown mechanism `pipe`"),
        (&["eventfd", "--cpus", "1,1"][..], "twice"),
        (
            &["futex", "--period-us", "5"][..],
            "--period-us takes a whole number from 20",
        ),
    ] {
        let output = pair(args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(named), "{args:?}: {stderr}");
        assert!(stderr.contains("usage: minimal-pair"), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{args:?}: nothing on stdout");
    }
}
