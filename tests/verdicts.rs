//! No PASS without a measurement, with the real binary: a run that measured nothing, a probe a
//! limit refused, a publisher stopped for most of its run, a noise worker killed mid-run, and
//! `diff` and `baseline promote` given results that cannot stand for a comparison. Each checks
//! the verdict in the result, the exit code and what was printed; no latency figure is
//! asserted.

mod common;

use std::path::Path;
use std::time::Duration;

use common::process::{finish, start, wait_for_rt_worker, wait_for_worker_named};
use common::{as_ordinary_user_locking, is_root, load, rtsoak, serial, skip};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use rtsoak_record::result::verdict::{InconclusiveKind, Status};
use rtsoak_record::result::{ResultDoc, RunStatus};

/// Run rtsoak with `args` into `dir`: exit code, stdout and stderr, and the result saved.
fn soak(args: &[&str], dir: &Path) -> (Option<i32>, String, String, ResultDoc) {
    let output = rtsoak().args(args).arg("-o").arg(dir).output().unwrap();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    let doc = load(dir);
    (
        output.status.code(),
        text(&output.stdout),
        text(&output.stderr),
        doc,
    )
}

fn kinds(doc: &ResultDoc) -> Vec<InconclusiveKind> {
    let verdict = doc
        .verdict
        .as_ref()
        .expect("a finished result has a verdict");
    verdict.inconclusive.iter().map(|i| i.kind).collect()
}

#[test]
fn a_run_of_transports_this_kernel_lacks_measured_nothing_and_is_inconclusive() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, stderr, doc) = soak(
        &["run", "-q", "-t", "doorbell", "--duration", "2s"],
        dir.path(),
    );
    assert_eq!(code, Some(7), "{stderr}");
    assert_eq!(doc.runs[0].status, RunStatus::Unsupported);
    assert_eq!(kinds(&doc), [InconclusiveKind::NothingMeasured]);
    assert!(stderr.contains("rtsoak verdict: INCONCLUSIVE"), "{stderr}");
    assert!(
        stdout.contains("  inconclusive: no transport was measured (doorbell: needs"),
        "the table ends with the reason: {stdout}"
    );
    assert!(!stdout.contains("PASS") && !stderr.contains("PASS"));

    // A profile asking for a million messages changes nothing: still nothing to judge.
    let profile = dir.path().join("min.toml");
    std::fs::write(
        &profile,
        common::ci_profile_with_verdict("min_messages = 1000"),
    )
    .unwrap();
    let out = dir.path().join("min");
    let (code, _, stderr, doc) = soak(
        &[
            "compare",
            "-q",
            "-t",
            "doorbell,persistent-futex",
            "--profile",
            profile.to_str().unwrap(),
        ],
        &out,
    );
    assert_eq!(code, Some(7), "{stderr}");
    assert_eq!(kinds(&doc), [InconclusiveKind::NothingMeasured]);
    let textfiles = dir.path().join("textfiles");
    std::fs::create_dir(&textfiles).unwrap();
    let output = rtsoak()
        .args(["run", "-q", "-t", "doorbell", "--textfile-dir"])
        .arg(&textfiles)
        .arg("-o")
        .arg(dir.path().join("fleet"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(7));
    let metrics = std::fs::read_to_string(textfiles.join("rtsoak-default.prom")).unwrap();
    assert!(
        metrics.lines().any(|line| line
            .starts_with("rtsoak_verdict{profile=\"default\",kernel_release=")
            && line.ends_with(",verdict=\"inconclusive\"} 1")),
        "a fleet can alert on it: {metrics}"
    );
}

