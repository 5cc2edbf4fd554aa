//! The details for a terminal, every table behind the headline: the runs-and-integrity table
//! with its problems under it, one aligned table per latency series, the rate differences, the
//! causes, the per-round table when there were several rounds, the tail estimates, the legend
//! and every caveat,
//! each block after a blank line. What `--details` prints after the headline
//! ([`super::headline`]), and `rtsoak report --format details` alone. Every line and cell is
//! escaped for the terminal where it is written ([`lines`], [`lay_out`]).

use std::fmt::Write;

use super::comparison::{TEXT_COLUMNS, Table, comparison};
use crate::escape::terminal;
use rtsoak_record::result::ResultDoc;

/// Render `doc` as the terminal comparison table.
pub(crate) fn render(doc: &ResultDoc) -> String {
    let c = comparison(doc);
    let mut out = String::new();
    let _ = writeln!(out, "{}", terminal(&c.title));
    lay_out(&mut out, &c.integrity);
    lines(&mut out, &c.problems);
    for table in &c.series {
        lay_out(&mut out, table);
    }
    lines(&mut out, &c.differences);
    lines(&mut out, &c.causes);
    if let Some(rounds) = &c.rounds {
        lay_out(&mut out, rounds);
    }
    if let Some((table, under)) = super::tail::tail_block(doc) {
        if let Some(table) = table {
            lay_out(&mut out, &table);
        }
        lines(&mut out, &under);
    }
    lines(&mut out, &c.legend);
    if !c.caveats.is_empty() {
        let caveats: Vec<String> = std::iter::once("What these figures are worth:".to_string())
            .chain(c.caveats.iter().map(|caveat| format!("  - {caveat}")))
            .collect();
        lines(&mut out, &caveats);
    }
    out
}

/// A block of lines after a blank line; nothing when there are none.
fn lines(out: &mut String, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(out);
    for line in lines {
        let _ = writeln!(out, "{}", terminal(line));
    }
}

/// A blank line, the table's heading, then its header and rows in aligned columns: text
/// columns to the left, figures to the right. Cells are escaped before they are measured.
pub(super) fn lay_out(out: &mut String, table: &Table) {
    let _ = writeln!(out);
    let _ = writeln!(out, "{}", terminal(&table.heading));
    let rows: Vec<Vec<&str>> = std::iter::once(&table.header)
        .chain(&table.rows)
        .map(|row| row.iter().map(String::as_str).collect())
        .collect();
    // Two spaces between columns.
    let gaps: Vec<usize> = (0..table.header.len())
        .map(|i| if i == 0 { 0 } else { 2 })
        .collect();
    for line in aligned(&rows, &gaps).0 {
        let _ = writeln!(out, "{line}");
    }
}

