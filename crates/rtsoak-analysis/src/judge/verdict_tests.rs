use super::*;
use rtsoak_testing::fixture::one_run_doc;

/// The fixture's eventfd run: 2001 sends (one of 150 us), 2001 deliveries (one of 120 us and
/// one of 250 us over the 100 us threshold), nothing lost.
fn doc_with(limits: Limits) -> ResultDoc {
    let mut doc = one_run_doc();
    doc.runs[0].integrity.lost = 0;
    doc.plan.verdict = limits;
    doc
}

fn whats(verdict: &Verdict) -> Vec<(Limit, Option<&str>)> {
    verdict
        .breaches
        .iter()
        .map(|b| (b.what, b.series.map(rtsoak_record::Series::name)))
        .collect()
}

#[test]
fn by_default_nothing_but_a_failure_fails() {
    let verdict = verdict(&doc_with(Limits::default()));
    assert!(verdict.pass, "{verdict:?}");
    assert!(verdict.failures.is_empty() && verdict.breaches.is_empty());
}

#[test]
fn a_lost_message_is_a_failure_whatever_the_limits() {
    let mut doc = doc_with(Limits {
        min_messages: Some(1),
        ..Limits::default()
    });
    doc.runs[0].integrity.lost = 1;
    let verdict = verdict(&doc);
    assert!(!verdict.pass);
    assert!(verdict.breaches.is_empty());
    assert_eq!(verdict.failures.len(), 1);
    let failure = &verdict.failures[0];
    assert_eq!(failure.kind, FailureKind::LostMessages);
    assert_eq!(
        failure.message,
        "eventfd: 1 of 2001 messages lost (never delivered within the delivery timeout)"
    );
    assert!(verdict.failed(FailureKind::LostMessages));
}

#[test]
fn a_failed_round_an_interruption_and_a_break_are_each_a_failure() {
    let mut doc = doc_with(Limits::default());
    let mut second = doc.runs[0].clone();
    second.round = 2;
    second.status = RunStatus::Failed;
    second.reason = Some("the RT publisher worker ended early: signal: 9".into());
    second.break_event = Some(rtsoak_record::BreakEvent {
        series: rtsoak_record::Series::Delivery,
        seq: 812,
        value_ns: 250_000,
        at_ns: 1,
        limit_ns: 200_000,
        marker_written: true,
        trace_stopped: true,
        continued: true,
    });
    doc.runs.push(second);
    doc.interrupted = true;
    let verdict = verdict(&doc);
    let kinds: Vec<FailureKind> = verdict.failures.iter().map(|f| f.kind).collect();
    assert_eq!(
        kinds,
        [
            FailureKind::Interrupted,
            FailureKind::RunFailed,
            FailureKind::BreakOn
        ]
    );
    assert_eq!(
        verdict.failures[2].message,
        "eventfd: round 2: delivery 250.0 us > --break-on 200.0 us (seq 812)"
    );
    assert!(!verdict.pass);
}

#[test]
fn generous_limits_pass() {
    let verdict = verdict(&doc_with(Limits {
        max_send_call_ns: Some(1_000_000),
        max_delivery_ns: Some(1_000_000),
        max_over_threshold: Some(10),
        max_over_threshold_per_million: Some(10_000),
        min_messages: Some(1000),
        ..Limits::default()
    }));
    assert!(verdict.pass, "{:?}", verdict.breaches);
    assert!(verdict.breaches.is_empty());
}

#[test]
fn every_limit_below_the_figures_is_a_breach_with_figure_and_limit() {
    let verdict = verdict(&doc_with(Limits {
        max_send_call_ns: Some(100_000),
        max_delivery_ns: Some(200_000),
        max_over_threshold: Some(1),
        max_over_threshold_per_million: Some(600),
        min_messages: Some(5000),
        ..Limits::default()
    }));
    assert_eq!(
        whats(&verdict),
        [
            (Limit::MaxSendCall, Some("send_call")),
            (Limit::MaxDelivery, Some("delivery")),
            (Limit::MaxOverThreshold, Some("delivery")),
            (Limit::MaxOverThresholdPerMillion, Some("delivery")),
        ]
    );
    let by = |what| verdict.breaches.iter().find(|b| b.what == what).unwrap();
    // Too few messages is no breach: the run could not measure what it was asked.
    assert_eq!(verdict.status, rtsoak_record::result::verdict::Status::Fail);
    assert_eq!(verdict.inconclusive.len(), 1);
    assert_eq!(by(Limit::MaxDelivery).figure, 250.0);
    assert_eq!(by(Limit::MaxDelivery).limit, 200.0);
    assert_eq!(by(Limit::MaxOverThreshold).figure, 2.0);
    // 2 of 2001 deliveries: 999.5 per million (1 of 2001 sends is 499.8, under the limit).
    let rate = by(Limit::MaxOverThresholdPerMillion);
    assert!((rate.figure - 2e6 / 2001.0).abs() < 1e-9, "{}", rate.figure);
    assert_eq!(
        by(Limit::MaxSendCall).message,
        "eventfd: longest send_call 150.0 us > 100 us allowed (verdict.max_send_call_us)"
    );
    assert!(verdict.failures.is_empty());
}

