//! Noise as a user relies on it: every kind runs and says what it did, queue noise churns and
//! every member gets every message, noise that did not get the policy the profile asked for is
//! recorded, caveated and counted as a failure, `--no-noise` is silent, and no noise process
//! outlives the run, even when the coordinator is killed.

mod common;

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{
    as_ordinary_user, group_members, is_root, load, rtsoak, rtsoak_path, saved_run, serial, skip,
};
use rtsoak_record::result::noise_setup::Obtained;
use rtsoak_record::result::{NoiseKind, ResultDoc, RunResult, RunStatus};

/// Every kind of noise the `ci` profile starts.
const KINDS: [NoiseKind; 4] = [
    NoiseKind::NoisePublisher,
    NoiseKind::NoiseSubscriber,
    NoiseKind::BurstThread,
    NoiseKind::Load,
];

/// Each kind of noise in `run` says what the profile asked of it (policy, priority, CPUs),
/// accounts for every worker it recorded, and was never seen outside its CPUs.
fn assert_the_asks_are_on_record(doc: &ResultDoc, run: &RunResult) {
    let who = &run.transport;
    let plan = &doc.plan;
    for kind in KINDS {
        let setup = &run.noise.setup[&kind];
        let (policy, priority, cpus) = match kind {
            NoiseKind::NoisePublisher | NoiseKind::NoiseSubscriber => (
                plan.noise.queue.policy.name(),
                plan.noise.queue.priority,
                &plan.noise_cpus,
            ),
            NoiseKind::BurstThread => ("fifo", plan.noise.bursts.priority, &plan.noise.bursts.cpus),
            NoiseKind::Load => ("other", 0, &plan.noise_cpus),
        };
        assert_eq!(
            (
                setup.policy_requested.as_str(),
                setup.priority_requested,
                &setup.cpus_requested
            ),
            (policy, priority, cpus),
            "{who}: {kind:?}"
        );
        assert!(setup.recorded > 0, "{who}: {kind:?}: {setup:?}");
        assert_eq!(
            setup.as_asked + setup.not_as_asked,
            setup.recorded,
            "{who}: {kind:?}"
        );
        assert_eq!(
            setup.obtained.iter().map(|o| o.count).sum::<u64>(),
            setup.recorded,
            "{who}: {kind:?}"
        );
        assert!(
            setup.cpus_observed.iter().all(|cpu| cpus.contains(cpu)),
            "{who}: {kind:?} ran outside its CPUs: {setup:?}"
        );
    }
    assert_eq!(
        run.noise.setup[&NoiseKind::BurstThread].recorded as usize,
        plan.noise.bursts.cpus.len(),
        "{who}: one burst thread per burst CPU"
    );
}