/// `rows` (the header first) as lines of aligned columns, `gaps[i]` spaces before column `i`:
/// text columns to the left, figures to the right, every cell escaped for the terminal before
/// the columns are measured. With each column's width.
pub(super) fn aligned(rows: &[Vec<&str>], gaps: &[usize]) -> (Vec<String>, Vec<usize>) {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.iter().map(|cell| terminal(cell).into_owned()).collect())
        .collect();
    let widths: Vec<usize> = (0..gaps.len())
        .map(|c| {
            rows.iter()
                .filter_map(|r| Some(r.get(c)?.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let lines = rows
        .iter()
        .map(|row| {
            let mut line = String::new();
            for (i, (cell, width)) in row.iter().zip(&widths).enumerate() {
                line.push_str(&" ".repeat(gaps[i]));
                let _ = if i < TEXT_COLUMNS {
                    write!(line, "{cell:<width$}")
                } else {
                    write!(line, "{cell:>width$}")
                };
            }
            line.trim_end().to_string()
        })
        .collect();
    (lines, widths)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsoak_record::{ReturnSpan, Series, SeriesKey};
    use rtsoak_testing::fixture::{one_run_doc, two_round_doc};

    #[test]
    fn a_two_round_comparison_renders_merged_and_per_round_rows() {
        insta::assert_snapshot!(render(&two_round_doc()));
    }

    #[test]
    fn a_single_run_has_no_per_round_table() {
        let text = render(&one_run_doc());
        assert!(!text.contains("Per round"), "{text}");
        insta::assert_snapshot!(text);
    }

    /// 40 000 samples at 500 us, 20 us plus an exponential 2 us, as a worker records them.
    fn synthetic_tail() -> rtsoak_record::TailEstimate {
        let mut rng = fastrand::Rng::with_seed(1);
        let mut recorder = rtsoak_analysis::stats::Recorder::new(30_000, 1000);
        for i in 0..40_000u64 {
            let value = 20_000.0 - (1.0 - rng.f64()).ln() * 2_000.0;
            recorder.record(i * 500_000, value as u64);
        }
        let mut histogram = rtsoak_analysis::stats::new_histogram();
        for bucket in recorder.interval.iter_recorded() {
            let count = u64::from(bucket.count_at_value());
            histogram
                .record_n(bucket.value_iterated_to(), count)
                .unwrap();
        }
        let kept = recorder.outliers();
        rtsoak_analysis::tail::estimate(&rtsoak_analysis::tail::TailInput {
            outliers: &kept.outliers,
            outliers_dropped: kept.dropped,
            outliers_complete_over_ns: Some(kept.complete_over_ns),
            histogram: &histogram,
            measured_ns: 40_000 * 500_000,
            period_ns: 500_000,
            threshold_ns: 30_000,
        })
    }

    #[test]
    fn tail_estimates_show_their_levels_or_why_there_are_none() {
        let mut doc = one_run_doc();
        for run in &mut doc.runs {
            run.tail = rtsoak_analysis::tail::run::estimate_run(run, 500_000, 20_000);
            // The fixture's series are too short for a fit: add one that has a tail.
            run.tail
                .insert(SeriesKey::Rt(Series::Timer), synthetic_tail());
        }
        let text = render(&doc);
        assert!(text.contains("Tail estimates"), "{text}");
        insta::assert_snapshot!(text);
    }

    #[test]
    fn a_tail_whose_figures_contradict_each_other_is_shown_as_dashes_with_the_reasons() {
        let mut doc = one_run_doc();
        let mut broken_fit = synthetic_tail();
        let rtsoak_record::TailEstimate::Estimated(model) = &mut broken_fit else {
            panic!("the synthetic tail is estimated: {broken_fit:?}");
        };
        model.fit_test.p_value = 2.5;
        let mut broken_level = synthetic_tail();
        let rtsoak_record::TailEstimate::Estimated(model) = &mut broken_level else {
            unreachable!()
        };
        let day = model
            .return_levels
            .iter_mut()
            .find(|l| l.span == ReturnSpan::Day);
        let day = day.expect("a day level");
        (day.level_ns, day.low_ns, day.high_ns) = (Some(-5000.0), Some(9e12), Some(0.0));
        doc.runs[0].tail = [
            (SeriesKey::Rt(Series::Timer), broken_fit),
            (SeriesKey::Rt(Series::Delivery), broken_level),
        ]
        .into();
        let text = render(&doc);
        assert!(!text.contains("2.50") && !text.contains("-5.0"), "{text}");
        let row = |series: &str| {
            text.lines()
                .find(|l| l.starts_with(&format!("eventfd {series}")))
                .unwrap_or_else(|| panic!("no {series} row: {text}"))
                .to_string()
        };
        let timer = row("timer");
        // Every figure: threshold, clusters, shape, fit p, held out and the three levels.
        assert_eq!(
            timer.split_whitespace().filter(|c| *c == "-").count(),
            8,
            "{timer}"
        );
        let delivery = row("delivery");
        assert_eq!(
            delivery.split_whitespace().filter(|c| *c == "-").count(),
            1,
            "{delivery}"
        );
        for reason in [
            "eventfd timer: the fit p-value 2.5 is not a probability (outside 0 to 1): shown as -",
            "eventfd delivery day: the return level (ns) -5000 is below its threshold",
        ] {
            assert!(text.contains(reason), "{reason}: {text}");
        }
    }

    #[test]
    fn every_table_and_the_legend_fit_a_150_column_terminal() {
        // The title, problems and caveats are sentences a terminal wraps; columns must not be.
        let c = comparison(&two_round_doc());
        let mut text = String::new();
        for table in std::iter::once(&c.integrity)
            .chain(&c.series)
            .chain(c.rounds.as_ref())
        {
            lay_out(&mut text, table);
        }
        lines(&mut text, &c.legend);
        for line in text.lines() {
            let width = line.chars().count();
            assert!(width <= 150, "{width} columns: {line}");
        }
    }
}
