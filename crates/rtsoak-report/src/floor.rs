//! The `--floor` table: per transport and figure, the harness's p50 and p99 against the floor
//! pair's (medians over the paired rounds) with their ratio, and the over-threshold rates with
//! the exact test's p-value; then per transport how far above its floor the harness's delivery
//! p99 is, and whether that is outside the floor's own spread over the rounds (inside it, the
//! two are not told apart on this machine). Empty for a result without floor runs. Pure: the document in, text
//! out ([`rtsoak_analysis::judge::floor`] does the arithmetic).

use std::fmt::Write;

use super::escape::terminal;
use super::text::us;
use rtsoak_analysis::judge::floor::{FIGURES, FigureOverhead, FloorRow, Withheld, overhead};
use rtsoak_record::result::ResultDoc;

/// The table and the lines, or nothing where the document has no floor runs.
pub(crate) fn render(doc: &ResultDoc) -> String {
    let rows = overhead(doc);
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nThe harness against its floor (--floor: the same pair without the harness, run beside \
         it in\nevery round; medians over the rounds of each side's percentiles; latencies in us):"
    );
    let threshold = format!(">{}us per M", us(doc.plan.threshold_ns));
    let _ = writeln!(
        out,
        "{:<16} {:<10} {:>21}  {:>21}  {:>25}",
        "", "", "p50", "p99", threshold
    );
    let sides = [
        "harness", "floor", "ratio", "harness", "floor", "ratio", "harness", "floor", "p",
    ];
    let _ = writeln!(out, "{}", table_line("transport", "figure", sides));
    let withheld = rows.iter().flat_map(|row| {
        row.withheld
            .iter()
            .map(move |w| format!("  {} {}: {}", row.label, w.series.name(), why(w)))
    });
    let lines = rows
        .iter()
        .flat_map(figure_lines)
        .chain(withheld)
        .chain(rows.iter().flat_map(verdict_lines));
    for line in lines {
        let _ = writeln!(out, "{}", terminal(&line));
    }
    out
}

/// Widths of the nine figure columns: harness, floor and ratio of the p50, the same of the p99,
/// then harness, floor and p of the over-threshold rate.
const WIDTHS: [usize; 9] = [7, 6, 6, 7, 6, 6, 8, 8, 7];

/// One line of the table: the transport, the figure, and the nine cells under the header's
/// p50, p99 and rate columns, two spaces between those groups.
fn table_line(transport: &str, figure: &str, cells: [&str; 9]) -> String {
    let mut line = format!("{transport:<16} {figure:<10}");
    for (i, (cell, width)) in cells.into_iter().zip(WIDTHS).enumerate() {
        let gap = if i > 0 && i % 3 == 0 { "  " } else { " " };
        let _ = write!(line, "{gap}{cell:>width$}");
    }
    line
}

/// A row's lines of the table, in the order of [`FIGURES`]: a withheld figure is `-` in every
/// column (the reason follows the table).
fn figure_lines(row: &FloorRow) -> Vec<String> {
    let mut lines = Vec::new();
    for series in FIGURES {
        let label = if lines.is_empty() {
            row.label.as_str()
        } else {
            ""
        };
        if let Some(figure) = row.figures.iter().find(|f| f.series == series) {
            lines.push(figure_line(label, figure));
        } else if row.withheld.iter().any(|w| w.series == series) {
            lines.push(table_line(label, series.name(), ["-"; 9]));
        }
    }
    if lines.is_empty() {
        lines.push(format!(
            "{:<16} no round where both sides completed",
            row.label
        ));
    }
    lines
}

/// Why a figure is withheld: `the floor's round 2 run: its histogram does not decode: shown as
/// -`.
fn why(withheld: &Withheld) -> String {
    format!(
        "the {}'s round {} run: {}",
        withheld.side,
        withheld.round,
        withheld.reason.shown_as_dash()
    )
}

