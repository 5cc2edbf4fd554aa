use super::*;
use rtsoak_testing::fixture::{one_run_doc, two_round_doc};

#[test]
fn the_headline_of_a_comparison_fits_a_100_column_terminal() {
    let mut doc = two_round_doc();
    doc.verdict = Some(rtsoak_analysis::judge::verdict(&doc));
    let text = render(&doc);
    for line in text.lines() {
        assert!(
            line.chars().count() <= WIDTH,
            "{} columns: {line}",
            line.chars().count()
        );
    }
    insta::assert_snapshot!(text);
}

#[test]
fn unsupported_transports_are_one_line_under_the_table_not_rows_of_dashes() {
    let h = headline(&two_round_doc());
    assert!(!h.rows.iter().any(|r| r[0] == "signalfd"));
    assert_eq!(
        h.not_measured.as_deref(),
        Some("Not measured: signalfd (unsupported); `rtsoak probe` says why.")
    );
    assert!(headline(&one_run_doc()).not_measured.is_none());
}

#[test]
fn caveats_of_one_kind_fold_into_one_line_and_the_most_serious_come_first() {
    use rtsoak_record::{Caveat, Severity};
    let caveats = vec![
        Caveat::new(
            Severity::Distorts,
            "irq.affinity",
            "IRQ 24 may fire on the RT CPUs",
        ),
        Caveat::new(
            Severity::Distorts,
            "irq.affinity",
            "IRQ 25 may fire on the RT CPUs",
        ),
        Caveat::new(
            Severity::Detail,
            "cpus.rcu-nocbs",
            "RCU callbacks run on the RT CPUs",
        ),
        Caveat::new(
            Severity::Invalidates,
            "kernel.preempt-rt",
            "not a PREEMPT_RT kernel",
        ),
        Caveat::new(Severity::Distorts, "timer.migration", "timer migration on"),
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
    wrap(&mut out, sentence.trim_end(), "  ");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.len() > 2);
    assert!(lines.iter().all(|l| l.chars().count() <= WIDTH));
    assert!(lines[1].starts_with("    word"));
}

#[test]
fn a_p_value_is_never_split_across_lines() {
    let mut out = String::new();
    let text = format!("{} fewer than msg-ring (p < 0.01).", "x".repeat(WIDTH - 22));
    wrap(&mut out, &text, "  ");
    assert!(out.contains("(p < 0.01)."), "{out}");
}
