use super::*;
use rtsoak_testing::fixture::{one_run_doc, two_round_doc};

/// Every line of `text` at most `width` columns.
fn assert_fits(text: &str, width: usize) {
    for line in text.lines() {
        let columns = line.chars().count();
        assert!(columns <= width, "{columns} columns, over {width}: {line}");
    }
}

#[test]
fn the_headline_of_a_comparison_fits_a_100_column_terminal() {
    let mut doc = two_round_doc();
    doc.verdict = Some(rtsoak_analysis::judge::verdict(&doc));
    let text = render(&doc, WIDEST, "rtsoak");
    assert_fits(&text, WIDEST);
    insta::assert_snapshot!(text);
}

#[test]
fn on_80_columns_the_figures_and_the_integrity_are_two_tables() {
    let mut doc = two_round_doc();
    doc.verdict = Some(rtsoak_analysis::judge::verdict(&doc));
    let text = render(&doc, NARROWEST, "rtsoak");
    assert_fits(&text, NARROWEST);
    // Every cell of the wide table is still there, each row's in one line of each table.
    let wide = headline(&doc, "rtsoak");
    let tables = text.split("The decision").next().unwrap();
    for row in &wide.rows {
        let lines: Vec<&str> = tables
            .lines()
            .filter(|line| line.split_whitespace().next() == Some(row[0].as_str()))
            .collect();
        assert_eq!(lines.len(), 2, "{}: {text}", row[0]);
        for cell in &row[1..] {
            assert!(
                lines.iter().any(|line| line.contains(cell.as_str())),
                "{cell}: {text}"
            );
        }
    }
    insta::assert_snapshot!(text);
}

#[test]
fn a_table_that_fits_the_width_stays_one_table() {
    let mut doc = two_round_doc();
    doc.verdict = Some(rtsoak_analysis::judge::verdict(&doc));
    let headers = |text: &str| text.lines().filter(|l| l.starts_with("transport ")).count();
    assert_eq!(headers(&render(&doc, WIDEST, "rtsoak")), 1);
    assert_eq!(headers(&render(&doc, NARROWEST, "rtsoak")), 2);
}

#[test]
fn unsupported_transports_are_one_line_under_the_table_not_rows_of_dashes() {
    let h = headline(&two_round_doc(), "rtsoak");
    assert!(!h.rows.iter().any(|r| r[0] == "signalfd"));
    assert_eq!(
        h.not_measured.as_deref(),
        Some("Not measured: signalfd (unsupported); `rtsoak probe` says why.")
    );
    assert!(headline(&one_run_doc(), "rtsoak").not_measured.is_none());
    // The advice names the command the reader types where they are.
    let in_a_source_tree = headline(&two_round_doc(), "cargo run --release --");
    assert_eq!(
        in_a_source_tree.not_measured.as_deref(),
        Some("Not measured: signalfd (unsupported); `cargo run --release -- probe` says why.")
    );
}

#[test]
fn caveats_of_one_kind_fold_into_one_line_and_the_most_serious_come_first() {
    use rtsoak_record::{Caveat, CheckId, Severity};
    let caveats = vec![
        Caveat::new(
            Severity::Distorts,
            CheckId::IrqAffinity,
            "IRQ 24 may fire on the RT CPUs",
        ),
        Caveat::new(
            Severity::Distorts,
            CheckId::IrqAffinity,
            "IRQ 25 may fire on the RT CPUs",
        ),
        Caveat::new(
            Severity::Detail,
            CheckId::CpusRcuNocbs,
            "RCU callbacks run on the RT CPUs",
        ),
        Caveat::new(
            Severity::Invalidates,
            CheckId::KernelPreemptRt,
            "not a PREEMPT_RT kernel",
        ),
        Caveat::new(
            Severity::Distorts,
            CheckId::TimerMigration,
            "timer migration on",
        ),
    ];
    let (shown, hidden) = top_caveats(&caveats);
    assert_eq!(
        shown,
        [
            "[invalidates] not a PREEMPT_RT kernel",
            "[distorts] IRQ 24 may fire on the RT CPUs (and 1 more like it)",
            "[distorts] timer migration on",
        ]
    );
    assert_eq!(hidden, 1, "the detail is counted, not shown");
}

#[test]
fn long_sentences_wrap_at_the_width_with_a_hanging_indent() {
    let mut out = String::new();
    let sentence = "word ".repeat(60);
    wrap(&mut out, sentence.trim_end(), "  ", NARROWEST);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.len() > 2);
    assert_fits(&out, NARROWEST);
    assert!(lines[1].starts_with("    word"));
}

#[test]
fn a_command_in_backticks_is_never_split_across_lines() {
    let mut out = String::new();
    let text = format!("{} `rtsoak probe` says why.", "x".repeat(NARROWEST - 10));
    wrap(&mut out, &text, "", NARROWEST);
    assert!(out.contains("\n  `rtsoak probe` says why."), "{out}");
}

#[test]
fn a_p_value_is_never_split_across_lines() {
    let mut out = String::new();
    let text = format!(
        "{} fewer than msg-ring (p < 0.01).",
        "x".repeat(WIDEST - 22)
    );
    wrap(&mut out, &text, "  ", WIDEST);
    assert!(out.contains("(p < 0.01)."), "{out}");
}

#[test]
fn reasons_of_one_kind_fold_into_one_line_after_the_breaches() {
    use crate::journal::verdict_lines;
    use rtsoak_record::result::verdict::{Breach, Inconclusive, InconclusiveKind, Limit};
    let reason = |transport: &str, kind, message: &str| Inconclusive {
        transport: Some(transport.to_string()),
        ring_setup: None,
        kind,
        message: message.to_string(),
    };
    let breach = Breach {
        transport: Some("futex".to_string()),
        ring_setup: None,
        what: Limit::MaxDelivery,
        series: Some(Series::Delivery),
        figure: 250.0,
        limit: 200.0,
        unit: "us".to_string(),
        message: "futex: longest delivery 250.0 us > 200 us allowed".to_string(),
    };
    let verdict = Verdict::of(
        Vec::new(),
        vec![breach],
        vec![
            reason(
                "eventfd",
                InconclusiveKind::MissedPeriods,
                "eventfd missed 60 %",
            ),
            reason(
                "msg-ring",
                InconclusiveKind::TooFewMessages,
                "msg-ring sent 3",
            ),
            reason(
                "signalfd",
                InconclusiveKind::MissedPeriods,
                "signalfd missed 70 %",
            ),
        ],
    );
    let folded = folded_verdict(&verdict);
    let unfolded = verdict_lines(&verdict);
    assert_eq!(
        folded[..2],
        unfolded[..2],
        "the verdict line and the breach"
    );
    assert!(folded[1].starts_with("  breach: futex"), "{folded:?}");
    assert_eq!(
        folded[2..],
        [
            "  inconclusive: eventfd missed 60 % (the same for signalfd)",
            "  inconclusive: msg-ring sent 3",
        ]
    );
    // Reasons of distinct kinds stay the journal's own lines.
    let distinct = Verdict::of(
        Vec::new(),
        Vec::new(),
        vec![reason(
            "msg-ring",
            InconclusiveKind::TooFewMessages,
            "msg-ring sent 3",
        )],
    );
    assert_eq!(folded_verdict(&distinct), verdict_lines(&distinct));
}
