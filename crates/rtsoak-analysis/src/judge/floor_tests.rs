use super::*;
use rtsoak_testing::fixture::two_round_doc;

/// The fixture's comparison with a floor beside every run: the same runs, every figure's p50
/// and p99 at `floor_share` of the harness's and nothing over the threshold.
fn with_floor(floor_share: f64) -> ResultDoc {
    let mut doc = two_round_doc();
    doc.floor_runs = doc
        .runs
        .iter()
        .filter(|run| run.status != RunStatus::Unsupported)
        .cloned()
        .map(|mut run| {
            run.status = RunStatus::Completed;
            for series in run.series.values_mut() {
                rtsoak_testing::fixture::scale(&mut series.summary, floor_share);
                series.summary.over_threshold = 0;
            }
            run
        })
        .collect();
    doc
}

fn row<'a>(rows: &'a [FloorRow], label: &str) -> &'a FloorRow {
    rows.iter().find(|r| r.label == label).unwrap()
}

#[test]
fn without_floor_runs_there_is_nothing_to_compare() {
    assert!(overhead(&two_round_doc()).is_empty());
}

#[test]
fn every_measured_transport_gets_a_row_and_an_unsupported_one_none() {
    let rows = overhead(&with_floor(0.5));
    let labels: Vec<&str> = rows.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(labels, ["futex", "eventfd", "futex-syscall"]);
}

#[test]
fn the_ratios_are_of_the_medians_over_the_paired_rounds() {
    let doc = with_floor(0.5);
    let rows = overhead(&doc);
    let futex = row(&rows, "futex");
    assert_eq!((futex.rounds, futex.unpaired), (2, 0));
    let delivery = futex.delivery().unwrap();
    let p99s = |runs: &[RunResult]| -> Vec<u64> {
        runs.iter()
            .filter(|r| r.transport == "futex")
            .map(|r| r.series[&SeriesKey::Rt(Series::Delivery)].summary.p99_ns)
            .collect()
    };
    let (harness, floor) = (p99s(&doc.runs), p99s(&doc.floor_runs));
    assert_eq!(delivery.harness_p99_ns, (harness[0] + harness[1]) / 2);
    assert_eq!(delivery.floor_p99_ns, (floor[0] + floor[1]) / 2);
    assert_eq!(
        delivery.floor_p99_spread_ns,
        (floor[0].min(floor[1]), floor[0].max(floor[1]))
    );
    let ratio = delivery.p99_ratio().unwrap();
    assert!((1.95..=2.05).contains(&ratio), "{ratio}");
    let figures: Vec<Series> = futex.figures.iter().map(|f| f.series).collect();
    assert_eq!(figures, FIGURES);
}

#[test]
fn a_round_where_either_side_did_not_complete_is_left_unpaired() {
    let mut doc = with_floor(0.5);
    // The harness's eventfd run of round 1 failed; now the floor's futex-syscall run of round 2
    // fails too.
    let floor_syscall_2 = doc
        .floor_runs
        .iter_mut()
        .find(|r| r.transport == "futex-syscall" && r.round == 2)
        .unwrap();
    floor_syscall_2.status = RunStatus::Failed;
    let rows = overhead(&doc);
    for label in ["eventfd", "futex-syscall"] {
        let r = row(&rows, label);
        assert_eq!((r.rounds, r.unpaired), (1, 1), "{label}");
    }
}

#[test]
fn over_threshold_rates_are_summed_over_the_rounds_and_tested_exactly() {
    let rows = overhead(&with_floor(0.5));
    let delivery = row(&rows, "futex-syscall").delivery().unwrap();
    let (over, samples) = delivery.harness_over;
    assert!(over > 0 && samples > over);
    assert_eq!(delivery.floor_over, (0, samples));
    assert_eq!(
        delivery.rates_differ_p,
        crate::judge::rates::rates_differ_p_value(0, samples, over, samples)
    );
    assert!(
        delivery.rates_differ_p < 0.01,
        "{}",
        delivery.rates_differ_p
    );
    // The same rates on both sides do not differ.
    let same = row(&overhead(&with_floor(1.0)), "futex")
        .delivery()
        .cloned();
    assert!(same.is_some_and(|f| f.p99_ratio() == Some(1.0)));
}

#[test]
fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
    assert_eq!(median_ns(vec![9, 1, 5]), 5);
    assert_eq!(median_ns(vec![4, 10, 2, 6]), 5);
    assert_eq!(median_ns(Vec::new()), 0);
}
