use super::*;
use rtsoak_record::Summary;
use rtsoak_testing::fixture::{one_run_doc, two_round_doc};

/// A result of one run per `(transport, over, count)`: the send call and the delivery each
/// with `over` of `count` samples over the threshold.
fn doc_of(rates: &[(&str, u64, u64)]) -> ResultDoc {
    let mut doc = one_run_doc();
    let template = doc.runs.remove(0);
    for &(transport, over, count) in rates {
        let mut run = template.clone();
        run.transport = transport.to_string();
        for name in ["send_call", "delivery"] {
            let series = run.series.get_mut(name).unwrap();
            series.summary = Summary {
                count,
                over_threshold: over,
                ..series.summary
            };
        }
        doc.runs.push(run);
    }
    doc
}

/// Every claim a decision states holds on the figures it came from: recomputed from the
/// rates, each "significantly fewer" pair has p < ALPHA and each "does not differ" pair has not.
fn assert_claims_hold(decision: &Decision) {
    for series in &decision.series {
        let rate = |label: &str| series.ranking.iter().find(|r| r.label == label).unwrap();
        for claim in &series.significant {
            let (lower, higher) = (rate(&claim.lower), rate(&claim.higher));
            let p = rates_differ_p_value(
                lower.over_threshold,
                lower.count,
                higher.over_threshold,
                higher.count,
            );
            assert!(
                p < ALPHA && lower.per_million <= higher.per_million,
                "{claim:?}"
            );
            assert!(
                series.sentence.contains(&claim.higher),
                "{}",
                series.sentence
            );
        }
        for claim in &series.not_significant {
            let (a, b) = (rate(&claim.lower), rate(&claim.higher));
            let p = rates_differ_p_value(a.over_threshold, a.count, b.over_threshold, b.count);
            assert!(p >= ALPHA, "{claim:?}");
        }
    }
}

#[test]
fn the_fewest_the_undistinguishable_and_the_significantly_worse_are_each_named() {
    let doc = doc_of(&[
        ("msg-ring", 20, 1_000_000),
        ("futex", 24, 1_000_000),
        ("eventfd", 26, 1_000_000),
        ("signalfd", 90, 1_000_000),
        ("futex-syscall", 95, 1_000_000),
    ]);
    let decision = decide(&doc);
    assert_claims_hold(&decision);
    let send = &decision.series[0];
    assert_eq!(send.series.name(), "send_call");
    assert_eq!(send.fewest, ["msg-ring", "futex", "eventfd"]);
    assert_eq!(
        send.sentence,
        "send call: msg-ring has the fewest spikes over 100 us (20.0 per million), and futex and \
         eventfd do not differ from it significantly at this run length; each of them has \
         significantly fewer than signalfd and futex-syscall (p < 0.01)."
    );
    assert_eq!(send.significant.len(), 6);
}

#[test]
fn a_worse_transport_only_some_of_the_fewest_beat_gets_its_own_clause() {
    // eventfd is not distinguishable from msg-ring, nor is it from signalfd; msg-ring is.
    let doc = doc_of(&[
        ("msg-ring", 10, 1_000_000),
        ("eventfd", 18, 1_000_000),
        ("signalfd", 35, 1_000_000),
    ]);
    let decision = decide(&doc);
    assert_claims_hold(&decision);
    let sentence = &decision.series[1].sentence;
    assert!(
        sentence.ends_with("; msg-ring has significantly fewer than signalfd (p < 0.01)."),
        "{sentence}"
    );
}

#[test]
fn transports_that_do_not_differ_are_said_to_not_differ_and_nothing_more() {
    let doc = doc_of(&[("futex", 5, 200_000), ("eventfd", 7, 200_000)]);
    let decision = decide(&doc);
    assert_claims_hold(&decision);
    assert_eq!(
        decision.series[0].sentence,
        "send call: futex and eventfd do not differ significantly at this run length (futex has \
         the fewest spikes over 100 us, 25.0 per million)."
    );
    assert!(decision.series[0].significant.is_empty());
}

#[test]
fn no_spike_anywhere_is_said_with_the_bound_it_gives() {
    let doc = doc_of(&[("futex", 0, 1_200_000), ("eventfd", 0, 1_200_000)]);
    let sentence = &decide(&doc).series[1].sentence;
    assert!(
        sentence.starts_with("delivery: no transport had a sample over 100 us; at this run length")
            && sentence.contains("below 3.07 per million (95 %)"),
        "{sentence}"
    );
}

#[test]
fn one_transport_is_stated_alone_and_unsupported_ones_are_not_ranked() {
    let decision = decide(&two_round_doc());
    assert_claims_hold(&decision);
    let delivery = &decision.series[1];
    assert!(
        !delivery.ranking.iter().any(|r| r.transport == "signalfd"),
        "unsupported: not ranked"
    );
    let one = decide(&one_run_doc());
    assert!(
        one.series[0]
            .sentence
            .starts_with("send call: only eventfd was measured ("),
        "{}",
        one.series[0].sentence
    );
}
