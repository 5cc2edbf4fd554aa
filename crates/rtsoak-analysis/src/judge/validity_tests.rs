use super::super::verdict;
use super::*;
use rtsoak_record::Status;
use rtsoak_record::result::verdict::Verdict;
use rtsoak_testing::fixture::one_run_doc;

/// The fixture's eventfd run on its PREEMPT_RT board (RT pair on isolated CPUs 4-5, noise on
/// 0-3), nothing lost, judged with `limits`; `non_rt` boots it into a kernel without
/// PREEMPT_RT, `noise_on_rt` puts the noise on CPUs 3-4.
fn judged(limits: Limits, non_rt: bool, noise_on_rt: bool) -> Verdict {
    let mut doc = one_run_doc();
    doc.runs[0].integrity.lost = 0;
    doc.plan.verdict = limits;
    if non_rt {
        doc.host.preempt_rt = false;
    }
    if noise_on_rt {
        doc.plan.noise_cpus = vec![3, 4];
        doc.runs[0].noise.cpus = vec![3, 4];
    }
    verdict(&doc)
}

fn kinds(verdict: &Verdict) -> Vec<InconclusiveKind> {
    verdict.inconclusive.iter().map(|i| i.kind).collect()
}

fn conditions(verdict: &Verdict) -> Vec<&CaveatKind> {
    verdict.accepted.iter().map(|a| &a.condition).collect()
}

#[test]
fn a_machine_with_rt_conditions_passes_with_nothing_accepted() {
    let verdict = judged(Limits::default(), false, false);
    assert_eq!(verdict.status, Status::Pass, "{verdict:#?}");
    assert!(verdict.accepted.is_empty());
}

#[test]
fn a_non_rt_kernel_the_profile_neither_requires_nor_accepts_is_inconclusive() {
    let verdict = judged(Limits::default(), true, false);
    assert_eq!(verdict.status, Status::Inconclusive);
    assert_eq!(kinds(&verdict), [InconclusiveKind::Invalidated]);
    let message = &verdict.inconclusive[0].message;
    assert!(message.starts_with("not a PREEMPT_RT kernel"), "{message}");
    assert!(message.contains("verdict.require_preempt_rt"), "{message}");
}

#[test]
fn a_required_rt_kernel_is_one_breach_and_no_second_reason() {
    let limits = Limits {
        require_preempt_rt: true,
        ..Limits::default()
    };
    let verdict = judged(limits, true, false);
    assert_eq!(verdict.status, Status::Fail);
    let whats: Vec<Limit> = verdict.breaches.iter().map(|b| b.what).collect();
    assert_eq!(whats, [Limit::RequirePreemptRt]);
    assert!(verdict.inconclusive.is_empty(), "{verdict:#?}");
}

#[test]
fn a_development_profile_accepts_the_machine_and_its_pass_names_what_it_accepted() {
    let limits = Limits {
        development: true,
        ..Limits::default()
    };
    let verdict = judged(limits.clone(), true, true);
    assert_eq!(verdict.status, Status::Pass, "{verdict:#?}");
    assert_eq!(
        conditions(&verdict),
        [
            &CaveatKind::Check(CheckId::KernelPreemptRt),
            &CaveatKind::Check(CheckId::LayoutNoiseSharesRtCpu)
        ]
    );
    let clean = judged(limits, false, false);
    assert!(clean.accepted.is_empty());
}

#[test]
fn noise_on_the_rt_cpus_is_a_breach_when_required_apart_and_inconclusive_otherwise() {
    let verdict = judged(Limits::default(), false, true);
    assert_eq!(kinds(&verdict), [InconclusiveKind::Invalidated]);
    assert!(
        verdict.inconclusive[0]
            .message
            .starts_with("noise shares CPU 4 with the RT pair")
    );
    let required = judged(
        Limits {
            require_noise_apart: true,
            development: true,
            ..Limits::default()
        },
        false,
        true,
    );
    assert_eq!(required.status, Status::Fail);
    assert_eq!(required.breaches[0].what, Limit::RequireNoiseApart);
    assert!(
        required.accepted.is_empty(),
        "a requirement wins over acceptance"
    );
}