fn figure_line(label: &str, f: &FigureOverhead) -> String {
    let cells = [
        us(f.harness_p50_ns),
        us(f.floor_p50_ns),
        times(f.p50_ratio()),
        us(f.harness_p99_ns),
        us(f.floor_p99_ns),
        times(f.p99_ratio()),
        per_million(f.harness_over),
        per_million(f.floor_over),
        p_value(f.rates_differ_p),
    ];
    table_line(label, f.series.name(), cells.each_ref().map(String::as_str))
}

/// "eventfd: harness delivery p99 1.04x its floor (+4 %; 5 round(s))" and, below it, whether
/// that difference is outside the floor's own spread over the rounds (else it is not told apart
/// from this machine's noise, and the line says so); or why there is no figure.
fn verdict_lines(row: &FloorRow) -> Vec<String> {
    let unpaired = match row.unpaired {
        0 => String::new(),
        n => format!("; {n} round(s) unpaired, a side did not complete"),
    };
    if let Some(withheld) = row.delivery_withheld() {
        return vec![format!(
            "  {}: no delivery figure: {}{unpaired}",
            row.label,
            why(withheld)
        )];
    }
    let Some((delivery, ratio)) = row
        .delivery()
        .and_then(|figure| Some((figure, figure.p99_ratio()?)))
    else {
        return vec![format!(
            "  {}: no delivery figure on both sides{unpaired}",
            row.label
        )];
    };
    let how_far = if ratio <= 1.0 {
        "at or below it".to_string()
    } else {
        format!("+{:.0} %", (ratio - 1.0) * 100.0)
    };
    vec![
        format!(
            "  {}: harness delivery p99 {ratio:.2}x its floor ({how_far}; {} round(s){unpaired})",
            row.label, row.rounds,
        ),
        format!("    {}", spread_line(row.rounds, delivery)),
    ]
}

/// What the floor's own round-to-round spread says of the difference: a difference inside it
/// is not the harness's as far as this machine can tell.
fn spread_line(rounds: usize, delivery: &FigureOverhead) -> String {
    let (low, high) = delivery.floor_p99_spread_ns;
    if rounds < 2 {
        "one round: the floor's own spread is unknown; run --rounds 5 or more".to_string()
    } else if delivery.p99_within_floor_spread() {
        format!(
            "inside the floor's own p99 spread over the rounds ({}-{} us): not told apart from it \
             here",
            us(low),
            us(high)
        )
    } else {
        format!(
            "outside the floor's own p99 spread over the rounds ({}-{} us)",
            us(low),
            us(high)
        )
    }
}

fn times(ratio: Option<f64>) -> String {
    ratio.map_or_else(|| "-".to_string(), |r| format!("{r:.2}x"))
}

fn per_million((over, samples): (u64, u64)) -> String {
    if samples == 0 {
        return "-".to_string();
    }
    let rate = over as f64 * 1e6 / samples as f64;
    if rate >= 100.0 {
        format!("{rate:.0}")
    } else {
        format!("{rate:.1}")
    }
}

