//! The comparison table for a terminal: aligned columns, one row per transport (rounds merged),
//! one row per run when there were several rounds, then notes and caveats. What `run` and
//! `compare` print, and what `rtsoak report` prints from the saved result, byte for byte.

use std::fmt::Write;

use super::comparison::{Comparison, RUNS_COLUMN, TEXT_COLUMNS, comparison};
use crate::result::ResultDoc;

/// Render `doc` as the terminal comparison table.
pub fn render(doc: &ResultDoc) -> String {
    let c = comparison(doc);
    let mut out = String::new();
    let _ = writeln!(out, "{}", c.title);
    lay_out(&mut out, &c.header, &c.rows);
    if !c.round_rows.is_empty() {
        let _ = writeln!(out, "Per round:");
        lay_out(&mut out, &round_header(&c), &c.round_rows);
    }
    for note in &c.notes {
        let _ = writeln!(out, "{note}");
    }
    if !c.caveats.is_empty() {
        let _ = writeln!(out, "What these figures are worth:");
        for caveat in &c.caveats {
            let _ = writeln!(out, "  - {caveat}");
        }
    }
    out
}

/// The header of the per-round table.
pub(super) fn round_header(c: &Comparison) -> Vec<String> {
    let mut header = c.header.clone();
    header[RUNS_COLUMN] = "round".to_string();
    header
}

fn lay_out(out: &mut String, header: &[String], rows: &[Vec<String>]) {
    let all: Vec<&[String]> = std::iter::once(header)
        .chain(rows.iter().map(Vec::as_slice))
        .collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|c| all.iter().map(|r| r[c].len()).max().unwrap_or(0))
        .collect();
    for row in all {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (cell, width))| {
                if i < TEXT_COLUMNS {
                    format!("{cell:<width$}")
                } else {
                    format!("{cell:>width$}")
                }
            })
            .collect();
        let _ = writeln!(out, "{}", cells.join("  ").trim_end());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::fixture::{one_run_doc, two_round_doc};

    #[test]
    fn a_two_round_comparison_renders_merged_and_per_round_rows() {
        insta::assert_snapshot!(render(&two_round_doc()));
    }

    #[test]
    fn a_single_run_has_no_per_round_table() {
        let text = render(&one_run_doc());
        assert!(!text.contains("Per round:"), "{text}");
        insta::assert_snapshot!(text);
    }
}
