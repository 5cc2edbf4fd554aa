//! `rtsoak bench` end to end on this machine: every benchmark runs with tiny round counts and
//! validates every completion; `bench compare` computes the A/B/A figures from saved results
//! and exits with the verdict's code; bad input is a usage error naming what is wrong.
//! Timings are never asserted.

mod common;

use std::path::Path;

use common::rtsoak;
use predicates::prelude::*;
use rtsoak_record::bench::BenchDoc;

/// Run one bench with 1 warm-up and 2 measured rounds of 8 cycles; return its document.
fn run_bench(name: &str, extra: &[&str], dir: &Path) -> BenchDoc {
    let output = rtsoak()
        .args(["-q", "bench", name, "--warmup-rounds", "1", "--rounds", "2"])
        .args(["--cycles", "8", "--json", "-o"])
        .arg(dir)
        .args(extra)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{name} {extra:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let printed: BenchDoc = serde_json::from_slice(&output.stdout).unwrap();
    let saved: BenchDoc =
        serde_json::from_slice(&std::fs::read(dir.join("bench.json")).unwrap()).unwrap();
    assert_eq!(printed, saved, "the printed document is the saved one");
    saved
}

/// Every round of every series passed every check and validated every completion.
fn assert_all_rounds_valid(doc: &BenchDoc, completions_per_cycle: u64) {
    assert!(doc.valid, "{:#?}", doc.series);
    for series in &doc.series {
        assert_eq!(series.rounds.len(), 3, "1 warm-up + 2 measured");
        assert!(series.rounds[0].warmup && !series.rounds[1].warmup);
        assert_eq!(series.summary.valid_rounds, 2);
        for round in &series.rounds {
            assert!(round.valid, "{round:#?}");
            assert!(round.checks.failed.is_empty());
            assert_eq!(round.cycles, 8);
            assert!(round.ns_per_op > 0.0);
            let per_cycle = completions_per_cycle
                * series
                    .name
                    .strip_prefix("threads-")
                    .map_or(1, |n| n.parse::<u64>().unwrap());
            assert_eq!(round.checks.expected_completions, 8 * per_cycle);
            assert_eq!(round.checks.completions, 8 * per_cycle);
        }
    }
}

#[test]
fn futex_wait_wake_validates_every_wait_and_wake_with_private_and_shared_words() {
    let dir = tempfile::tempdir().unwrap();
    let doc = run_bench("futex-wait-wake", &["-k", "4"], &dir.path().join("p"));
    assert_eq!(doc.series[0].name, "futex-wait-wake");
    assert_eq!(doc.series[0].ops_per_cycle, 4);
    assert_eq!(doc.series[0].rounds[1].ops, 32);
    assert!(!doc.config.shared);
    assert_all_rounds_valid(&doc, 8);

    let doc = run_bench(
        "futex-wait-wake",
        &[
            "-k",
            "4",
            "--shared",
            "--ring-setup",
            "defer-taskrun",
            "--policy",
            "other",
        ],
        &dir.path().join("s"),
    );
    assert!(doc.config.shared);
    assert_eq!(doc.setup.policy, "other");
    assert_all_rounds_valid(&doc, 8);
}

#[test]
fn futex_waitv_validates_the_woken_index_and_finds_no_waiter_left_behind() {
    let dir = tempfile::tempdir().unwrap();
    let doc = run_bench(
        "futex-waitv",
        &["--vectors", "3", "--width", "5", "--wake-index", "4"],
        dir.path(),
    );
    assert_eq!(doc.config.wake_index, Some(4));
    assert_all_rounds_valid(&doc, 6);
    for round in &doc.series[0].rounds {
        assert_eq!(round.checks.residual_waiters, Some(0));
    }
}

#[test]
fn futex_syscall_measures_each_thread_count_as_its_own_series() {
    let dir = tempfile::tempdir().unwrap();
    let doc = run_bench(
        "futex-syscall",
        &["-k", "4", "--threads", "1,2"],
        dir.path(),
    );
    let names: Vec<&str> = doc.series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["threads-1", "threads-2"]);
    assert_all_rounds_valid(&doc, 4);
}

#[test]
fn msg_ring_and_eventfd_validate_every_message() {
    let dir = tempfile::tempdir().unwrap();
    let doc = run_bench("msg-ring", &["-k", "4"], &dir.path().join("m"));
    assert_all_rounds_valid(&doc, 8);
    let doc = run_bench("eventfd", &["-k", "4"], &dir.path().join("e"));
    assert_all_rounds_valid(&doc, 8);
}

/// Save `template` with every measured round of its one series set to `ns_per_op[i]`.
fn save_point(template: &BenchDoc, ns_per_op: &[f64], path: &Path) {
    let mut doc = template.clone();
    let measured: Vec<_> = doc.series[0]
        .rounds
        .iter_mut()
        .filter(|r| !r.warmup)
        .collect();
    assert_eq!(measured.len(), ns_per_op.len());
    for (round, value) in measured.into_iter().zip(ns_per_op) {
        round.ns_per_op = *value;
    }
    std::fs::write(path, serde_json::to_vec(&doc).unwrap()).unwrap();
}

