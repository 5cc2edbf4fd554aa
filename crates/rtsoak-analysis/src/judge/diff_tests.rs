use super::*;
use crate::stats::{encode_histogram, new_histogram};
use rtsoak_record::SampleStats;
use rtsoak_record::result::cause::{Cause, Culprit};
use rtsoak_record::result::explain::{LockKind, TaskRole};
use rtsoak_record::result::verdict::Status;
use rtsoak_testing::fixture::one_run_doc;

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
    entry.summary = crate::stats::summarise(&histogram, &stats);
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
        .find(|f| f.series.map(rtsoak_record::Series::name) == Some(series) && f.figure == figure)
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

#[test]
fn a_plain_comparison_pairs_with_the_same_setup_of_a_ring_setup_comparison() {
    // The plain one ran every transport with the plan's defer-taskrun; the other compared
    // defer-taskrun with coop-taskrun, each setup a row of its own.
    let plain = doc(1_000_000, 10, 150_000);
    let mut variants = doc(1_000_000, 10, 150_000);
    variants.plan.ring_setup_variants = vec![RingSetup::DeferTaskrun, RingSetup::CoopTaskrun];
    let mut coop = variants.runs[0].clone();
    variants.runs[0].ring_setup_requested = Some(RingSetup::DeferTaskrun);
    coop.ring_setup_requested = Some(RingSetup::CoopTaskrun);
    variants.runs.push(coop);
    let d = diff("base", &plain, &variants, &DiffRules::default());
    let rate = finding(&d, "delivery", Figure::OverThresholdRate);
    assert_eq!(
        (rate.transport.as_str(), rate.ring_setup),
        ("eventfd", Some(RingSetup::DeferTaskrun)),
        "paired by what was measured, not by the label"
    );
    assert_eq!(d.status(), Status::Inconclusive, "{:?}", d.inconclusive);
    assert_eq!(
        d.inconclusive,
        [
            "eventfd (coop-taskrun) was measured now but not in the baseline: it is not compared; \
          promote a baseline that has it"
        ]
    );
    // The other way round: the baseline's coop-taskrun row is missing now.
    let back = diff("base", &variants, &plain, &DiffRules::default());
    assert!(back.inconclusive[0].contains("measured in the baseline but not now"));
}

#[test]
fn nothing_in_common_is_inconclusive_never_no_regression() {
    let base = doc(1_000_000, 10, 150_000);
    let mut new = doc(1_000_000, 10, 150_000);
    new.runs[0].transport = "futex".into();
    let d = diff("base", &base, &new, &DiffRules::default());
    assert!(!d.regression);
    assert_eq!(d.status(), Status::Inconclusive);
    assert!(
        d.inconclusive
            .iter()
            .any(|r| r.starts_with("nothing was compared")),
        "{:?}",
        d.inconclusive
    );
    assert!(
        d.summary_line()
            .starts_with("inconclusive against the baseline base:"),
        "{}",
        d.summary_line()
    );
    let mut empty = base.clone();
    empty.runs.clear();
    let d = diff("base", &empty, &base, &DiffRules::default());
    assert!(
        d.inconclusive
            .iter()
            .any(|r| r == "the baseline measured nothing (no run has figures)"),
        "{:?}",
        d.inconclusive
    );
}

#[test]
fn an_interrupted_failed_or_lossy_side_makes_the_comparison_inconclusive() {
    let good = doc(1_000_000, 10, 150_000);
    let mut interrupted = good.clone();
    interrupted.interrupted = true;
    let mut failed = good.clone();
    failed.runs[0].status = RunStatus::Failed;
    let mut lossy = good.clone();
    lossy.runs[0].integrity.lost = 100;
    for (bad, says) in [
        (&interrupted, "the baseline was interrupted"),
        (&failed, "the baseline has 1 failed run(s)"),
        (
            &lossy,
            "the baseline lost messages or had a transport failure (eventfd)",
        ),
    ] {
        let d = diff("base", bad, &good, &DiffRules::default());
        assert_eq!(d.status(), Status::Inconclusive, "{says}");
        assert!(
            d.inconclusive.iter().any(|r| r.starts_with(says)),
            "{says}: {:?}",
            d.inconclusive
        );
    }
    let d = diff("base", &good, &lossy, &DiffRules::default());
    assert!(d.inconclusive[0].starts_with("the new result lost messages"));
}