#[test]
fn no_invalidating_caveat_stands_under_a_plain_pass() {
    for (non_rt, noise_on_rt, development) in
        every_combination([false, true], [false, true], [false, true])
    {
        let limits = Limits {
            development,
            ..Limits::default()
        };
        let mut doc = one_run_doc();
        doc.runs[0].integrity.lost = 0;
        doc.plan.verdict = limits;
        doc.host.preempt_rt = !non_rt;
        if noise_on_rt {
            doc.plan.noise_cpus = vec![3, 4];
            doc.runs[0].noise.cpus = vec![3, 4];
        }
        let verdict = verdict(&doc);
        if verdict.status != Status::Pass {
            continue;
        }
        for caveat in ranked(&doc)
            .into_iter()
            .filter(|c| c.severity == Severity::Invalidates)
        {
            assert!(
                verdict.accepted.iter().any(|a| a.condition == caveat.kind),
                "{caveat:?} under a PASS that does not name it"
            );
        }
    }
}

fn every_combination(
    a: [bool; 2],
    b: [bool; 2],
    c: [bool; 2],
) -> impl Iterator<Item = (bool, bool, bool)> {
    a.into_iter().flat_map(move |x| {
        b.into_iter()
            .flat_map(move |y| c.into_iter().map(move |z| (x, y, z)))
    })
}

#[test]
fn a_run_that_measured_nothing_has_no_figures_to_invalidate() {
    let mut doc = one_run_doc();
    doc.runs[0].integrity.lost = 0;
    doc.host.preempt_rt = false;
    doc.runs[0].status = rtsoak_record::result::RunStatus::Unsupported;
    let verdict = verdict(&doc);
    assert_eq!(kinds(&verdict), [InconclusiveKind::NothingMeasured]);
}

#[test]
fn only_the_conditions_that_describe_the_machine_are_acceptable_and_each_has_its_key() {
    let rt_priority = [
        CaveatKind::WorkerPolicy,
        CaveatKind::Check(CheckId::PrivilegesRtPriority),
    ];
    for kind in &rt_priority {
        assert_eq!(requirement(kind), Some(Limit::RequireRtPriority), "{kind}");
        assert!(!acceptable(requirement(kind)), "{kind}");
    }
    let machine = [
        (CheckId::KernelPreemptRt, Limit::RequirePreemptRt),
        (CheckId::LayoutNoiseSharesRtCpu, Limit::RequireNoiseApart),
    ];
    for (id, limit) in &machine {
        let kind = CaveatKind::Check(id.clone());
        assert_eq!(requirement(&kind), Some(*limit), "{kind}");
        assert!(acceptable(requirement(&kind)), "{kind}");
    }
    let others = CaveatKind::OWN
        .iter()
        .cloned()
        .chain(CheckId::FIXED.iter().cloned().map(CaveatKind::Check))
        .filter(|kind| !rt_priority.contains(kind))
        .filter(|kind| {
            !machine
                .iter()
                .any(|(id, _)| kind == &CaveatKind::Check(id.clone()))
        });
    for kind in others.chain([CaveatKind::Unknown("kernel.preempt-rt-ish".into())]) {
        assert_eq!(requirement(&kind), None, "{kind}");
        assert!(!acceptable(requirement(&kind)), "{kind}");
        assert!(!required(&Limits::default(), requirement(&kind)), "{kind}");
    }
}

#[test]
fn a_requirement_covers_only_its_own_condition() {
    let all = Limits {
        require_preempt_rt: true,
        require_rt_priority: true,
        require_noise_apart: true,
        ..Limits::default()
    };
    let kernel = requirement(&CaveatKind::Check(CheckId::KernelPreemptRt));
    let policy = requirement(&CaveatKind::WorkerPolicy);
    assert!(required(&all, kernel) && required(&all, policy));
    let only_rt = Limits {
        require_preempt_rt: true,
        ..Limits::default()
    };
    assert!(required(&only_rt, kernel) && !required(&only_rt, policy));
    // Noise on the RT CPUs is no breach of its own elsewhere: `answer` makes it one.
    let noise = requirement(&CaveatKind::Check(CheckId::LayoutNoiseSharesRtCpu));
    assert!(!required(&all, noise));
}
