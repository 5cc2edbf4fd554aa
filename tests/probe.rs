//! `rtsoak probe` on the live machine, and the system check and `/dev/cpu_dma_latency` record
//! that every result carries. Expectations come from the host facts probe reports, so the tests
//! hold on any machine; on the development VM they see a non-RT kernel, no isolated CPU, RT
//! throttling on, no cpufreq and all four transports.

mod common;

use common::{is_root, load, rtsoak};
use rtsoak_record::HostFacts;

/// What `rtsoak probe ARGS` printed; its exit code must be its readiness (0 or 1), which
/// [`probe_exits_by_whether_the_figures_would_be_real_time_figures`] checks against what it
/// found.
fn probe_text(args: &[&str]) -> String {
    let output = rtsoak().arg("probe").args(args).output().unwrap();
    assert!(matches!(output.status.code(), Some(0 | 1)), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

/// The conditions that invalidate real-time figures, as the caveats judge the check's findings.
const INVALIDATING: [&str; 3] = [
    "kernel.preempt-rt",
    "privileges.rt-priority",
    "layout.noise-shares-rt-cpu",
];

#[test]
fn probe_exits_by_whether_the_figures_would_be_real_time_figures() {
    let output = rtsoak().args(["probe", "--json"]).output().unwrap();
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let findings = report["system_check"]["findings"].as_array().unwrap();
    let not_ready = findings.iter().any(|f| {
        let level = f["level"].as_str().unwrap();
        level == "problem" || (level != "ok" && INVALIDATING.contains(&f["id"].as_str().unwrap()))
    });
    assert_eq!(
        output.status.code(),
        Some(i32::from(not_ready)),
        "{findings:#?}"
    );
    let text = rtsoak().arg("probe").output().unwrap();
    assert_eq!(
        text.status.code(),
        output.status.code(),
        "the text says the same"
    );
    assert_eq!(
        String::from_utf8_lossy(&text.stdout).contains("PROBLEM"),
        findings.iter().any(|f| f["level"] == "problem")
    );
    let usage = rtsoak()
        .args(["probe", "--rt-cpus", "0,nope"])
        .output()
        .unwrap();
    assert_eq!(usage.status.code(), Some(2), "{usage:?}");
}

#[test]
fn probe_names_the_kernel_isolation_throttling_governor_and_every_transport() {
    let report: serde_json::Value = serde_json::from_str(&probe_text(&["--json"])).unwrap();
    let host: HostFacts = serde_json::from_value(report["host"].clone()).unwrap();
    let text = probe_text(&[]);
    if host.preempt_rt {
        assert!(text.contains("ok       kernel: "), "{text}");
    } else {
        assert!(
            text.contains("PROBLEM  kernel: ") && text.contains("is not PREEMPT_RT"),
            "{text}"
        );
    }
    if host.isolated.is_empty() {
        assert!(text.contains("isolation: no CPU is isolated"), "{text}");
    }
    match host.sched_rt_runtime_us {
        Some(-1) => assert!(text.contains("RT throttling: off"), "{text}"),
        Some(_) => assert!(text.contains("warning  RT throttling: on:"), "{text}"),
        None => {}
    }
    if host.cpus.iter().all(|c| c.governor.is_none()) {
        assert!(text.contains("frequency: no cpufreq on RT CPU"), "{text}");
    } else {
        assert!(text.contains(" frequency: "), "{text}");
    }
    for name in rtsoak_record::transport::Name::ids() {
        assert!(
            text.lines().any(|line| line.trim_start().starts_with(name)
                && (line.contains(" supported ") || line.contains(" UNSUPPORTED "))),
            "no matrix line for {name}: {text}"
        );
    }
    assert!(
        text.contains("What a result measured here is worth"),
        "{text}"
    );
}

#[test]
fn probe_json_holds_the_whole_check_the_host_and_the_matrix() {
    let report: serde_json::Value = serde_json::from_str(&probe_text(&["--json"])).unwrap();
    let check = &report["system_check"];
    let findings = check["findings"].as_array().unwrap();
    for id in [
        "kernel.preempt-rt",
        "cpus.isolated",
        "sched.rt-throttling",
        "cpu.governor",
        "irq.irqbalance",
        "privileges.rt-priority",
        "transport.futex",
    ] {
        assert!(findings.iter().any(|f| f["id"] == id), "no finding {id}");
    }
    for finding in findings {
        let level = finding["level"].as_str().unwrap();
        assert!(["ok", "warning", "problem"].contains(&level), "{finding}");
    }
    assert!(check["worth"].is_array());
    assert!(report["host"]["kernel_release"].is_string());
    // One entry per transport rtsoak knows, mainline and unmerged alike.
    let listed: Vec<&str> = report["support"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["transport"].as_str().unwrap())
        .collect();
    assert_eq!(listed, rtsoak_record::transport::Name::ids());
}

#[test]
fn probe_judges_the_rt_cpus_it_is_given() {
    let report: serde_json::Value =
        serde_json::from_str(&probe_text(&["--json", "--rt-cpus", "0,1"])).unwrap();
    let cpus = &report["system_check"]["cpus"];
    assert_eq!(
        (cpus["publisher"].as_u64(), cpus["subscriber"].as_u64()),
        (Some(0), Some(1))
    );
    rtsoak()
        .args(["probe", "--rt-cpus", "0,4000"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("4000"));
}

/// A one-second soak of one transport into a fresh directory, returning the result.
fn short_run(profile: &str, extra: &[&str]) -> rtsoak_record::result::ResultDoc {
    let _serial = common::serial();
    let dir = tempfile::tempdir().unwrap();
    let run = rtsoak()
        .args(["run", "-q", "-t", "eventfd", "--duration", "1s"])
        .args(["--profile", profile])
        .args(["--warmup", "0ms", "-o"])
        .arg(dir.path())
        .args(extra)
        .output()
        .unwrap();
    let doc = load(dir.path());
    common::assert_passed_or_starved(&run, &doc);
    doc
}

#[test]
fn every_result_records_the_system_check_and_the_cpu_dma_latency_it_held() {
    let doc = short_run("ci", &[]);
    let check = doc
        .system_check
        .as_ref()
        .expect("the result holds the check");
    assert_eq!(check.cpus.publisher, doc.plan.rt.publisher_cpu);
    for line in &check.worth {
        if !line.contains("idle states") {
            assert!(
                doc.caveats.iter().any(|c| &c.text == line),
                "caveat missing: {line}"
            );
        }
    }
    let hold = doc.cpu_dma_latency.as_ref().unwrap();
    assert!(hold.requested && doc.plan.hold_cpu_dma_latency);
    let device = std::path::Path::new("/dev/cpu_dma_latency").exists();
    if is_root() && device {
        assert_eq!(hold.held_us, Some(0));
        assert_eq!(hold.not_held_because, None);
    } else {
        common::skip("not root or no /dev/cpu_dma_latency: the hold is recorded as refused");
        assert_eq!(hold.held_us, None);
        assert!(hold.not_held_because.is_some());
    }
}

#[test]
fn the_flag_and_the_profile_key_turn_the_cpu_dma_latency_hold_off() {
    let doc = short_run("ci", &["--no-cpu-dma-latency"]);
    let hold = doc.cpu_dma_latency.unwrap();
    assert!(!hold.requested && !doc.plan.hold_cpu_dma_latency);
    assert_eq!(hold.held_us, None);
    assert!(hold.not_held_because.unwrap().contains("not requested"));

    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("cold.toml");
    std::fs::write(
        &profile,
        // A development machine's profile, like `default`: this test is about the hold, and
        // the CI machine is no RT board.
        "[run]\nduration_s = 1\n[system]\nhold_cpu_dma_latency = false\n[verdict]\ndevelopment = true\n",
    )
    .unwrap();
    let (name, parsed) = rtsoak::profile::load(profile.to_str().unwrap()).unwrap();
    assert!(!parsed.system.hold_cpu_dma_latency, "{name}");
    let doc = short_run(profile.to_str().unwrap(), &[]);
    assert!(!doc.cpu_dma_latency.unwrap().requested);
    std::fs::write(dir.path().join("typo.toml"), "[system]\nhold_dma = false\n").unwrap();
    rtsoak()
        .args(["run", "-t", "eventfd", "--profile"])
        .arg(dir.path().join("typo.toml"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("hold_dma"));
}
