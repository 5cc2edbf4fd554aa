//! Caveats of a result made the way a run makes it: the default profile resolved on the VM
//! fixture machine, and its system check. They need the profile, the machine reading and the
//! system check, so they are tested here rather than in the analysis crate.

use rtsoak_analysis::judge::caveats::{caveats, ranked};
use rtsoak_record::result::{ResultDoc, Tool};
use rtsoak_record::{CaveatKind, CheckId, CpuDmaLatency, Privileges, Severity, Trial};

use crate::preflight::check;
use crate::profile::{CpuTopology, Overrides};
use crate::sysinfo::{SysRoot, host_facts};

/// A result with no runs on the VM fixture, its default plan and its system check.
fn vm_doc(held: Option<bool>) -> ResultDoc {
    vm_doc_with(held, &Overrides::default())
}

/// A result with no runs on the VM fixture, the default profile with `overrides`, and its
/// system check.
fn vm_doc_with(held: Option<bool>, overrides: &Overrides) -> ResultDoc {
    let root = SysRoot::at(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sys/vm-2cpu"
    ));
    let host = host_facts(&root);
    let (name, profile) = crate::profile::load("default").unwrap();
    let topology = CpuTopology {
        online: host.online_cpus(),
        isolated: host.isolated_cpus(),
    };
    let plan = crate::profile::resolve(
        &name,
        &profile,
        overrides,
        &topology,
        &rtsoak_record::transport::Name::all(),
    )
    .unwrap();
    let granted = Trial::granted("everything");
    let privileges = Privileges {
        rt_priority: granted.clone(),
        memory_lock: granted.clone(),
        pidfd_getfd: granted,
    };
    let system_check = check(&root, &plan.rt_cpus(), &privileges, &[]);
    ResultDoc {
        schema_version: rtsoak_record::result::SCHEMA_VERSION,
        tool: Tool::current(),
        command: "run".into(),
        argv: Vec::new(),
        started_at: String::new(),
        finished_at: None,
        interrupted: false,
        host,
        plan,
        caveats: Vec::new(),
        support: Vec::new(),
        runs: Vec::new(),
        system_check: Some(system_check),
        cpu_dma_latency: held.map(|held| CpuDmaLatency {
            path: "/dev/cpu_dma_latency".into(),
            requested: true,
            held_us: held.then_some(0),
            not_held_because: (!held).then(|| "permission denied".to_string()),
        }),
        cpu_wait: None,
        tracefs_mounted: None,
        decision: None,
        verdict: None,
        floor_runs: Vec::new(),
        tail_pooled: Vec::new(),
        end_actions: Vec::new(),
    }
}

#[test]
fn the_checks_summary_comes_first_then_the_layout_notes() {
    let doc = vm_doc(Some(true));
    let caveats = caveats(&doc);
    assert!(caveats[0].starts_with("not a PREEMPT_RT kernel (6.18.44-fc-v669)"));
    assert!(
        caveats.contains(
            &"RT CPUs 0-1 not isolated (isolcpus=/nohz_full=): other tasks and interrupts may \
          run there"
                .to_string()
        )
    );
    assert_eq!(
        caveats.last(),
        doc.plan.layout_notes.last().map(|note| &note.text)
    );
}

#[test]
fn deep_idle_states_matter_only_when_cpu_dma_latency_was_not_held() {
    let held = caveats(&vm_doc(Some(true)));
    assert!(!held.iter().any(|c| c.contains("idle states")), "{held:#?}");
    let refused = caveats(&vm_doc(Some(false)));
    let idle: Vec<&String> = refused
        .iter()
        .filter(|c| c.contains("idle states"))
        .collect();
    assert_eq!(idle.len(), 1, "one line, the hold's own: {refused:#?}");
    assert!(
        refused
            .iter()
            .any(|c| { c.starts_with("/dev/cpu_dma_latency was not held (permission denied)") })
    );
}

#[test]
fn a_result_without_a_system_check_keeps_the_host_based_caveats() {
    let mut doc = vm_doc(None);
    doc.system_check = None;
    let caveats = caveats(&doc);
    assert!(caveats[0].starts_with("not a PREEMPT_RT kernel"));
    assert!(
        caveats
            .iter()
            .any(|c| c.starts_with("RT CPUs 0-1 not isolated"))
    );
    assert!(!caveats.iter().any(|c| c.contains("was not held")));
}

#[test]
fn caveats_are_ranked_by_what_they_change_not_by_code_order() {
    let ranked = ranked(&with_run(vm_doc(Some(true)), true, true));
    let severities: Vec<Severity> = ranked.iter().map(|c| c.severity).collect();
    let mut sorted = severities.clone();
    sorted.sort();
    assert_eq!(severities, sorted, "{ranked:#?}");
    let of = |start: &str| {
        ranked
            .iter()
            .find(|c| c.text.starts_with(start))
            .unwrap_or_else(|| panic!("no `{start}`: {ranked:#?}"))
            .severity
    };
    assert_eq!(of("not a PREEMPT_RT kernel"), Severity::Invalidates);
    assert_eq!(of("noise shares CPUs 0-1"), Severity::Invalidates);
    assert_eq!(of("RT CPUs 0-1 not isolated"), Severity::Distorts);
    assert_eq!(of("RCU callbacks run on the RT CPUs"), Severity::Detail);
}

/// `doc` with one eventfd run made as `run -t eventfd` makes it: with noise (queue noise, and
/// bursts that ran when `bursts`) or none (see [`quiet_vm_doc`] for the plan `--no-noise` makes).
fn with_run(mut doc: ResultDoc, noise: bool, bursts: bool) -> ResultDoc {
    let mut run = rtsoak_testing::fixture::one_run_doc().runs.remove(0);
    run.noise.enabled = noise;
    run.noise.cpus = if noise {
        doc.plan.noise_cpus.clone()
    } else {
        Vec::new()
    };
    run.noise.bursts = (noise && bursts).then(|| rtsoak_record::BurstReport {
        threads: 2,
        bursts: 1200,
        ..Default::default()
    });
    doc.runs = vec![run];
    doc
}

