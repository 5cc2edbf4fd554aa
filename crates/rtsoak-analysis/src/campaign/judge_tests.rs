//! The judgement across boots on hand-built results: the bench arithmetic and its gates, the
//! boot-to-boot ranges, the fingerprint, missing boots and emulation; the soak rate tests.

use rtsoak_record::bench::{
    BENCH_COMMAND, BENCH_SCHEMA_VERSION, BenchConfig, BenchName, BenchSeries, Round, Setup,
};
use rtsoak_record::result::Tool;
use rtsoak_record::{HostFacts, Policy, RingSetup, Series, SeriesKey};

use super::*;
use crate::campaign::judge_bench::RowReason as BenchReason;
use crate::campaign::judge_soak::RowReason as SoakReason;
use crate::campaign::sequence::slots;

/// The reference board's host facts.
fn host() -> HostFacts {
    serde_json::from_str(rtsoak_testing::fixture::HOST_FACTS_JSON).unwrap()
}

/// A plan as its TOML reads (the binaries' crate validates plans; these are valid).
fn plan(command: &str, extra: &str) -> Plan {
    toml::from_str(&format!(
        "command = {command}\n{extra}\n\
         [parent]\nkernel = \"/boot/a\"\n[child]\nkernel = \"/boot/b\"\n"
    ))
    .unwrap()
}

fn bench_plan(extra: &str) -> Plan {
    plan("[\"bench\", \"eventfd\"]", extra)
}

fn round(index: usize, ns_per_op: f64, valid: bool) -> Round {
    let failed: Vec<&str> = if valid { vec![] } else { vec!["results"] };
    Round {
        index,
        warmup: false,
        cycles: 512,
        ops: 16_384,
        elapsed_ns: (ns_per_op * 16_384.0) as u64,
        ns_per_op,
        valid,
        checks: serde_json::from_value(serde_json::json!({
            "expected_completions": 32768, "completions": 32768, "bad_results": 0,
            "first_bad": null, "timeouts": 0, "call_errors": 0, "first_call_error": null,
            "cq_overflow": 0, "residual_waiters": null, "cpu": 2, "cpu_at_start": 2,
            "cpu_at_end": 2, "failed": failed,
        }))
        .unwrap(),
    }
}

/// A bench result whose measured rounds took `rounds` ns/op.
fn bench_doc(rounds: &[f64]) -> BootResult {
    let rounds: Vec<Round> = rounds
        .iter()
        .enumerate()
        .map(|(i, ns)| round(i, *ns, true))
        .collect();
    BootResult::Bench(Box::new(BenchDoc {
        schema_version: BENCH_SCHEMA_VERSION,
        tool: Tool::current(),
        command: BENCH_COMMAND.into(),
        bench: BenchName::Eventfd,
        argv: vec![],
        started_at: String::new(),
        finished_at: String::new(),
        host: host(),
        config: BenchConfig {
            k: 32,
            vectors: None,
            width: None,
            wake_index: None,
            thread_counts: None,
            shared: false,
            word_stride_bytes: 64,
            warmup_rounds: 0,
            rounds: rounds.len() as u32,
            cycles: 512,
            cpu: 2,
            policy: Policy::Fifo,
            priority: 40,
            ring_setup: RingSetup::None,
        },
        setup: Setup {
            cpus: vec![2],
            policy: "fifo".into(),
            priority: 40,
            memory_locked: true,
            ring_setup: Some(RingSetup::None),
            warnings: vec![],
        },
        series: vec![series(rounds)],
        valid: true,
    }))
}

/// The `eventfd` series of `rounds`, summarised as `rtsoak bench` does.
fn series(rounds: Vec<Round>) -> BenchSeries {
    let measured: Vec<(f64, bool)> = rounds
        .iter()
        .filter(|r| !r.warmup)
        .map(|r| (r.ns_per_op, r.valid))
        .collect();
    BenchSeries {
        name: "eventfd".into(),
        op: "message".into(),
        ops_per_cycle: 32,
        summary: crate::bench::summary::summarise(&measured),
        rounds,
    }
}

/// Judge `results` (one per planned boot, in order; `None`: that boot measured nothing).
fn judge_of(plan: &Plan, results: &[Option<BootResult>], prints: &[Fingerprint]) -> Judgement {
    let planned = slots(&plan.order, plan.boots_per_step);
    let boots: Vec<MeasuredBoot<'_>> = planned
        .iter()
        .zip(results)
        .zip(prints.iter().cycle())
        .filter_map(|((slot, result), fingerprint)| {
            Some(MeasuredBoot {
                slot: *slot,
                result: result.as_ref()?,
                fingerprint,
            })
        })
        .collect();
    let context = Context {
        plan,
        planned: &planned,
        varied_parameters: vec![],
        emulated: false,
    };
    judge(&context, &boots)
}

