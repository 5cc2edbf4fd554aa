use crate::judge::verdict;
use rtsoak_record::result::verdict::{InconclusiveKind, Status};
use rtsoak_record::result::{ResultDoc, RunResult, RunStatus, WorkerRecord};
use rtsoak_record::{RtSetup, Support, TransportSupport};
use rtsoak_testing::fixture::one_run_doc;

/// The fixture's eventfd run with nothing lost: a pass under the default bounds.
fn passing() -> ResultDoc {
    let mut doc = one_run_doc();
    doc.runs[0].integrity.lost = 0;
    doc.plan.verdict.inconclusive_missed_percent = Some(5);
    doc
}

fn kinds(doc: &ResultDoc) -> Vec<InconclusiveKind> {
    verdict(doc).inconclusive.iter().map(|i| i.kind).collect()
}

fn unsupported(transport: &str, reason: &str) -> RunResult {
    let mut run = one_run_doc().runs.remove(0);
    run.transport = transport.to_string();
    run.status = RunStatus::Unsupported;
    run.reason = Some(reason.to_string());
    run.series.clear();
    run.intervals.clear();
    run.integrity = Default::default();
    run.noise = Default::default();
    run
}

fn rt_worker(policy: &str, priority: u8, error: Option<&str>) -> WorkerRecord {
    WorkerRecord {
        role: rtsoak_record::Role::Publisher,
        pid: 4321,
        setup: RtSetup {
            policy_requested: "fifo".into(),
            priority_requested: 40,
            policy: policy.into(),
            priority,
            policy_error: error.map(str::to_string),
            ..Default::default()
        },
        hygiene: Default::default(),
        counters: Default::default(),
        exit: "exit status: 0".into(),
        error: None,
    }
}

#[test]
fn a_run_that_measured_what_it_was_asked_passes() {
    let verdict = verdict(&passing());
    assert_eq!(verdict.status, Status::Pass, "{verdict:?}");
    assert!(verdict.pass && verdict.inconclusive.is_empty());
}

#[test]
fn nothing_measured_is_inconclusive_naming_each_transport_and_why() {
    let mut doc = passing();
    doc.runs = vec![
        unsupported("doorbell", "needs IORING_MSG_DOORBELL"),
        unsupported("persistent-futex", "needs IORING_REGISTER_FUTEX"),
    ];
    let verdict = verdict(&doc);
    assert_eq!(verdict.status, Status::Inconclusive);
    assert!(!verdict.pass);
    assert_eq!(kinds(&doc), [InconclusiveKind::NothingMeasured]);
    let message = &verdict.inconclusive[0].message;
    assert!(
        message.contains("doorbell: needs IORING_MSG_DOORBELL")
            && message.contains("persistent-futex: needs IORING_REGISTER_FUTEX"),
        "{message}"
    );
    doc.runs.clear();
    assert_eq!(kinds(&doc), [InconclusiveKind::NothingMeasured]);
}

#[test]
fn an_unsupported_transport_counts_only_when_it_was_named_or_its_probe_was_refused() {
    let mut doc = passing();
    doc.runs
        .push(unsupported("doorbell", "needs IORING_MSG_DOORBELL"));
    assert_eq!(
        kinds(&doc),
        [],
        "every transport: the missing one is skipped"
    );
    doc.plan.transports_named = true;
    assert_eq!(kinds(&doc), [InconclusiveKind::NotMeasured]);
    doc.plan.transports_named = false;
    doc.support.push(TransportSupport {
        transport: "doorbell".into(),
        support: Support::NotPermitted {
            feature: "io_uring".into(),
            probe: "io_uring_register".into(),
            errno: "ENOMEM: Cannot allocate memory".into(),
            fix: "probably the memory-lock limit (64 KiB)".into(),
        },
    });
    assert_eq!(
        kinds(&doc),
        [InconclusiveKind::NotMeasured],
        "a limit is not a kernel feature"
    );
}