/// The VM fixture's result as `run -t eventfd --no-noise` plans it.
fn quiet_vm_doc() -> ResultDoc {
    let overrides = Overrides {
        no_noise: true,
        ..Default::default()
    };
    vm_doc_with(Some(true), &overrides)
}

/// The kinds of `doc`'s caveats, with their severities.
fn kinds(doc: &ResultDoc) -> Vec<(CaveatKind, Severity)> {
    ranked(doc)
        .into_iter()
        .map(|c| (c.kind, c.severity))
        .collect()
}

fn has(doc: &ResultDoc, kind: impl Into<CaveatKind>) -> Option<Severity> {
    let kind = kind.into();
    kinds(doc)
        .into_iter()
        .find(|(k, _)| *k == kind)
        .map(|(_, severity)| severity)
}

#[test]
fn a_run_without_noise_is_told_the_coordinator_shares_its_cpus_not_that_noise_does() {
    let quiet = with_run(quiet_vm_doc(), false, false);
    assert_eq!(
        has(&quiet, CheckId::LayoutNoiseSharesRtCpu),
        None,
        "{:#?}",
        ranked(&quiet)
    );
    assert_eq!(
        has(&quiet, CheckId::SchedRtThrottling),
        None,
        "nothing busy ran to throttle"
    );
    assert_eq!(
        has(&quiet, CaveatKind::CoordinatorSharesRtCpu),
        Some(Severity::Distorts)
    );
    let all = caveats(&quiet);
    assert!(
        all.iter()
            .any(|c| c.starts_with("the coordinator shares CPUs 0-1 with the RT pair")),
        "{all:#?}"
    );
    assert!(!all.iter().any(|c| c.contains("noise")), "{all:#?}");
}

#[test]
fn noise_on_the_rt_cpus_invalidates_and_throttling_counts_only_where_bursts_ran() {
    let bursts = with_run(vm_doc(Some(true)), true, true);
    assert_eq!(
        has(&bursts, CheckId::LayoutNoiseSharesRtCpu),
        Some(Severity::Invalidates)
    );
    assert_eq!(
        has(&bursts, CheckId::SchedRtThrottling),
        Some(Severity::Distorts)
    );
    assert_eq!(
        has(&bursts, CaveatKind::CoordinatorSharesRtCpu),
        Some(Severity::Distorts)
    );
    assert!(caveats(&bursts).iter().any(
        |c| c == "noise shares CPUs 0-1 with the RT pair: latencies include that interference"
    ));
    let queue_only = with_run(vm_doc(Some(true)), true, false);
    assert_eq!(
        has(&queue_only, CheckId::LayoutNoiseSharesRtCpu),
        Some(Severity::Invalidates)
    );
    assert_eq!(has(&queue_only, CheckId::SchedRtThrottling), None);
}

#[test]
fn noise_and_coordinator_apart_from_the_rt_pair_or_nothing_run_leave_no_sharing_caveat() {
    let mut apart = vm_doc(Some(true));
    apart.plan.noise_cpus = vec![2, 3];
    // The coordinator is pinned to the housekeeping CPUs, off the RT pair.
    apart.plan.housekeeping_cpus = vec![2, 3];
    let apart = with_run(apart, true, true);
    assert_eq!(has(&apart, CheckId::LayoutNoiseSharesRtCpu), None);
    assert_eq!(has(&apart, CaveatKind::CoordinatorSharesRtCpu), None);
    let nothing_ran = vm_doc(Some(true));
    assert_eq!(has(&nothing_ran, CheckId::LayoutNoiseSharesRtCpu), None);
    assert_eq!(has(&nothing_ran, CaveatKind::CoordinatorSharesRtCpu), None);
}

#[test]
fn machine_caveats_hold_with_noise_or_without() {
    for noise in [false, true] {
        let doc = with_run(vm_doc(Some(false)), noise, noise);
        assert_eq!(
            has(&doc, CheckId::KernelPreemptRt),
            Some(Severity::Invalidates)
        );
        assert_eq!(has(&doc, CheckId::CpusIsolated), Some(Severity::Distorts));
        assert_eq!(has(&doc, CheckId::CpuIdle), Some(Severity::Distorts));
    }
    let mut rt = with_run(vm_doc(Some(true)), false, false);
    rt.system_check = None;
    rt.host.preempt_rt = true;
    rt.host.isolated = vec![0, 1];
    assert_eq!(has(&rt, CheckId::KernelPreemptRt), None);
    assert_eq!(has(&rt, CheckId::CpusIsolated), None);
}

#[test]
fn compaction_of_locked_pages_distorts_the_figures_without_invalidating_them() {
    let doc = with_run(vm_doc(Some(true)), false, false);
    assert_eq!(
        has(&doc, CheckId::VmCompactUnevictable),
        Some(Severity::Distorts)
    );
    assert!(
        caveats(&doc)
            .iter()
            .any(|c| c.starts_with("compaction of locked pages on: ")),
        "{:#?}",
        caveats(&doc)
    );
}

#[test]
fn a_virtual_machine_distorts_the_figures_without_invalidating_them() {
    let doc = with_run(vm_doc(Some(true)), false, false);
    assert_eq!(has(&doc, CheckId::CpuVirtual), Some(Severity::Distorts));
    assert!(
        caveats(&doc)
            .iter()
            .any(|c| c.starts_with("a virtual machine: every latency includes the host's")),
        "{:#?}",
        caveats(&doc)
    );
}