/// The reference board's fingerprint, as the binaries' crate reads it.
fn print() -> Fingerprint {
    Fingerprint {
        cpu_model: Some("ARMv8 Processor rev 1 (v8l)".into()),
        microcode: Some("0-5=0x411fd421".into()),
        governors: Some("0-5=performance".into()),
        no_turbo: None,
        boost: None,
        smt: None,
        online: Some("0-5".into()),
        rt_throttling: Some("-1/1000000".into()),
        isolated: Some("2-5".into()),
        nohz_full: Some("2-5".into()),
        cmdline: "root=/dev/mmcblk0p1 isolcpus=2-5 nohz_full=2-5 rcu_nocbs=2-5".into(),
    }
}

#[test]
fn one_boot_per_step_is_bench_compares_arithmetic_on_the_scalar_report() {
    // The io_uring scalar futex wait/wake report: 180.079 / 196.647 / 179.856 ns per pair.
    let plan = bench_plan("");
    let results = [
        Some(bench_doc(&[180.079])),
        Some(bench_doc(&[196.647])),
        Some(bench_doc(&[179.856])),
    ];
    let judgement = judge_of(&plan, &results, &[print()]);
    assert_eq!(judgement.verdict, Verdict::Regression);
    let row = &judgement.bench[0];
    assert!(
        (row.comparison.as_ref().unwrap().change_pct - 9.268).abs() < 5e-4,
        "{}",
        row.comparison.as_ref().unwrap().change_pct
    );
    assert!((row.comparison.as_ref().unwrap().drift_pct.unwrap() + 0.1238).abs() < 5e-4);
    assert_eq!(row.boots.len(), 3);
    assert!(judgement.reasons.is_empty());
}

#[test]
fn a_child_within_the_parents_boot_to_boot_range_is_no_claim() {
    // Three boots of each step. Parent A's boots 100, 100, 115, parent B's 100, 100, 100,
    // the child's 110, 110, 110: midpoint (105 + 100) / 2 = 102.5, the child +7.3 % (drop-first
    // +6.8 %), beyond the 5 % signal gate; but a parent boot (115) lies above the child.
    let plan = bench_plan("boots_per_step = 3\n[judge]\ndrift_pct = 20.0\ncv_pct = 10.0");
    let per_boot = [
        100.0, 100.0, 115.0, 110.0, 110.0, 110.0, 100.0, 100.0, 100.0,
    ];
    let results: Vec<_> = per_boot
        .iter()
        .map(|m| Some(bench_doc(&[*m, *m])))
        .collect();
    let judgement = judge_of(&plan, &results, &[print()]);
    let row = &judgement.bench[0];
    assert_eq!(
        row.comparison.as_ref().unwrap().verdict,
        Verdict::Regression,
        "{:?}",
        row.comparison
    );
    assert_eq!(row.reasons, [BenchReason::WithinParentsRange]);
    assert_eq!(row.verdict, Verdict::Inconclusive);
    let parent = &row.spread[0];
    assert_eq!(
        (parent.boots, parent.min_ns_per_op, parent.max_ns_per_op),
        (6, 100.0, 115.0)
    );
    // 15 / 102.5 = 14.63 %.
    assert!(
        (parent.spread_pct - 14.634).abs() < 1e-3,
        "{}",
        parent.spread_pct
    );
}

#[test]
fn with_separate_ranges_every_child_boot_must_lie_beyond_every_parent_boot() {
    let per_boot = [
        100.0, 101.0, 100.5, 109.0, 120.0, 120.0, 100.0, 100.5, 101.0,
    ];
    let results: Vec<_> = per_boot.iter().map(|m| Some(bench_doc(&[*m]))).collect();
    let loose = bench_plan("boots_per_step = 3\n[judge]\ncv_pct = 10.0");
    assert_eq!(
        judge_of(&loose, &results, &[print()]).verdict,
        Verdict::Regression
    );
    let strict = bench_plan(
        "boots_per_step = 3\n[judge]\ncv_pct = 10.0\ndrift_pct = 5.0\nseparate_ranges = true",
    );
    let results_overlapping: Vec<_> = [
        100.0, 101.0, 110.0, 109.0, 120.0, 120.0, 100.0, 100.5, 101.0,
    ]
    .iter()
    .map(|m| Some(bench_doc(&[*m])))
    .collect();
    let judgement = judge_of(&strict, &results_overlapping, &[print()]);
    assert_eq!(
        judgement.bench[0].reasons,
        [BenchReason::WithinParentsRange]
    );
    assert_eq!(
        judge_of(&strict, &results, &[print()]).verdict,
        Verdict::Regression
    );
}

