use super::*;
use rtsoak_analysis::judge::decision::decide;
use rtsoak_record::result::ResultDoc;
use rtsoak_testing::fixture::{doc_with_rates, one_run_doc, two_round_doc};

/// The sentence of each series of `doc`'s decision, as a saved result keeps it.
fn said(doc: &ResultDoc) -> Vec<String> {
    worded(decide(doc))
        .series
        .into_iter()
        .map(|s| s.sentence.expect("worded"))
        .collect()
}

#[test]
fn the_fewest_the_undistinguishable_and_the_significantly_worse_are_each_named() {
    let doc = doc_with_rates(&[
        ("msg-ring", 20, 1_000_000),
        ("futex", 24, 1_000_000),
        ("eventfd", 26, 1_000_000),
        ("signalfd", 90, 1_000_000),
        ("futex-syscall", 95, 1_000_000),
    ]);
    assert_eq!(
        said(&doc)[0],
        "send call: msg-ring has the fewest spikes over 100 us (20.0 per million), and futex and \
         eventfd do not differ from it significantly at this run length; each of them has \
         significantly fewer than signalfd and futex-syscall (p < 0.01)."
    );
}

#[test]
fn a_worse_transport_only_some_of_the_fewest_beat_gets_its_own_clause() {
    // eventfd is not distinguishable from msg-ring, nor is it from signalfd; msg-ring is.
    let doc = doc_with_rates(&[
        ("msg-ring", 10, 1_000_000),
        ("eventfd", 18, 1_000_000),
        ("signalfd", 35, 1_000_000),
    ]);
    assert_eq!(
        said(&doc)[1],
        "delivery: msg-ring has the fewest spikes over 100 us (10.0 per million), and eventfd \
         does not differ from it significantly at this run length; msg-ring has significantly \
         fewer than signalfd (p < 0.01)."
    );
}

#[test]
fn transports_that_do_not_differ_are_said_to_not_differ_and_nothing_more() {
    let doc = doc_with_rates(&[("futex", 5, 200_000), ("eventfd", 7, 200_000)]);
    assert_eq!(
        said(&doc)[0],
        "send call: futex and eventfd do not differ significantly at this run length (futex has \
         the fewest spikes over 100 us, 25.0 per million)."
    );
}

#[test]
fn no_spike_anywhere_is_said_with_the_bound_it_gives() {
    let doc = doc_with_rates(&[("futex", 0, 1_200_000), ("eventfd", 0, 1_200_000)]);
    assert_eq!(
        said(&doc)[1],
        "delivery: no transport had a sample over 100 us; at this run length that bounds each \
         rate below 3.07 per million (95 %)."
    );
}

#[test]
fn one_transport_is_stated_alone_and_none_is_said_to_be_none() {
    assert!(
        said(&one_run_doc())[0].starts_with("send call: only eventfd was measured ("),
        "{:?}",
        said(&one_run_doc())
    );
    let mut nothing = two_round_doc();
    nothing.runs.clear();
    assert_eq!(
        said(&nothing),
        [
            "send call: no transport was measured.",
            "delivery: no transport was measured."
        ]
    );
}

#[test]
fn every_transport_a_claim_names_is_in_its_sentence() {
    let doc = two_round_doc();
    let decision = worded(decide(&doc));
    let claims: usize = decision
        .series
        .iter()
        .map(|s| s.significant.len() + s.not_significant.len())
        .sum();
    assert!(claims > 0, "the fixture makes claims to check");
    for series in &decision.series {
        let text = series.sentence.as_deref().unwrap();
        for claim in series.significant.iter().chain(&series.not_significant) {
            assert!(
                text.contains(&claim.lower) && text.contains(&claim.higher),
                "{claim:?}: {text}"
            );
        }
    }
}

#[test]
fn rates_per_million_keep_two_decimals_under_ten_one_under_a_hundred() {
    let cases = [
        (0.0, "0"),
        (2.5, "2.50"),
        (52.61, "52.6"),
        (24_300.4, "24300"),
    ];
    for (value, text) in cases {
        assert_eq!(per_million(value), text);
    }
}