#[test]
fn an_undecodable_histogram_leaves_its_percentiles_unjudged_and_says_so() {
    let base = doc(1_000_000, 2000, 40_000);
    let mut new = doc(1_000_000, 2000, 90_000);
    new.runs[0].series.get_mut("delivery").unwrap().histogram = "not a histogram".into();
    let d = diff("base", &base, &new, &DiffRules::default());
    let p999 = finding(&d, "delivery", Figure::P99_9);
    assert!(!p999.regression);
    assert!(p999.reason.contains("did not decode"), "{}", p999.reason);
    assert_eq!(d.status(), Status::Inconclusive);
    // The exact counters still stand: the rate is still compared.
    assert!(
        finding(&d, "delivery", Figure::OverThresholdRate)
            .p_value
            .is_some()
    );
}

/// A lock with no holder named, one of two causes the explained fixtures use.
fn lock_cause() -> Cause {
    Cause::Lock {
        lock: LockKind::RtMutex,
        caller: None,
        holder: None,
    }
}

/// A preemption by ktimers, the other.
fn preempted_cause() -> Cause {
    Cause::Preempted {
        by: Culprit {
            role: TaskRole::KernelThread,
            name: Some("ktimers/1".into()),
            priority: "FIFO 98".into(),
        },
    }
}

/// The fixture with its send calls explained: `over` spikes, 100 kept, `lock` of them blocked
/// on a lock, `preempted` preempted, the rest unexplained.
fn explained(over: u64, lock: u64, preempted: u64) -> ResultDoc {
    explained_by(over, [(lock_cause(), lock), (preempted_cause(), preempted)])
}

/// The fixture with its send calls explained by `causes`, 100 kept of `over`.
fn explained_by(over: u64, causes: [(Cause, u64); 2]) -> ResultDoc {
    use rtsoak_record::result::explain::{CauseShare, Explanation, SeriesBlame};
    use rtsoak_record::{Series, SeriesKey};
    let mut doc = doc(1_000_000, over, 150_000);
    let explained: u64 = causes.iter().map(|(_, count)| count).sum();
    let blame = SeriesBlame {
        over_threshold: over,
        kept: 100,
        explained,
        unexplained: 100 - explained,
        unexplained_on_cpu: 0,
        causes: causes
            .into_iter()
            .map(|(cause, count)| CauseShare {
                cause,
                count,
                share_percent: count as f64,
                median_us: 300,
            })
            .collect(),
    };
    doc.runs[0].explanation = Some(Explanation {
        series: [(SeriesKey::Rt(Series::Delivery), blame)].into(),
        ..Default::default()
    });
    doc
}

#[test]
fn where_both_sides_were_explained_the_diff_says_which_cause_changed_most() {
    let base = explained(200, 10, 60);
    let new = explained(3000, 90, 5);
    let d = diff("base", &base, &new, &DiffRules::default());
    assert!(d.regression);
    let changes = &d.causes[0];
    assert_eq!(
        (
            changes.series.name(),
            changes.baseline_over_threshold,
            changes.new_over_threshold
        ),
        ("delivery", 200, 3000)
    );
    let lock = &changes.changes[0];
    assert_eq!(lock.cause, Some(lock_cause()), "the largest change first");
    // 10 % of 200 spikes, then 90 % of 3000.
    assert_eq!((lock.baseline_count, lock.new_count), (20.0, 2700.0));
    assert_eq!(
        (lock.baseline_share_percent, lock.new_share_percent),
        (10.0, 90.0)
    );
    // Without an explanation on one side there is nothing to say why.
    let plain = doc(1_000_000, 3000, 150_000);
    assert!(
        diff("base", &base, &plain, &DiffRules::default())
            .causes
            .is_empty()
    );
}

#[test]
fn a_cause_an_older_build_worded_unrecognisably_is_said_unpaired_not_dropped_or_zeroed() {
    let old_words = Cause::Unknown {
        text: "preempted by an old phrase".into(),
    };
    let base = explained_by(200, [(old_words.clone(), 40), (lock_cause(), 10)]);
    let new = explained(200, 10, 40);
    let d = diff("base", &base, &new, &DiffRules::default());
    let changes = &d.causes[0].changes;
    let unpaired: Vec<_> = changes.iter().filter(|c| c.unpaired).collect();
    assert_eq!(unpaired.len(), 1, "{changes:?}");
    assert_eq!(unpaired[0].cause, Some(old_words.clone()));
    assert_eq!(unpaired[0].baseline_count, 80.0, "kept with its count");
    assert!(
        changes.last().unwrap().unpaired,
        "after every paired change"
    );
    let lock = changes.iter().find(|c| c.cause == Some(lock_cause()));
    assert!(lock.is_some_and(|c| !c.unpaired && c.baseline_count == c.new_count));
    // The same words on both sides pair, as they always did.
    let both_old = diff("base", &base, &base, &DiffRules::default());
    assert!(both_old.causes[0].changes.iter().all(|c| !c.unpaired));
}