#[test]
fn every_noise_kind_runs_and_reports_what_it_did() {
    let _serial = serial();
    let (dir, doc) = saved_run(&[
        "compare",
        "-q",
        "--profile",
        "ci",
        "-t",
        "signalfd,futex",
        "--duration",
        "3s",
    ]);
    for run in &doc.runs {
        let noise = &run.noise;
        let who = &run.transport;
        assert_eq!(run.status, RunStatus::Completed, "{who}: {:?}", run.reason);
        assert!(noise.enabled && noise.ran(), "{who}");
        let q = noise.queue;
        // 2 publishers and 2 subscribers living 50-500 ms each over ~3.2 s: each slot is
        // refilled at least once (how often depends on how much CPU the machine leaves them).
        let planned = &doc.plan.noise.queue;
        assert!(
            q.publishers_started > u64::from(planned.publishers)
                && q.subscribers_started > u64::from(planned.subscribers),
            "{who}: churns: {q:?}"
        );
        assert_eq!(
            q.publishers_started, q.publishers_stopped,
            "{who}: every noise process ended"
        );
        assert_eq!(q.subscribers_started, q.subscribers_stopped, "{who}");
        assert!(
            q.messages_sent > 0 && q.messages_received > 0,
            "{who}: {q:?}"
        );
        assert_eq!(
            q.member_misses, 0,
            "{who}: every member got every message published to it"
        );
        assert_eq!(q.wake_errors, 0, "{who}: {q:?}");
        assert_eq!(
            run.series["other_delivery"].summary.count, q.messages_sent,
            "{who}: the RT subscriber received every noise message"
        );
        assert_eq!(
            run.series["noise_send_call"].summary.count, q.messages_sent,
            "{who}"
        );
        assert_eq!(
            run.series["noise_delivery"].summary.count, q.messages_received,
            "{who}"
        );
        let bursts = noise.bursts.expect("bursts ran");
        assert_eq!(bursts.threads as usize, doc.plan.noise.bursts.cpus.len());
        assert!(bursts.bursts > 0 && bursts.busy_ns > 0, "{who}: {bursts:?}");
        assert!(
            bursts.max_duty_percent <= f64::from(bursts.duty_cap_percent),
            "{who}: the duty-cycle cap holds: {bursts:?}"
        );
        for generator in ["sched", "net", "mm", "timers", "file_io"] {
            let count = &noise.load[generator];
            assert!(
                count.operations > 0,
                "{who}: {generator} did nothing: {count:?}"
            );
        }
        for cpu in &noise.cpus_observed {
            assert!(
                doc.plan.noise_cpus.contains(cpu),
                "{who}: noise ran on CPU {cpu}, outside its CPUs"
            );
        }
        assert_the_asks_are_on_record(&doc, run);
        if is_root() {
            for kind in KINDS {
                let setup = &noise.setup[&kind];
                assert_eq!(setup.not_as_asked, 0, "{who}: {kind:?}: {setup:?}");
                assert_eq!(
                    setup.obtained,
                    [Obtained {
                        policy: setup.policy_requested.clone(),
                        priority: setup.priority_requested,
                        count: setup.recorded,
                    }],
                    "{who}: {kind:?} got what the ci profile asks for"
                );
            }
            assert_eq!(noise.failures, 0, "{who}: {:?}", noise.errors);
        } else {
            // Without privileges the only noise failures are the policies it could not take
            // (the ordinary-user test below says which).
            let shortfalls: u64 = noise.setup.values().map(|s| s.not_as_asked).sum();
            assert_eq!(noise.failures, shortfalls, "{who}: {:?}", noise.errors);
        }
        assert_eq!(
            run.integrity.lost, 0,
            "{who}: the RT pair lost nothing under noise"
        );
        assert!(!run.cpu_busy_percent.is_empty());
    }
    if is_root() {
        assert!(
            !doc.caveats
                .iter()
                .any(|c| c.text.contains("as the profile asked")),
            "{:?}",
            doc.caveats
        );
    }
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".rtsoak-noise"))
        .collect();
    assert!(
        leftovers.is_empty(),
        "file noise cleaned up after itself: {leftovers:?}"
    );
}

#[test]
fn an_ordinary_users_bursts_and_queue_noise_without_fifo_are_recorded_caveated_and_counted() {
    let _serial = serial();
    if !is_root() {
        return skip("needs root to drop to an unprivileged user with setpriv");
    }
    // An ordinary account may not take SCHED_FIFO: the ci profile's FIFO 20 queue noise and
    // FIFO 50 bursts all run SCHED_OTHER, and the run still completes, INCONCLUSIVE: neither
    // the RT pair nor the noise ran as the profile asked.
    let (output, home) =
        as_ordinary_user("run -q --profile ci -t eventfd --duration 1s -o results");
    let doc = load(&home.path().join("results"));
    use rtsoak_record::result::verdict::InconclusiveKind::{Noise, RtPriority};
    common::assert_inconclusive_for(&output, &doc, &[RtPriority, Noise], &[RtPriority, Noise]);
    let run = &doc.runs[0];
    assert_eq!(run.status, RunStatus::Completed, "{:?}", run.reason);
    assert_the_asks_are_on_record(&doc, run);
    let noise = &run.noise;
    for kind in [
        NoiseKind::NoisePublisher,
        NoiseKind::NoiseSubscriber,
        NoiseKind::BurstThread,
    ] {
        let setup = &noise.setup[&kind];
        assert_eq!(setup.as_asked, 0, "{kind:?}: {setup:?}");
        assert_eq!(
            setup.obtained,
            [Obtained {
                policy: "other".into(),
                priority: 0,
                count: setup.recorded,
            }],
            "{kind:?} ran SCHED_OTHER"
        );
        assert!(
            setup.reasons.iter().all(|r| r.contains("EPERM")),
            "{kind:?}: {:?}",
            setup.reasons
        );
    }
    assert_eq!(
        noise.setup[&NoiseKind::Load].not_as_asked,
        0,
        "load asks for SCHED_OTHER and gets it"
    );
    let shortfalls: u64 = noise.setup.values().map(|s| s.not_as_asked).sum();
    assert_eq!(
        noise.failures, shortfalls,
        "each worker and burst thread without its FIFO is a noise failure: {:?}",
        noise.errors
    );
    let burst_cpu = doc.plan.noise.bursts.cpus[0];
    let priority = doc.plan.noise.bursts.priority;
    assert!(
        noise.errors.iter().any(|e| e.starts_with(&format!(
            "a burst thread asked for fifo {priority} on CPU {burst_cpu} and got other: \
             sched_setscheduler failed: EPERM"
        ))),
        "{:?}",
        noise.errors
    );
    let threads = noise.setup[&NoiseKind::BurstThread].recorded;
    let publishers = noise.setup[&NoiseKind::NoisePublisher].recorded;
    for (line, what) in [
        (
            format!("{threads} of {threads} burst threads did not get fifo {priority}"),
            "bursts",
        ),
        (
            format!(
                "{publishers} of {publishers} noise publishers did not get fifo {}",
                doc.plan.noise.queue.priority
            ),
            "noise publishers",
        ),
    ] {
        assert!(
            doc.caveats.iter().any(|c| c.text.starts_with(&line)
                && c.text.contains("(they got other (")
                && c.text.contains("EPERM")),
            "the {what}' caveat says what was asked, what was got and why: {:?}",
            doc.caveats
        );
    }
}