#[test]
fn most_periods_missed_is_inconclusive_and_a_few_are_not() {
    let mut doc = passing();
    let integrity = &mut doc.runs[0].integrity;
    integrity.planned_periods = 12_000;
    integrity.missed_periods = 11_252;
    let verdict = verdict(&doc);
    assert_eq!(verdict.status, Status::Inconclusive);
    assert_eq!(
        verdict.inconclusive[0].kind,
        InconclusiveKind::MissedPeriods
    );
    let message = &verdict.inconclusive[0].message;
    assert!(
        message.starts_with("eventfd: 11252 of 12000 planned periods missed (93.8 %"),
        "{message}"
    );
    // 100 of 12000 (a publisher stopped 50 ms) is under 5 %: measured, and shown in the table.
    doc.runs[0].integrity.missed_periods = 100;
    assert_eq!(kinds(&doc), []);
    // A results file written before the bound existed is not judged on it.
    doc.runs[0].integrity.missed_periods = 11_252;
    doc.plan.verdict.inconclusive_missed_percent = None;
    assert_eq!(kinds(&doc), []);
}

#[test]
fn nightly_fails_a_missed_period_and_still_says_it_was_inconclusive() {
    let mut doc = passing();
    doc.plan.verdict.max_missed_periods = Some(0);
    let integrity = &mut doc.runs[0].integrity;
    integrity.planned_periods = 12_000;
    integrity.missed_periods = 11_252;
    let verdict = verdict(&doc);
    assert_eq!(verdict.status, Status::Fail, "FAIL outranks INCONCLUSIVE");
    assert_eq!(verdict.breaches.len(), 1);
    assert_eq!(verdict.inconclusive.len(), 1);
}

#[test]
fn too_few_messages_is_inconclusive_not_a_breach() {
    let mut doc = passing();
    doc.plan.verdict.min_messages = Some(1000);
    assert_eq!(kinds(&doc), []);
    doc.plan.verdict.min_messages = Some(1_000_000);
    let verdict = verdict(&doc);
    assert!(verdict.breaches.is_empty());
    assert_eq!(verdict.status, Status::Inconclusive);
    assert_eq!(
        verdict.inconclusive[0].message,
        "eventfd: 2001 messages sent, verdict.min_messages asks for at least 1000000 for the \
         figures to count; run longer (--duration) or lower the limit"
    );
}

#[test]
fn an_rt_worker_without_its_priority_is_inconclusive_unless_the_profile_requires_it() {
    let mut doc = passing();
    doc.runs[0].workers = vec![rt_worker("other", 0, Some("EPERM"))];
    let verdict_of = verdict(&doc);
    assert_eq!(verdict_of.status, Status::Inconclusive);
    let message = &verdict_of.inconclusive[0].message;
    assert!(
        message.starts_with("eventfd: the RT publisher ran other 0 instead of fifo 40: EPERM;"),
        "{message}"
    );
    doc.plan.verdict.require_rt_priority = true;
    let required = verdict(&doc);
    assert_eq!(required.status, Status::Fail);
    assert!(required.inconclusive.is_empty(), "a breach, said once");
    doc.runs[0].workers = vec![rt_worker("fifo", 40, None)];
    doc.plan.verdict.require_rt_priority = false;
    assert_eq!(kinds(&doc), []);
}

#[test]
fn noise_that_did_no_work_or_did_not_get_its_policy_is_inconclusive() {
    let mut doc = passing();
    doc.runs[0].noise.idle = vec!["load generator `net` (1 thread) did no work".into()];
    assert_eq!(kinds(&doc), [InconclusiveKind::Noise]);
    doc.runs[0].noise.idle.clear();
    doc.runs[0].noise.failures = 2;
    doc.runs[0].noise.errors = vec!["noise publisher: got other 0 instead of fifo 20".into()];
    let verdict = verdict(&doc);
    assert_eq!(verdict.status, Status::Inconclusive);
    let message = &verdict.inconclusive[0].message;
    assert!(
        message.contains("(2 noise failures): noise publisher: got other 0 instead of fifo 20"),
        "{message}"
    );
}