#[test]
fn a_boot_whose_rounds_vary_beyond_the_cv_gate_makes_the_row_inconclusive() {
    let plan = bench_plan("");
    let results = [
        Some(bench_doc(&[100.0, 100.0])),
        Some(bench_doc(&[90.0, 130.0])),
        Some(bench_doc(&[100.0, 100.0])),
    ];
    let judgement = judge_of(&plan, &results, &[print()]);
    let row = &judgement.bench[0];
    assert!(
        matches!(row.reasons[..], [BenchReason::BootCv { seq: 1, .. }]),
        "{:?}",
        row.reasons
    );
    assert_eq!(row.verdict, Verdict::Inconclusive);
    assert!(row.comparison.as_ref().unwrap().max_cv_pct > 20.0);
}

#[test]
fn a_fingerprint_that_differs_is_inconclusive_unless_the_plan_varies_it() {
    let plan = bench_plan("");
    let results = [
        Some(bench_doc(&[100.0])),
        Some(bench_doc(&[100.0])),
        Some(bench_doc(&[100.0])),
    ];
    let mut other = print();
    other.governors = Some("0-5=powersave".into());
    let judgement = judge_of(&plan, &results, &[print(), other.clone(), print()]);
    assert_eq!(judgement.verdict, Verdict::Inconclusive);
    assert_eq!(judgement.reasons, [Reason::FingerprintDiffers]);
    assert_eq!(judgement.fingerprint_differences[0].boot, 1);
    assert_eq!(
        judgement.bench[0].verdict,
        Verdict::NoChange,
        "the row itself is unchanged"
    );
}

#[test]
fn a_planned_boot_without_a_result_or_an_emulated_campaign_is_no_claim() {
    let plan = bench_plan("");
    let results = [Some(bench_doc(&[100.0])), Some(bench_doc(&[120.0])), None];
    let judgement = judge_of(&plan, &results, &[print()]);
    assert_eq!(judgement.verdict, Verdict::Inconclusive);
    assert_eq!(
        judgement.reasons,
        [
            Reason::BootsMissing { seqs: vec![2] },
            Reason::ColumnMissing {
                column: Column::ParentB
            }
        ]
    );
    let planned = slots(&plan.order, 1);
    let results = [
        bench_doc(&[100.0]),
        bench_doc(&[100.0]),
        bench_doc(&[100.0]),
    ];
    let fingerprint = print();
    let boots: Vec<_> = planned
        .iter()
        .zip(&results)
        .map(|(slot, result)| MeasuredBoot {
            slot: *slot,
            result,
            fingerprint: &fingerprint,
        })
        .collect();
    let context = Context {
        plan: &plan,
        planned: &planned,
        varied_parameters: vec![],
        emulated: true,
    };
    assert_eq!(judge(&context, &boots).reasons, [Reason::Emulated]);
}

#[test]
fn boots_of_different_bench_settings_are_not_compared() {
    let plan = bench_plan("");
    let mut odd = bench_doc(&[100.0]);
    if let BootResult::Bench(doc) = &mut odd {
        doc.config.k = 8;
    }
    let results = [
        Some(bench_doc(&[100.0])),
        Some(odd),
        Some(bench_doc(&[100.0])),
    ];
    let judgement = judge_of(&plan, &results, &[print()]);
    assert_eq!(
        judgement.reasons,
        [Reason::ConfigDiffers {
            reference_seq: 0,
            seq: 1
        }]
    );
}

/// A soak result of one eventfd run whose delivery had `over` of `samples` over the threshold
/// (and its send calls none).
fn soak_doc(over: u64, samples: u64) -> BootResult {
    let mut doc = rtsoak_testing::fixture::one_run_doc();
    let run = &mut doc.runs[0];
    for (series, over) in [(Series::Delivery, over), (Series::SendCall, 0)] {
        let summary = &mut run.series.get_mut(&SeriesKey::Rt(series)).unwrap().summary;
        summary.count = samples;
        summary.over_threshold = over;
    }
    BootResult::Soak(Box::new(doc))
}

fn soak_plan(extra: &str) -> Plan {
    plan("[\"run\", \"-t\", \"eventfd\"]", extra)
}

fn delivery(judgement: &Judgement) -> &SoakRow {
    judgement
        .soak
        .iter()
        .find(|r| r.series == Series::Delivery)
        .unwrap()
}

#[test]
fn a_child_whose_over_threshold_rate_rose_beyond_the_minimum_effect_regressed() {
    let plan = soak_plan("");
    let results = [
        Some(soak_doc(10, 1_000_000)),
        Some(soak_doc(60, 1_000_000)),
        Some(soak_doc(12, 1_000_000)),
    ];
    let judgement = judge_of(&plan, &results, &[print()]);
    let row = delivery(&judgement);
    assert_eq!(row.verdict, Verdict::Regression, "{row:?}");
    assert_eq!(
        (row.parents.over_threshold, row.parents.samples),
        (22, 2_000_000)
    );
    assert!(row.p_higher < 1e-6, "{}", row.p_higher);
    assert_eq!(judgement.verdict, Verdict::Regression);
    // The send calls, with none over the threshold anywhere, did not change.
    let send = judgement
        .soak
        .iter()
        .find(|r| r.series == Series::SendCall)
        .unwrap();
    assert_eq!(send.verdict, Verdict::NoChange);
}