#[test]
fn no_noise_is_a_quiet_baseline() {
    let _serial = serial();
    let (_dir, doc) = saved_run(&[
        "run",
        "-q",
        "--profile",
        "ci",
        "-t",
        "eventfd",
        "--duration",
        "1s",
        "--no-noise",
    ]);
    let run = &doc.runs[0];
    assert!(!doc.plan.noise.enabled);
    assert!(!run.noise.enabled && !run.noise.ran());
    assert_eq!(run.noise.queue, Default::default());
    assert!(run.noise.bursts.is_none() && run.noise.load.is_empty());
    assert!(!run.series.contains_key("noise_send_call"));
    assert_eq!(run.series["other_delivery"].summary.count, 0);
}

#[test]
fn an_external_command_is_pinned_and_stopped_with_the_run() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("external.toml");
    std::fs::write(
        &profile,
        // A development machine's profile, as the built-in `default`: CI's machine is no RT
        // board, and this test is about the external command, not the verdict.
        "[noise.bursts]\nenabled = false\n[noise.load]\nexternal = [\"sleep\", \"1000\"]\n\
         [verdict]\ndevelopment = true\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let run = rtsoak()
        .args([
            "run",
            "-q",
            "-t",
            "eventfd",
            "--duration",
            "1s",
            "--warmup",
            "0s",
            "--profile",
        ])
        .arg(&profile)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    let doc = load(&out);
    common::assert_passed_or_starved(&run, &doc);
    let external = doc.runs[0]
        .noise
        .external
        .clone()
        .expect("the external command ran");
    assert_eq!(external.argv, ["sleep", "1000"]);
    assert!(
        external.exit.contains("stopped by rtsoak"),
        "{}",
        external.exit
    );
    assert!(
        !common::alive(external.pid),
        "the external command was stopped"
    );
}

#[test]
fn a_missing_external_command_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("missing.toml");
    std::fs::write(
        &profile,
        "[noise.load]\nexternal = [\"no-such-stressor-xyz\"]\n",
    )
    .unwrap();
    rtsoak()
        .args(["run", "-q", "-t", "eventfd", "--profile"])
        .arg(&profile)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no-such-stressor-xyz"))
        .stderr(predicates::str::contains("noise.load.external"));
}

#[test]
fn killing_the_coordinator_takes_every_worker_and_noise_process_with_it() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(rtsoak_path())
        .args([
            "run",
            "-q",
            "-t",
            "msg-ring",
            "--profile",
            "ci",
            "--duration",
            "10s",
            "-o",
        ])
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let pgid = child.id() as i32;
    // Let the RT pair, bursts, load and queue noise all start.
    let deadline = Instant::now() + Duration::from_secs(10);
    while group_members(pgid).len() < 6 {
        assert!(
            Instant::now() < deadline,
            "the run never started its workers"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    assert!(group_members(pgid).len() >= 6);
    child.kill().unwrap();
    child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(1);
    while !group_members(pgid).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        group_members(pgid),
        Vec::<i32>::new(),
        "every worker died within a second"
    );
}
