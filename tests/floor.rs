//! `--floor`: every run gets its floor run beside it, in the same round, run by the floor
//! pair's own loops, and the table says how far above its floor each figure is. Quiet runs are
//! held to "nothing lost"; a run with noise to the invariants only (every period sent or
//! counted missed, every send taken or counted), since noise may starve the RT pair here.
//!
//! It starts RT workers: run it serialised with the other soak tests,
//! `flock /tmp/rtsoak-soak-tests.lock cargo test --test floor`.

mod common;

use common::{load, rtsoak, serial};
use rtsoak_record::result::{ResultDoc, RunResult, RunStatus};
use rtsoak_record::{Role, Series, SeriesKey};

fn counters(run: &RunResult, role: Role) -> rtsoak_record::Counters {
    run.workers
        .iter()
        .find(|w| w.role == role)
        .unwrap_or_else(|| panic!("{}: no {role:?}", run.transport))
        .counters
}

fn count(run: &RunResult, series: Series) -> u64 {
    run.series
        .get(&SeriesKey::Rt(series))
        .map_or(0, |s| s.summary.count)
}

/// Every floor run beside a harness run of the same transport and round, and the harness's
/// runs themselves untouched by it.
fn assert_paired(doc: &ResultDoc) {
    let measured: Vec<&RunResult> = doc
        .runs
        .iter()
        .filter(|r| r.status != RunStatus::Unsupported)
        .collect();
    assert!(!measured.is_empty());
    assert_eq!(doc.floor_runs.len(), measured.len());
    for run in measured {
        let floor = doc
            .floor_runs
            .iter()
            .find(|f| f.transport == run.transport && f.round == run.round)
            .unwrap_or_else(|| panic!("no floor run for {} round {}", run.transport, run.round));
        // The floor's own loops ran: they record no handling and tell no wakes apart, which
        // the harness's subscriber always does.
        assert_eq!(count(floor, Series::Handling), 0, "{}", run.transport);
        assert!(count(run, Series::Handling) > 0, "{}", run.transport);
        // Every period of the floor publisher sent or counted missed, and every send it made
        // taken by the floor subscriber: recorded, late, or overrun (counted, never lost
        // silently).
        let publisher = counters(floor, Role::Publisher);
        let subscriber = counters(floor, Role::Subscriber);
        if floor.status == RunStatus::Completed {
            assert_eq!(
                publisher.messages + publisher.missed_periods,
                publisher.planned_periods,
                "{}: {publisher:?}",
                run.transport
            );
            assert_eq!(
                subscriber.messages + subscriber.late + subscriber.overrun,
                publisher.messages,
                "{}: {subscriber:?}",
                run.transport
            );
        }
        assert_eq!(count(floor, Series::Delivery), subscriber.messages);
        assert_eq!(count(floor, Series::SendCall), publisher.messages);
        assert_eq!(count(floor, Series::Timer), publisher.messages);
    }
}

#[test]
fn a_quiet_comparison_with_its_floor_pairs_every_run_and_loses_nothing() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let output = rtsoak()
        .args([
            "compare",
            "-q",
            "--no-noise",
            "--duration",
            "2s",
            "--rounds",
            "2",
        ])
        .args(["-t", "eventfd,futex", "--floor", "-o"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let doc = load(dir.path());
    common::assert_passed_or_starved(&output, &doc);
    assert_paired(&doc);
    for floor in &doc.floor_runs {
        assert_eq!(floor.status, RunStatus::Completed, "{:?}", floor.reason);
        assert_eq!(floor.integrity.lost, 0, "{}", floor.transport);
        assert!(count(floor, Series::Delivery) > 0);
    }
    // The rounds interleave: round 1 runs the harness first, round 2 the floor first.
    for transport in ["eventfd", "futex"] {
        let started = |runs: &[RunResult], round| {
            runs.iter()
                .find(|r| r.transport == transport && r.round == round)
                .map(|r| r.started_at.clone())
                .unwrap()
        };
        assert!(started(&doc.runs, 1) < started(&doc.floor_runs, 1));
        assert!(started(&doc.floor_runs, 2) < started(&doc.runs, 2));
    }
    assert!(stdout.contains("The harness against its floor"), "{stdout}");
    for transport in ["eventfd", "futex"] {
        assert!(
            stdout.contains(&format!("  {transport}: harness delivery p99 ")),
            "{stdout}"
        );
    }
    // The saved plan is the harness's: no run's plan says "floor", and `report` shows the
    // same table again from the file.
    let text = std::fs::read_to_string(dir.path().join("result.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(json["plan"].get("floor").is_none());
    let report = rtsoak().arg("report").arg(dir.path()).output().unwrap();
    assert!(String::from_utf8_lossy(&report.stdout).contains("The harness against its floor"));
}

#[test]
fn a_floor_run_under_noise_keeps_every_invariant() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let output = rtsoak()
        .args([
            "run",
            "-q",
            "-t",
            "eventfd",
            "--profile",
            "ci",
            "--duration",
            "2s",
        ])
        .args(["--floor", "-o"])
        .arg(dir.path())
        .output()
        .unwrap();
    let doc = load(dir.path());
    assert!(
        doc.floor_runs[0].noise.enabled,
        "the floor ran without the noise"
    );
    assert!(
        matches!(output.status.code(), Some(0 | 7)),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_paired(&doc);
}

#[test]
fn a_floor_run_longer_than_its_sample_arrays_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let output = rtsoak()
        .args(["run", "-t", "eventfd", "--floor", "--duration", "2h", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("with --floor") && stderr.contains("--rounds"),
        "{stderr}"
    );
    assert!(!out.exists(), "a refused run left {}", out.display());
}