#[test]
fn equal_rates_are_no_change_and_a_lower_one_an_improvement() {
    let plan = soak_plan("");
    let same = [
        Some(soak_doc(10, 1_000_000)),
        Some(soak_doc(12, 1_000_000)),
        Some(soak_doc(11, 1_000_000)),
    ];
    assert_eq!(
        delivery(&judge_of(&plan, &same, &[print()])).verdict,
        Verdict::NoChange
    );
    let better = [
        Some(soak_doc(60, 1_000_000)),
        Some(soak_doc(5, 1_000_000)),
        Some(soak_doc(55, 1_000_000)),
    ];
    assert_eq!(
        delivery(&judge_of(&plan, &better, &[print()])).verdict,
        Verdict::Improvement
    );
}

#[test]
fn parents_whose_rates_differ_make_the_row_inconclusive() {
    let plan = soak_plan("");
    let results = [
        Some(soak_doc(5, 1_000_000)),
        Some(soak_doc(50, 1_000_000)),
        Some(soak_doc(60, 1_000_000)),
    ];
    let row = delivery(&judge_of(&plan, &results, &[print()])).clone();
    assert!(
        matches!(row.reasons[..], [SoakReason::ParentsDiffer { .. }]),
        "{:?}",
        row.reasons
    );
    assert_eq!(row.verdict, Verdict::Inconclusive);
}

#[test]
fn lost_messages_on_the_child_alone_are_its_regression_and_on_a_parent_no_claim() {
    let plan = soak_plan("");
    let lossy = || {
        let mut result = soak_doc(10, 1_000_000);
        if let BootResult::Soak(doc) = &mut result {
            doc.runs[0].integrity.lost = 2;
        }
        result
    };
    let child_lost = [
        Some(soak_doc(10, 1_000_000)),
        Some(lossy()),
        Some(soak_doc(10, 1_000_000)),
    ];
    let row = delivery(&judge_of(&plan, &child_lost, &[print()])).clone();
    assert_eq!(row.reasons, [SoakReason::ChildFailed { seqs: vec![1] }]);
    assert_eq!(row.verdict, Verdict::Regression);
    let parent_lost = [
        Some(lossy()),
        Some(soak_doc(10, 1_000_000)),
        Some(soak_doc(10, 1_000_000)),
    ];
    let row = delivery(&judge_of(&plan, &parent_lost, &[print()])).clone();
    assert_eq!(row.reasons, [SoakReason::ParentFailed { seq: 0 }]);
    assert_eq!(row.verdict, Verdict::Inconclusive);
}

#[test]
fn a_bench_result_in_a_soak_campaign_is_refused() {
    let plan = soak_plan("");
    let results = [
        Some(soak_doc(1, 1000)),
        Some(bench_doc(&[1.0])),
        Some(soak_doc(1, 1000)),
    ];
    let judgement = judge_of(&plan, &results, &[print()]);
    assert!(judgement.reasons.contains(&Reason::WrongResult { seq: 1 }));
    assert_eq!(judgement.verdict, Verdict::Inconclusive);
}

#[test]
fn the_worst_verdict_wins_as_in_bench_compare() {
    use Verdict::*;
    assert_eq!(worst(&[NoChange, Improvement]), Improvement);
    assert_eq!(worst(&[Improvement, Inconclusive]), Inconclusive);
    assert_eq!(worst(&[Inconclusive, Regression]), Regression);
    assert_eq!(worst(&[]), Inconclusive);
}

#[test]
fn a_column_that_measured_nothing_is_no_comparison_and_the_document_still_reads_back() {
    // The child never came up (a panic): no figure may be a NaN, which JSON cannot hold.
    let plan = bench_plan("");
    let results = [Some(bench_doc(&[100.0])), None, Some(bench_doc(&[101.0]))];
    let judgement = judge_of(&plan, &results, &[print()]);
    let row = &judgement.bench[0];
    assert_eq!(row.comparison, None);
    assert_eq!(row.reasons, [BenchReason::NotCompared]);
    assert_eq!(row.verdict, Verdict::Inconclusive);
    let json = serde_json::to_string(&judgement).unwrap();
    assert!(!json.contains("null"), "{json}");
    let back: Judgement = serde_json::from_str(&json).unwrap();
    assert_eq!(back, judgement);
}