#[test]
fn compare_reports_the_child_against_the_parents_midpoint_and_exits_3_on_a_regression() {
    let dir = tempfile::tempdir().unwrap();
    let template = run_bench("futex-wait-wake", &["-k", "2"], &dir.path().join("run"));
    let (a, child, b) = (
        dir.path().join("a.json"),
        dir.path().join("child.json"),
        dir.path().join("b.json"),
    );
    // The figures of the 2026-07-30 io_uring scalar futex wait/wake regression report (parent
    // A, child, parent B ns/op), two equal rounds each (CV 0): +9.268 %, drift -0.124 %.
    save_point(&template, &[180.079, 180.079], &a);
    save_point(&template, &[196.647, 196.647], &child);
    save_point(&template, &[179.856, 179.856], &b);
    rtsoak()
        .args(["bench", "compare"])
        .args([&a, &child, &b])
        .assert()
        .code(3)
        .stdout(predicate::str::contains("+9.268%"))
        .stdout(predicate::str::contains("-0.124%"))
        .stdout(predicate::str::contains(
            "signal 5.000%, drift 2.000%, CV 2.000%",
        ))
        .stdout(predicate::str::contains("verdict: regression"));
    // A stricter drift gate than the parents met: inconclusive, exit 1.
    rtsoak()
        .args(["bench", "compare", "--drift-pct", "0.1"])
        .args([&a, &child, &b])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("verdict: inconclusive"));
    // Two-way, B against A: (179.856 - 180.079) / 180.079 = -0.124 %: no change.
    rtsoak()
        .args(["bench", "compare"])
        .args([&a, &b])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("verdict: no change"));
}

#[test]
fn compare_refuses_a_result_whose_round_took_no_time_rather_than_dividing_by_it() {
    let dir = tempfile::tempdir().unwrap();
    let template = run_bench("futex-wait-wake", &["-k", "2"], &dir.path().join("run"));
    let (zero, negative, real) = (
        dir.path().join("zero.json"),
        dir.path().join("negative.json"),
        dir.path().join("real.json"),
    );
    // A parent of 0 ns/op makes every change infinite; a negative one turns a regression into
    // an improvement.
    save_point(&template, &[0.0, 0.0], &zero);
    save_point(&template, &[-180.0, -180.0], &negative);
    save_point(&template, &[180.0, 180.0], &real);
    for bad in [&zero, &negative] {
        rtsoak()
            .args(["bench", "compare"])
            .args([bad, &real])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("which no operation takes"));
    }
}

#[test]
fn compare_refuses_results_run_with_different_flags() {
    let dir = tempfile::tempdir().unwrap();
    let k2 = dir.path().join("k2");
    let k3 = dir.path().join("k3");
    run_bench("futex-wait-wake", &["-k", "2"], &k2);
    run_bench("futex-wait-wake", &["-k", "3"], &k3);
    rtsoak()
        .args(["bench", "compare"])
        .args([&k2, &k3])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("k=2").and(predicate::str::contains("k=3")));
}

#[test]
fn a_missing_result_file_is_a_usage_error_naming_it() {
    rtsoak()
        .args([
            "bench",
            "compare",
            "/nonexistent/a.json",
            "/nonexistent/b.json",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("/nonexistent/a.json"));
}

#[test]
fn zero_requests_per_cycle_is_a_usage_error() {
    rtsoak()
        .args(["bench", "futex-wait-wake", "-k", "0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("-k"));
}

#[test]
fn an_unknown_bench_is_a_usage_error_naming_it() {
    rtsoak()
        .args(["bench", "futex-requeue"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("'futex-requeue'").and(predicate::str::contains("--help")),
        );
}

#[test]
fn bench_help_lists_every_benchmark() {
    let output = rtsoak().args(["bench", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&output.stdout);
    for name in rtsoak_measure::bench::BENCHES.iter().map(|b| b.name()) {
        assert!(help.contains(name), "{name} missing from:\n{help}");
    }
    assert!(help.contains("compare"));
}

#[test]
fn the_bench_docs_table_lists_every_benchmark() {
    let page = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/bench.md"))
        .unwrap();
    for bench in rtsoak_measure::bench::BENCHES {
        let row = format!("| `{}` |", bench.name());
        assert!(
            page.contains(&row),
            "docs/bench.md has no bench table row {row}"
        );
    }
}

#[test]
fn a_wake_index_outside_the_vector_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    rtsoak()
        .args([
            "bench",
            "futex-waitv",
            "--width",
            "4",
            "--wake-index",
            "4",
            "-o",
        ])
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--wake-index 4"));
    assert!(
        !dir.path().join("bench.json").exists(),
        "nothing measured, nothing saved"
    );
}

#[test]
fn a_cpu_that_is_not_online_is_a_usage_error() {
    rtsoak()
        .args(["bench", "eventfd", "--cpu", "4095"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--cpu 4095"));
}

#[test]
fn a_soak_result_is_not_mistaken_for_a_bench_result() {
    let dir = tempfile::tempdir().unwrap();
    let soak = dir.path().join("soak.json");
    std::fs::write(&soak, r#"{"schema_version": 1, "command": "run"}"#).unwrap();
    rtsoak()
        .args(["bench", "compare"])
        .args([&soak, &soak])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not an rtsoak bench result"));
}
