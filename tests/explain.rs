//! The spike explainer as a user relies on it: the calibration inversion is named exactly (the
//! PI futex, the holder's pid, role and boost, the burst that preempted it), every kept spike of
//! a real compare carries a chain or "unexplained", and without root the result says why the
//! spikes are unexplained instead of failing the run. On a machine whose every CPU is an RT CPU
//! (as CI's 2 CPUs) the explainer is off by default, so these runs ask for it.

mod common;

use common::{as_ordinary_user, is_root, load, rtsoak, saved_run, serial, skip};
use rtsoak_record::Series;
use rtsoak_record::result::RunStatus;
use rtsoak_record::result::explain::Why;

#[test]
fn the_calibration_inversion_is_named_exactly() {
    let _serial = serial();
    if !is_root() {
        return skip("explain-check needs root (tracefs and SCHED_FIFO)");
    }
    let output = rtsoak()
        .args(["explain-check", "--rounds", "3"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(text.matches(": right").count(), 3, "{text}");
    assert_eq!(
        text.matches(
            "blocked on a PI futex (rt_mutex) held by a noise publisher boosted to FIFO 40 and \
             preempted by a burst thread (FIFO 50)"
        )
        .count(),
        3,
        "{text}"
    );
    assert!(text.contains("PASS: 3 of 3"), "{text}");
}

#[test]
fn every_kept_spike_of_a_compare_carries_a_chain_or_unexplained() {
    let _serial = serial();
    if !is_root() {
        return skip("tracing needs root");
    }
    let (_dir, doc) = saved_run(&[
        "compare",
        "-q",
        "--profile",
        "ci",
        "--explain",
        "-t",
        "futex,eventfd",
        "--duration",
        "3s",
    ]);
    for run in &doc.runs {
        let who = &run.transport;
        assert_eq!(run.status, RunStatus::Completed, "{who}");
        let explanation = run.explanation.as_ref().expect("the explainer ran");
        assert_eq!(explanation.tracing.unavailable, None, "{who}");
        assert!(explanation.tracing.lines > 0, "{who}: the trace was read");
        for judged in [Series::SendCall, Series::Delivery] {
            let name = judged.name();
            let series = &run.series[name];
            let blame = &explanation.series[name];
            assert_eq!(
                blame.over_threshold, series.summary.over_threshold,
                "{who} {name}"
            );
            assert_eq!(blame.kept, series.outliers.len() as u64, "{who} {name}");
            assert_eq!(
                blame.explained + blame.unexplained,
                blame.kept,
                "{who} {name}"
            );
            assert!(
                blame.unexplained_on_cpu <= blame.unexplained,
                "{who} {name}"
            );
            assert_eq!(
                blame.causes.iter().map(|c| c.count).sum::<u64>(),
                blame.explained,
                "{who} {name}: every explained spike has one cause"
            );
            // Each kept outlier, and only those, appears once with its verdict.
            let mut listed: Vec<(u64, u64)> = explanation
                .outliers
                .iter()
                .filter(|o| o.series == judged)
                .map(|o| (o.at_ns, o.value_ns))
                .collect();
            let mut kept: Vec<(u64, u64)> = series
                .outliers
                .iter()
                .map(|o| (o.at_ns, o.value_ns))
                .collect();
            listed.sort_unstable();
            kept.sort_unstable();
            assert_eq!(listed, kept, "{who} {name}");
        }
        for outlier in &explanation.outliers {
            match &outlier.why {
                Why::Explained(chain) => assert!(
                    chain.share_percent >= 50.0 && chain.blamed_us > 0,
                    "{who}: a cause covers at least half of its spike: {outlier:?}"
                ),
                Why::Unexplained {
                    largest_wait,
                    reason,
                    ..
                } => {
                    assert!(
                        reason.is_none(),
                        "{who}: no sentence is stored: {outlier:?}"
                    );
                    assert!(
                        largest_wait.as_ref().is_none_or(|w| w.share_percent < 50.0),
                        "{who}: a wait under half of its spike: {outlier:?}"
                    );
                }
            }
        }
    }
    let instances = std::fs::read_dir("/sys/kernel/tracing/instances").unwrap();
    let ours: Vec<_> = instances
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("rtsoak-"))
        .collect();
    assert!(ours.is_empty(), "the trace instance is removed: {ours:?}");
}

#[test]
fn without_root_the_spikes_are_said_to_be_unexplained() {
    let _serial = serial();
    if !is_root() {
        return skip("needs root to become an ordinary user");
    }
    let (output, home) = as_ordinary_user("compare -q --explain --duration 1s -t futex -o results");
    let doc = load(&home.path().join("results"));
    // Without RT priority the pair and the FIFO noise ran SCHED_OTHER: measured, but not what
    // the profile asked for.
    use rtsoak_record::result::verdict::InconclusiveKind::{Noise, RtPriority};
    common::assert_inconclusive_for(&output, &doc, &[RtPriority, Noise], &[RtPriority]);
    let explanation = doc.runs[0].explanation.as_ref().expect("recorded");
    let reason = explanation.tracing.unavailable.as_deref().unwrap_or("");
    assert!(reason.contains("root"), "says what to do: {reason}");
    assert!(
        doc.caveats
            .iter()
            .any(|c| c.text.starts_with("the spikes are unexplained")),
        "{:?}",
        doc.caveats
    );
}

#[test]
fn explain_check_refuses_cpus_it_cannot_use_and_an_ordinary_user_is_told_what_it_needs() {
    let _serial = serial();
    for (cpus, says) in [
        ("0,4095", "CPU 4095 is not one this process may use"),
        ("1,1", "needs two different CPUs"),
    ] {
        let output = rtsoak()
            .args(["explain-check", "--cpus", cpus])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "--cpus {cpus}: {stderr}");
        assert!(stderr.contains(says), "--cpus {cpus}: {stderr}");
    }
    if !is_root() {
        return skip("needs root to become an ordinary user");
    }
    let (output, _home) = as_ordinary_user("explain-check --rounds 1");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains("cannot use SCHED_FIFO 50") && stderr.contains("root"),
        "{stderr}"
    );
}

