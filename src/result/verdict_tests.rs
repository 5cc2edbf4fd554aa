use super::*;
use crate::export::fixture::one_run_doc;

/// The fixture's eventfd run: 2001 sends (one of 150 us), 2001 deliveries (one of 120 us and
/// one of 250 us over the 100 us threshold), made to have lost one message.
fn doc_with(limits: Limits) -> ResultDoc {
    let mut doc = one_run_doc();
    doc.runs[0].integrity.lost = 1;
    doc.plan.verdict = limits;
    doc
}

fn whats(verdict: &Verdict) -> Vec<(Limit, Option<&str>)> {
    verdict
        .breaches
        .iter()
        .map(|b| (b.what, b.series.as_deref()))
        .collect()
}

#[test]
fn by_default_only_lost_messages_fail() {
    let verdict = verdict(&doc_with(Limits::default()));
    assert!(!verdict.pass);
    assert_eq!(whats(&verdict), [(Limit::MaxLost, None)]);
    let breach = &verdict.breaches[0];
    assert_eq!((breach.figure, breach.limit), (1.0, 0.0));
    assert_eq!(
        breach.message,
        "eventfd: 1 messages lost, at most 0 allowed (verdict.max_lost)"
    );
    assert!(verdict.lost_messages());
}

#[test]
fn generous_limits_pass() {
    let verdict = verdict(&doc_with(Limits {
        max_send_call_ns: Some(1_000_000),
        max_delivery_ns: Some(1_000_000),
        max_over_threshold: Some(10),
        max_over_threshold_per_million: Some(10_000),
        max_lost: 1,
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
        max_lost: 1,
        min_messages: Some(5000),
        ..Limits::default()
    }));
    assert_eq!(
        whats(&verdict),
        [
            (Limit::MinMessages, None),
            (Limit::MaxSendCall, Some("send_call")),
            (Limit::MaxDelivery, Some("delivery")),
            (Limit::MaxOverThreshold, Some("delivery")),
            (Limit::MaxOverThresholdPerMillion, Some("delivery")),
        ]
    );
    let by = |what| verdict.breaches.iter().find(|b| b.what == what).unwrap();
    assert_eq!(by(Limit::MinMessages).figure, 2001.0);
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
    assert!(!verdict.lost_messages());
}

#[test]
fn required_conditions_name_what_the_machine_lacks() {
    let mut doc = doc_with(Limits {
        max_lost: 1,
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
        "hygiene": serde_json::to_value(crate::protocol::Hygiene::default()).unwrap(),
        "counters": serde_json::to_value(crate::protocol::Counters::default()).unwrap(),
    });
    doc.runs[0]
        .workers
        .push(serde_json::from_value(json).unwrap());
    doc.plan.verdict = Limits {
        max_lost: 1,
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
    let verdict = verdict(&doc_with(Limits::default()));
    let json = serde_json::to_value(&verdict).unwrap();
    assert_eq!(json["breaches"][0]["what"], "verdict.max_lost");
    assert_eq!(json["pass"], false);
    let back: Verdict = serde_json::from_value(json).unwrap();
    assert_eq!(back, verdict);
}