#[test]
fn a_probe_refused_by_the_memory_lock_limit_is_not_permitted_not_unsupported() {
    let _serial = serial();
    if !is_root() {
        return skip("needs root to become an ordinary user with a 64 KiB memory-lock limit");
    }
    let (output, home) = as_ordinary_user_locking(
        64,
        "run -q --profile ci -t eventfd-multishot --duration 1s -o results",
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    let doc = load(&home.path().join("results"));
    let support = doc
        .support
        .iter()
        .find(|s| s.transport == "eventfd-multishot")
        .unwrap();
    assert_eq!(
        support.support.word(),
        "not permitted",
        "{:?}",
        support.support
    );
    let reason = support.support.reason();
    assert!(
        reason.contains("memory-lock limit (64 KiB)") && reason.contains("ulimit -l"),
        "names the limit and the fix: {reason}"
    );
    assert_eq!(output.status.code(), Some(7), "{stderr}");
    assert_eq!(kinds(&doc), [InconclusiveKind::NothingMeasured]);
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(table.contains("not permitted"), "{table}");
}

/// Run `-t eventfd` for 6 s under `profile`, stopping the RT publisher three times for 1.5 s
/// (each well under the watchdog's 2 s, so a late SIGCONT on a loaded machine does not trip
/// it; 4.5 s of 6 is still most of the run), and return the exit code and the result.
fn publisher_stopped_three_times(profile: &str, dir: &Path) -> (Option<i32>, ResultDoc) {
    let args = [
        "run",
        "-q",
        "-t",
        "eventfd",
        "--no-noise",
        "--duration",
        "6s",
        "--profile",
        profile,
    ];
    let child = start(&args, dir);
    let publisher = wait_for_rt_worker(child.id() as i32, 0);
    std::thread::sleep(Duration::from_millis(400));
    for _ in 0..3 {
        kill(Pid::from_raw(publisher), Signal::SIGSTOP).unwrap();
        std::thread::sleep(Duration::from_millis(1_500));
        kill(Pid::from_raw(publisher), Signal::SIGCONT).unwrap();
        std::thread::sleep(Duration::from_millis(50));
    }
    let (output, stderr) = finish(child);
    let doc = load(dir);
    let i = doc.runs[0].integrity;
    assert!(
        i.missed_periods * 2 > i.planned_periods,
        "most periods missed: {i:?}\n{stderr}"
    );
    assert_eq!(i.sent + i.missed_periods, i.planned_periods, "{i:?}");
    (output.status.code(), doc)
}

#[test]
fn a_publisher_stopped_for_most_of_its_run_is_inconclusive_and_fails_where_none_may_be_missed() {
    let _serial = serial();
    for profile in ["default", "ci"] {
        let dir = tempfile::tempdir().unwrap();
        let (code, doc) = publisher_stopped_three_times(profile, dir.path());
        assert_eq!(code, Some(7), "{profile}");
        assert_eq!(kinds(&doc), [InconclusiveKind::MissedPeriods], "{profile}");
    }
    // Judged as the nightly profile judges, not one missed period allowed: a breach, which
    // outranks inconclusive, and the reason it is also inconclusive is kept.
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("no-misses.toml");
    std::fs::write(
        &profile,
        common::ci_profile_with_verdict("max_missed_periods = 0"),
    )
    .unwrap();
    let out = dir.path().join("result");
    let (code, doc) = publisher_stopped_three_times(profile.to_str().unwrap(), &out);
    assert_eq!(code, Some(1));
    let verdict = doc.verdict.as_ref().unwrap();
    assert_eq!(verdict.status, Status::Fail);
    assert_eq!(kinds(&doc), [InconclusiveKind::MissedPeriods]);
}

/// Kill the noise worker named `comm` 1.5 s into a 4 s run: the run fails, naming it.
fn a_killed_noise_worker_fails_the_run(comm: &str, role: &str) {
    let dir = tempfile::tempdir().unwrap();
    let child = start(
        &[
            "run",
            "-q",
            "-t",
            "eventfd",
            "--profile",
            "ci",
            "--duration",
            "4s",
        ],
        dir.path(),
    );
    let worker = wait_for_worker_named(child.id() as i32, comm);
    std::thread::sleep(Duration::from_millis(1_500));
    kill(Pid::from_raw(worker), Signal::SIGKILL).unwrap();
    let (output, stderr) = finish(child);
    let doc = load(dir.path());
    let run = &doc.runs[0];
    assert_eq!(run.status, RunStatus::Failed, "{:?}", run.reason);
    let death = format!("the {role} worker (pid {worker}) died: signal: 9 (SIGKILL)");
    assert!(
        run.reason.as_deref().unwrap_or("").contains(&death),
        "{:?}",
        run.reason
    );
    assert_eq!(run.noise.deaths.len(), 1, "{:?}", run.noise.deaths);
    assert_eq!(output.status.code(), Some(5), "{stderr}");
    assert!(stderr.contains("rtsoak verdict: FAIL"), "{stderr}");
}

#[test]
fn a_sigkilled_load_worker_fails_the_run_naming_its_role_pid_and_signal() {
    let _serial = serial();
    a_killed_noise_worker_fails_the_run("rtsoak-load", "load");
}

#[test]
fn a_sigkilled_burst_worker_fails_the_run_naming_its_role_pid_and_signal() {
    let _serial = serial();
    a_killed_noise_worker_fails_the_run("rtsoak-burst", "burst");
}

/// `rtsoak diff BASELINE NEW --json`: its exit code and the comparison.
fn diff(baseline: &Path, new: &Path) -> (Option<i32>, serde_json::Value) {
    let output = rtsoak()
        .arg("diff")
        .arg(baseline)
        .arg(new)
        .arg("--json")
        .output()
        .unwrap();
    let json = serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "{error}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output.status.code(), json)
}

/// A saved result edited by `edit`, as a new result directory under `dir`.
fn edited(
    from: &Path,
    dir: &Path,
    name: &str,
    edit: impl FnOnce(&mut serde_json::Value),
) -> std::path::PathBuf {
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(from.join("result.json")).unwrap()).unwrap();
    edit(&mut json);
    let out = dir.join(name);
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("result.json"), serde_json::to_vec(&json).unwrap()).unwrap();
    out
}

