use super::*;
use crate::stats::{SampleStats, encode_histogram, new_histogram};
use crate::testing::fixture::one_run_doc;

/// Replace `series` of the fixture's eventfd run by `count` samples of 5 us with `over` of them
/// at `spike_ns`.
fn set_series(doc: &mut ResultDoc, series: &str, count: u64, over: u64, spike_ns: u64) {
    let mut histogram = new_histogram();
    let mut stats = SampleStats::default();
    for i in 0..count {
        let value = if i < over { spike_ns } else { 5_000 };
        histogram.record(value).unwrap();
        stats.add(value, doc.plan.threshold_ns);
    }
    let entry = doc.runs[0].series.get_mut(series).unwrap();
    entry.summary = Summary::new(&histogram, &stats);
    entry.histogram = encode_histogram(&histogram);
}

fn doc(count: u64, over: u64, spike_ns: u64) -> ResultDoc {
    let mut doc = one_run_doc();
    set_series(&mut doc, "send_call", count, 0, 0);
    set_series(&mut doc, "delivery", count, over, spike_ns);
    doc
}

fn finding<'a>(diff: &'a Diff, series: &str, figure: Figure) -> &'a Finding {
    diff.findings
        .iter()
        .find(|f| f.series.as_deref() == Some(series) && f.figure == figure)
        .unwrap()
}

#[test]
fn a_result_against_itself_has_no_regression() {
    let doc = doc(1_000_000, 10, 150_000);
    let diff = diff("base", &doc, &doc, &DiffRules::default());
    assert!(
        !diff.regression,
        "{:?}",
        diff.regressions().collect::<Vec<_>>()
    );
    assert_eq!(
        diff.summary_line(),
        "no regression against the baseline base"
    );
}

#[test]
fn thirty_against_ten_in_a_million_is_a_rate_regression() {
    // p = 0.0011107 (scipy binomtest(30, 40, 0.5, alternative="greater")), 3x, +20 per million.
    let diff = diff(
        "base",
        &doc(1_000_000, 10, 150_000),
        &doc(1_000_000, 30, 150_000),
        &DiffRules::default(),
    );
    let rate = finding(&diff, "delivery", Figure::OverThresholdRate);
    assert!(rate.regression, "{}", rate.reason);
    assert!((rate.p_value.unwrap() - 0.001_110_716_886_614_682_2).abs() < 1e-12);
    assert_eq!((rate.baseline, rate.new), (10.0, 30.0));
    assert!(diff.regression);
    assert_eq!(
        diff.summary_line(),
        "regression against the baseline base: eventfd delivery over_threshold_rate"
    );
}

#[test]
fn five_against_none_is_noise_not_a_regression() {
    // p = 0.03125 = 0.5^5: not below alpha 0.01.
    let diff = diff(
        "base",
        &doc(1_000_000, 0, 150_000),
        &doc(1_000_000, 5, 150_000),
        &DiffRules::default(),
    );
    let rate = finding(&diff, "delivery", Figure::OverThresholdRate);
    assert!(!rate.regression);
    assert!(
        rate.reason.contains("no significant increase"),
        "{}",
        rate.reason
    );
}

#[test]
fn a_significant_but_tiny_rate_increase_is_below_the_minimum_effect() {
    // 100 → 150 in 10 million: p = 0.00094 < 0.01, but 1.5x is under the 2x minimum effect.
    let base = doc(10_000_000, 100, 150_000);
    let new = doc(10_000_000, 150, 150_000);
    let diff = diff("base", &base, &new, &DiffRules::default());
    let rate = finding(&diff, "delivery", Figure::OverThresholdRate);
    assert!(rate.p_value.unwrap() < 0.01);
    assert!(!rate.regression);
    assert!(rate.reason.contains("minimum effect"), "{}", rate.reason);
}

#[test]
fn a_tail_percentile_that_doubles_regresses_and_a_small_shift_does_not() {
    // 2000 of 1 million at the spike: p99.9 is the spike value on both sides.
    let rules = DiffRules::default();
    let diff_big = diff(
        "b",
        &doc(1_000_000, 2000, 40_000),
        &doc(1_000_000, 2000, 90_000),
        &rules,
    );
    let p999 = finding(&diff_big, "delivery", Figure::P99_9);
    assert!(p999.regression, "{}", p999.reason);
    let diff_small = diff(
        "b",
        &doc(1_000_000, 2000, 40_000),
        &doc(1_000_000, 2000, 45_000),
        &rules,
    );
    assert!(!finding(&diff_small, "delivery", Figure::P99_9).regression);
}

#[test]
fn percentiles_of_short_runs_are_not_judged() {
    let diff = diff(
        "b",
        &doc(2000, 0, 0),
        &doc(2000, 100, 900_000),
        &DiffRules::default(),
    );
    let p = finding(&diff, "delivery", Figure::P99_99);
    assert!(!p.regression);
    assert!(p.reason.contains("not judged"), "{}", p.reason);
}

#[test]
fn the_maximum_needs_to_double_grow_by_fifty_us_and_cross_the_threshold() {
    let rules = DiffRules::default();
    // 150 → 290 us: under 2x.
    let d = diff("b", &doc(1000, 1, 150_000), &doc(1000, 1, 290_000), &rules);
    assert!(!finding(&d, "delivery", Figure::Max).regression);
    // 150 → 310 us: over 2x and +50 us.
    let d = diff("b", &doc(1000, 1, 150_000), &doc(1000, 1, 310_000), &rules);
    assert!(finding(&d, "delivery", Figure::Max).regression);
    // 10 → 40 us: 4x but only +30 us.
    let d = diff(
        "b",
        &doc(1000, 1000, 10_000),
        &doc(1000, 1000, 40_000),
        &rules,
    );
    assert!(!finding(&d, "delivery", Figure::Max).regression);
}

#[test]
fn a_different_threshold_skips_the_rate_test_and_says_so() {
    let base = doc(1_000_000, 0, 150_000);
    let mut new = doc(1_000_000, 500, 150_000);
    new.plan.threshold_ns = 50_000;
    let diff = diff("b", &base, &new, &DiffRules::default());
    assert!(
        !diff
            .findings
            .iter()
            .any(|f| f.figure == Figure::OverThresholdRate && f.series.is_some())
    );
    assert!(
        diff.findings
            .iter()
            .any(|f| f.reason.contains("threshold was 100 us"))
    );
}