#[test]
fn by_default_the_explainer_runs_only_where_its_reader_has_a_cpu_outside_the_rt_pair() {
    let _serial = serial();
    let (_dir, doc) = saved_run(&["run", "-q", "-t", "futex", "--duration", "1s"]);
    let plan = &doc.plan;
    let housekeeping = &plan.housekeeping_cpus;
    let said = doc.caveats.iter().any(|c| {
        c.text
            .starts_with("spikes not explained: every CPU is an RT CPU")
    });
    if housekeeping.is_empty() {
        assert!(!plan.explain && said, "{:?}", doc.caveats);
        assert_eq!(doc.runs[0].explanation, None);
    } else {
        assert!(plan.explain && !said, "{:?}", doc.caveats);
        assert!(doc.runs[0].explanation.is_some());
    }
}

#[test]
fn a_break_keeps_the_explainers_trace_and_says_why_the_breaking_sample_was_late() {
    let _serial = serial();
    if !is_root() {
        return skip("tracing needs root");
    }
    let dir = tempfile::tempdir().unwrap();
    // A delivery always takes longer than 1 us: the break fires on the first measured message.
    let out = rtsoak()
        .args([
            "run",
            "-q",
            "-t",
            "eventfd",
            "--profile",
            "ci",
            "--explain",
            "--duration",
            "1s",
            "--break-on",
            "1",
            "-o",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = load(dir.path());
    let run = &doc.runs[0];
    let event = run.break_event.expect("the break is recorded");
    let explanation = run.explanation.as_ref().expect("the run was explained");
    let why = explanation
        .break_event
        .as_ref()
        .expect("the break's sample is explained");
    assert_eq!(
        (why.series, why.at_ns, why.value_ns),
        (event.series, event.at_ns, event.value_ns)
    );
    let file = explanation
        .tracing
        .trace_file
        .as_ref()
        .expect("a break keeps the trace");
    let trace = std::fs::read_to_string(dir.path().join(file)).unwrap();
    assert!(
        trace.contains("sched_switch"),
        "the trace is in the result directory"
    );
    let report = rtsoak().args(["report"]).arg(dir.path()).output().unwrap();
    let table = String::from_utf8_lossy(&report.stdout);
    assert!(
        table.contains("  why: "),
        "the table says why the break happened:\n{table}"
    );
}

/// Whether tracefs is mounted at /sys/kernel/tracing, as the mount table says.
fn tracefs_mounted() -> bool {
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .any(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            fields.get(4) == Some(&"/sys/kernel/tracing")
                && line
                    .split(" - ")
                    .nth(1)
                    .is_some_and(|t| t.starts_with("tracefs "))
        })
}

#[test]
fn where_tracefs_is_not_mounted_rtsoak_mounts_it_as_trace_cmd_does_and_says_so() {
    let _serial = serial();
    if !is_root() {
        return skip("mounting tracefs needs root");
    }
    // Start from what a freshly booted machine has: nothing mounted at /sys/kernel/tracing.
    if tracefs_mounted() {
        let umount = std::process::Command::new("umount")
            .arg("/sys/kernel/tracing")
            .output()
            .unwrap();
        if !umount.status.success() {
            // Busy: something else traces. In CI nothing does, so this must not happen there.
            return skip(&format!(
                "tracefs is busy and cannot be unmounted: {}",
                String::from_utf8_lossy(&umount.stderr)
            ));
        }
    }
    assert!(!tracefs_mounted());
    let dir = tempfile::tempdir().unwrap();
    let output = rtsoak()
        .args([
            "run",
            "-q",
            "-t",
            "eventfd",
            "--profile",
            "ci",
            "--no-noise",
        ])
        .args(["--duration", "1s", "--explain", "-o"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let doc = load(dir.path());
    common::assert_passed_or_starved(&output, &doc);
    assert!(tracefs_mounted(), "mounted, and left mounted: {stderr}");
    assert_eq!(
        doc.tracefs_mounted.as_deref(),
        Some("/sys/kernel/tracing"),
        "the result says rtsoak mounted it"
    );
    assert!(
        stderr.contains("rtsoak mounted it at /sys/kernel/tracing"),
        "{stderr}"
    );
    let explanation = doc.runs[0].explanation.as_ref().expect("explained");
    assert_eq!(
        explanation.tracing.unavailable, None,
        "the explainer traced"
    );
    // Already mounted, the next run mounts nothing and says nothing of it.
    let (_dir, doc) = saved_run(&[
        "run",
        "-q",
        "-t",
        "eventfd",
        "--profile",
        "ci",
        "--no-noise",
        "--duration",
        "1s",
        "--explain",
    ]);
    assert_eq!(doc.tracefs_mounted, None);
}