#[test]
fn required_conditions_name_what_the_machine_lacks() {
    let mut doc = doc_with(Limits {
        require_preempt_rt: true,
        require_isolated_cpus: true,
        ..Limits::default()
    });
    doc.host.preempt_rt = false;
    doc.host.isolated = vec![4];
    let verdict = verdict(&doc);
    assert_eq!(
        whats(&verdict),
        [
            (Limit::RequirePreemptRt, None),
            (Limit::RequireIsolatedCpus, None)
        ]
    );
    assert_eq!(
        verdict.breaches[1].message,
        "RT CPU 5 not isolated (verdict.require_isolated_cpus)"
    );
    doc.host.preempt_rt = true;
    doc.host.isolated = vec![4, 5];
    assert!(super::verdict(&doc).pass);
}

#[test]
fn a_worker_without_its_rt_priority_breaks_require_rt_priority() {
    let mut doc = one_run_doc();
    doc.runs[0].integrity.lost = 0;
    let json = serde_json::json!({
        "role": "subscriber", "pid": 7, "exit": "exit status: 0", "error": null,
        "setup": {
            "cpus_requested": [5], "cpus_allowed": [5], "cpus_observed": [5],
            "policy_requested": "fifo", "priority_requested": 40,
            "policy": "other", "priority": 0,
            "policy_error": "sched_setscheduler: EPERM", "memory_locked": true,
            "memory_lock_error": null, "ring_setup": null
        },
        "hygiene": serde_json::to_value(rtsoak_record::Hygiene::default()).unwrap(),
        "counters": serde_json::to_value(rtsoak_record::Counters::default()).unwrap(),
    });
    doc.runs[0]
        .workers
        .push(serde_json::from_value(json).unwrap());
    doc.plan.verdict = Limits {
        require_rt_priority: true,
        ..Limits::default()
    };
    let verdict = verdict(&doc);
    assert_eq!(whats(&verdict), [(Limit::RequireRtPriority, None)]);
    assert!(
        verdict.breaches[0]
            .message
            .contains("ran other 0 instead of fifo 40")
    );
}

#[test]
fn breaches_serialize_under_their_profile_key() {
    let verdict = verdict(&doc_with(Limits {
        max_delivery_ns: Some(1_000),
        ..Limits::default()
    }));
    let json = serde_json::to_value(&verdict).unwrap();
    assert_eq!(json["breaches"][0]["what"], "verdict.max_delivery_us");
    assert_eq!(json["pass"], false);
    assert_eq!(json["status"], "fail");
    let back: Verdict = serde_json::from_value(json).unwrap();
    assert_eq!(back, verdict);
}

#[test]
fn missed_periods_over_the_limit_are_a_breach_with_the_share_of_planned_periods() {
    let mut doc = doc_with(Limits {
        max_missed_periods: Some(0),
        ..Limits::default()
    });
    doc.runs[0].integrity.missed_periods = 3;
    doc.runs[0].integrity.planned_periods = 2004;
    let judged = verdict(&doc);
    assert_eq!(whats(&judged), [(Limit::MaxMissedPeriods, None)]);
    let breach = &judged.breaches[0];
    assert_eq!((breach.figure, breach.limit), (3.0, 0.0));
    assert_eq!(breach.unit, "periods");
    assert_eq!(
        breach.message,
        "eventfd: 3 of 2004 planned periods missed (0.150 %) > 0 allowed \
         (verdict.max_missed_periods)"
    );
    doc.plan.verdict.max_missed_periods = Some(3);
    assert!(verdict(&doc).pass, "at the limit passes");
    doc.plan.verdict.max_missed_periods = None;
    assert!(verdict(&doc).pass, "absent: not judged");
}

#[test]
fn missed_periods_are_judged_on_each_transports_rounds_added() {
    // The fixture: futex misses 5 periods in round 2, futex-syscall 2 in round 1.
    let mut doc = rtsoak_testing::fixture::two_round_doc();
    doc.plan.verdict.max_missed_periods = Some(4);
    let judged = verdict(&doc);
    let missed: Vec<(Option<&str>, f64)> = judged
        .breaches
        .iter()
        .filter(|b| b.what == Limit::MaxMissedPeriods)
        .map(|b| (b.transport.as_deref(), b.figure))
        .collect();
    assert_eq!(missed, [(Some("futex"), 5.0)]);
}

#[test]
fn a_transport_failure_fails_the_verdict_whatever_the_limits_and_names_every_failure() {
    let mut doc = doc_with(Limits::default());
    doc.runs[0].integrity.wake_errors = 2;
    doc.runs[0].integrity.wakes_missing = Some(1);
    let judged = verdict(&doc);
    assert!(!judged.pass);
    assert!(judged.breaches.is_empty());
    assert!(judged.failed(FailureKind::TransportErrors));
    assert_eq!(
        judged.failures.len(),
        1,
        "one failure, every cause in its message"
    );
    assert_eq!(
        judged.failures[0].message,
        "eventfd: the transport failed: 2 wake calls failed; 1 of the RT publisher's wakes never \
         reached the RT subscriber"
    );
    let json = serde_json::to_value(&judged).unwrap();
    assert_eq!(json["failures"][0]["kind"], "transport-errors");
}

#[test]
fn fallback_deliveries_and_error_completions_are_transport_failures_too() {
    for set in [
        |i: &mut rtsoak_record::Integrity| i.fallback_deliveries = 1,
        |i: &mut rtsoak_record::Integrity| i.cqe_errors = 1,
    ] {
        let mut doc = doc_with(Limits::default());
        set(&mut doc.runs[0].integrity);
        assert!(verdict(&doc).failed(FailureKind::TransportErrors));
    }
}