#[test]
fn diff_pairs_what_both_results_measured_and_never_says_no_regression_for_what_it_did_not() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let compare = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        let mut args = vec![
            "compare",
            "-q",
            "--profile",
            "ci",
            "-t",
            "futex,eventfd",
            "--duration",
            "1s",
            "--no-noise",
        ];
        args.extend_from_slice(extra);
        let (code, _, stderr, doc) = soak(&args, &out);
        assert!(matches!(code, Some(0 | 7)), "{stderr}");
        assert!(
            doc.verdict.as_ref().unwrap().failures.is_empty(),
            "{stderr}"
        );
        out
    };
    let plain = compare("plain", &[]);
    let setups = compare("setups", &["--ring-setup", "defer-taskrun,coop-taskrun"]);

    // The plain comparison ran with defer-taskrun: its rows pair with those of the other.
    let (code, json) = diff(&plain, &setups);
    let paired: std::collections::BTreeSet<(String, String)> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["figure"] == "over_threshold_rate")
        .map(|f| {
            (
                f["transport"].as_str().unwrap().to_string(),
                f["ring_setup"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let expected: std::collections::BTreeSet<(String, String)> = ["futex", "eventfd"]
        .iter()
        .map(|t| (t.to_string(), "defer-taskrun".to_string()))
        .collect();
    assert_eq!(paired, expected, "{json:#}");
    // Its coop-taskrun rows have no baseline: inconclusive, and it says which (two short runs
    // on a loaded machine may also differ enough to regress, which outranks it).
    assert!(matches!(code, Some(3 | 7)), "{json:#}");
    let reasons = json["inconclusive"].to_string();
    assert!(
        reasons.contains("futex (coop-taskrun) was measured now but not in the baseline")
            && reasons.contains("eventfd (coop-taskrun)"),
        "{reasons}"
    );
    let (code, json) = diff(&plain, &plain);
    assert_eq!(code, Some(0), "{json:#}");

    // A side that cannot stand for the comparison.
    for (name, edit, says) in [
        (
            "interrupted",
            (|j: &mut serde_json::Value| j["interrupted"] = true.into())
                as fn(&mut serde_json::Value),
            "was interrupted",
        ),
        (
            "empty",
            |j| j["runs"] = serde_json::json!([]),
            "measured nothing",
        ),
        (
            "lossy",
            |j| j["runs"][0]["integrity"]["lost"] = 100.into(),
            "lost messages",
        ),
    ] {
        let bad = edited(&plain, dir.path(), name, edit);
        for (baseline, new, side) in [
            (&bad, &plain, "the baseline"),
            (&plain, &bad, "the new result"),
        ] {
            let (code, json) = diff(baseline, new);
            assert_eq!(code, Some(7), "{name} as {side}: {json:#}");
            let reasons = json["inconclusive"].to_string();
            assert!(
                reasons.contains(&format!("{side} {says}")) || reasons.contains(says),
                "{name} as {side}: {reasons}"
            );
        }
        let text = rtsoak().arg("diff").arg(&bad).arg(&plain).output().unwrap();
        let text = String::from_utf8_lossy(&text.stdout);
        assert!(!text.contains("no regression"), "{text}");
        assert!(text.contains("verdict: INCONCLUSIVE"), "{text}");
    }
}

#[test]
fn promote_refuses_a_result_that_cannot_stand_for_a_baseline_unless_forced() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good");
    let (code, _, stderr, _) = soak(
        &[
            "run",
            "-q",
            "-t",
            "eventfd",
            "--profile",
            "ci",
            "--duration",
            "1s",
            "--no-noise",
        ],
        &good,
    );
    assert!(matches!(code, Some(0 | 7)), "{stderr}");
    let failed = edited(&good, dir.path(), "failed", |j| {
        j["runs"][0]["status"] = "failed".into();
        j["runs"][0]["reason"] = "the RT subscriber worker ended early".into();
        j["verdict"] = serde_json::Value::Null;
    });
    let to = dir.path().join("baseline");
    let refused = rtsoak()
        .args(["baseline", "promote"])
        .arg(&failed)
        .arg("--to")
        .arg(&to)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot be a baseline")
            && stderr.contains("round 1 failed: the RT subscriber worker ended early")
            && stderr.contains("--force"),
        "{stderr}"
    );
    assert!(!to.join("result.json").exists(), "nothing was promoted");
    let forced = rtsoak()
        .args(["baseline", "promote"])
        .arg(&failed)
        .arg("--to")
        .arg(&to)
        .arg("--force")
        .output()
        .unwrap();
    assert_eq!(forced.status.code(), Some(0));
    assert!(to.join("result.json").exists());
}

#[test]
fn report_shows_a_dash_with_a_warning_for_a_histogram_that_does_not_decode() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good");
    let (code, _, stderr, _) = soak(
        &[
            "run",
            "-q",
            "-t",
            "eventfd",
            "--profile",
            "ci",
            "--duration",
            "1s",
            "--no-noise",
        ],
        &good,
    );
    assert!(matches!(code, Some(0 | 7)), "{stderr}");
    let damaged = edited(&good, dir.path(), "damaged", |j| {
        j["runs"][0]["series"]["delivery"]["histogram"] = "bm90IGEgaGlzdG9ncmFt".into();
    });
    for format in ["details", "markdown"] {
        let output = rtsoak()
            .args(["report", "--format", format])
            .arg(&damaged)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("eventfd delivery: the histogram of 1 run(s) does not decode"),
            "{format}: {stderr}"
        );
        let text = String::from_utf8_lossy(&output.stdout);
        let heading = text
            .lines()
            .position(|l| l.starts_with("delivery:"))
            .unwrap_or_else(|| panic!("{format}: {text}"));
        let row = text
            .lines()
            .skip(heading)
            .find(|l| l.trim_start_matches("| ").starts_with("eventfd"))
            .unwrap();
        let cells: Vec<&str> = row
            .split(|c: char| c == '|' || c.is_whitespace())
            .filter(|c| !c.is_empty())
            .collect();
        // transport, count, over, per million, interval, p50, p99, p99.9, p99.99, longest
        assert_eq!(cells[5..9], ["-", "-", "-", "-"], "{format}: {row}");
        assert_ne!(cells[1], "-", "the exact count stands: {row}");
        assert!(!row.contains(" 0.0 "), "{format}: {row}");
    }
}