fn p_value(p: f64) -> String {
    if p < 0.001 {
        "<0.001".to_string()
    } else {
        format!("{p:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsoak_record::result::RunStatus;

    #[test]
    fn a_result_without_floor_runs_shows_nothing() {
        assert_eq!(render(&rtsoak_testing::fixture::two_round_doc()), "");
    }

    #[test]
    fn every_transport_gets_its_figures_and_a_line_that_says_how_far_above_its_floor() {
        let mut doc = rtsoak_testing::fixture::one_run_doc();
        let mut floor = doc.runs[0].clone();
        for series in floor.series.values_mut() {
            rtsoak_testing::fixture::scale(&mut series.summary, 0.8);
        }
        doc.floor_runs = vec![floor];
        let text = render(&doc);
        assert!(text.contains("The harness against its floor"), "{text}");
        for figure in ["delivery", "send_call", "timer"] {
            assert!(text.contains(figure), "{figure}: {text}");
        }
        assert!(
            text.contains("eventfd: harness delivery p99 1.25x its floor (+25 %; 1 round(s))"),
            "{text}"
        );
        assert!(
            text.contains("one round: the floor's own spread is unknown; run --rounds 5"),
            "{text}"
        );
        assert!(
            text.lines()
                .all(|line| line.len() <= super::super::headline::WIDEST)
        );
    }

    /// The one-run fixture in three rounds, the harness's delivery p99 at `harness_p99_ns`
    /// each round and the floor's at `floor_p99_ns` in turn.
    fn three_rounds(harness_p99_ns: u64, floor_p99_ns: [u64; 3]) -> ResultDoc {
        let mut doc = rtsoak_testing::fixture::one_run_doc();
        let delivery = rtsoak_record::SeriesKey::Rt(rtsoak_record::Series::Delivery);
        let run = doc.runs[0].clone();
        let in_round = |round: u32, p99_ns: u64| {
            let mut run = run.clone();
            run.round = round;
            let summary = &mut run.series.get_mut(&delivery).unwrap().summary;
            rtsoak_testing::fixture::set_p99(summary, p99_ns);
            run
        };
        doc.runs = (1..=3)
            .map(|round| in_round(round, harness_p99_ns))
            .collect();
        doc.floor_runs = (1..=3)
            .map(|round| in_round(round, floor_p99_ns[round as usize - 1]))
            .collect();
        doc
    }

    #[test]
    fn a_difference_inside_the_floors_own_spread_is_not_called_the_harnesss() {
        // Median floor 30 us, harness 40 us: 1.33x, but the floor itself reached 60 us.
        let text = render(&three_rounds(40_000, [30_000, 20_000, 60_000]));
        assert!(
            text.contains("1.33x its floor (+33 %; 3 round(s))"),
            "{text}"
        );
        assert!(
            text.contains(
                "inside the floor's own p99 spread over the rounds (20.0-60.0 us): not \
                 told apart from it here"
            ),
            "{text}"
        );
        let text = render(&three_rounds(70_000, [30_000, 20_000, 60_000]));
        assert!(
            text.contains("outside the floor's own p99 spread over the rounds (20.0-60.0 us)"),
            "{text}"
        );
        assert!(!text.contains("not told apart"), "{text}");
        assert!(
            text.lines()
                .all(|line| line.len() <= super::super::headline::WIDEST)
        );
    }

    #[test]
    fn a_floor_run_whose_histogram_does_not_decode_is_shown_as_dashes_with_the_reason() {
        let mut doc = rtsoak_testing::fixture::one_run_doc();
        let mut floor = doc.runs[0].clone();
        let delivery = rtsoak_record::SeriesKey::Rt(rtsoak_record::Series::Delivery);
        floor.series.get_mut(&delivery).unwrap().histogram = "not base64!".to_string();
        doc.floor_runs = vec![floor];
        let text = render(&doc);
        let line = text
            .lines()
            .find(|l| l.starts_with("eventfd") && l.contains("delivery"))
            .unwrap_or_else(|| panic!("{text}"));
        assert_eq!(
            line.split_whitespace().filter(|c| *c == "-").count(),
            9,
            "{line}"
        );
        assert!(
            text.contains(
                "eventfd delivery: the floor's round 1 run: its histogram does not decode: shown \
                 as -"
            ),
            "{text}"
        );
        assert!(
            text.contains("eventfd: no delivery figure: the floor's round 1 run"),
            "{text}"
        );
        assert!(
            text.contains("send_call") && text.contains("timer"),
            "{text}"
        );
    }

    #[test]
    fn a_floor_run_that_failed_leaves_no_figure_and_says_so() {
        let mut doc = rtsoak_testing::fixture::one_run_doc();
        let mut floor = doc.runs[0].clone();
        floor.status = RunStatus::Failed;
        doc.floor_runs = vec![floor];
        let text = render(&doc);
        assert!(
            text.contains("no round where both sides completed"),
            "{text}"
        );
        assert!(
            text.contains("eventfd: no delivery figure on both sides; 1 round(s) unpaired"),
            "{text}"
        );
    }
}
