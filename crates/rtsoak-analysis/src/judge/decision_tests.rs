use super::*;
use rtsoak_testing::fixture::{doc_with_rates as doc_of, one_run_doc, two_round_doc};

/// Every claim a decision records holds on the figures it came from: recomputed from the
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
        send.significant.len(),
        6,
        "each of the three beats each of the two"
    );
    assert_eq!(send.not_significant.len(), 2);
    assert_eq!(send.sentence, None, "the report words it");
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
    let pairs: Vec<(&str, &str)> = decision.series[1]
        .significant
        .iter()
        .map(|c| (c.lower.as_str(), c.higher.as_str()))
        .collect();
    assert_eq!(pairs, [("msg-ring", "signalfd")]);
    assert_eq!(decision.series[1].fewest, ["msg-ring", "eventfd"]);
}

#[test]
fn transports_that_do_not_differ_are_said_to_not_differ_and_nothing_more() {
    let doc = doc_of(&[("futex", 5, 200_000), ("eventfd", 7, 200_000)]);
    let decision = decide(&doc);
    assert_claims_hold(&decision);
    assert_eq!(decision.series[0].fewest, ["futex", "eventfd"]);
    assert!(decision.series[0].significant.is_empty());
}

#[test]
fn no_spike_anywhere_is_said_with_the_bound_it_gives() {
    let doc = doc_of(&[("futex", 0, 1_200_000), ("eventfd", 0, 1_200_000)]);
    let delivery = &decide(&doc).series[1];
    assert_eq!(delivery.fewest, ["futex", "eventfd"]);
    assert!(delivery.significant.is_empty());
    // The exact 95 % bound of 0 in 1.2 million, which the sentence states.
    for rate in &delivery.ranking {
        assert!(
            (rate.high_per_million - 3.07).abs() < 0.005,
            "{}",
            rate.high_per_million
        );
    }
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
    assert_eq!(one.series[0].ranking.len(), 1);
    assert_eq!(one.series[0].fewest, ["eventfd"]);
}
