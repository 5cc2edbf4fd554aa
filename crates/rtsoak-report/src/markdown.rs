//! A result as GitHub Markdown, for an issue, a pull request or a wiki page: the headline view
//! ([`super::headline::markdown`]), then the details with the same cells as the terminal's.

use std::fmt::Write;

use super::comparison::{TEXT_COLUMNS, Table, comparison};
use crate::escape::markdown as escape;
use rtsoak_record::result::ResultDoc;

/// Render `doc` as Markdown.
pub(crate) fn render(doc: &ResultDoc) -> String {
    let c = comparison(doc);
    let mut out = super::headline::markdown(doc);
    let _ = writeln!(out, "\n## Details\n");
    let _ = writeln!(out, "{}", escape(&c.title));
    table(&mut out, &c.integrity);
    bullets(&mut out, &c.problems);
    for series in &c.series {
        table(&mut out, series);
    }
    if let Some((heading, pairs)) = c.differences.split_first() {
        let _ = writeln!(out, "\n{}", escape(heading));
        bullets(&mut out, pairs);
    }
    if let Some((heading, causes)) = c.causes.split_first() {
        let _ = writeln!(out, "\n{}", escape(heading));
        let causes: Vec<String> = causes.iter().map(|c| c.trim().to_string()).collect();
        bullets(&mut out, &causes);
    }
    if let Some(rounds) = &c.rounds {
        table(&mut out, rounds);
    }
    if let Some((heading, lines)) = c.legend.split_first() {
        let _ = writeln!(out, "\n{}", escape(heading));
        bullets(&mut out, lines);
    }
    if !c.caveats.is_empty() {
        let _ = writeln!(out, "\nWhat these figures are worth:");
        bullets(&mut out, &c.caveats);
    }
    out
}

/// A bullet list after a blank line; nothing when there are no items.
pub(super) fn bullets(out: &mut String, items: &[String]) {
    if items.is_empty() {
        return;
    }
    let _ = writeln!(out);
    for item in items {
        let _ = writeln!(out, "- {}", escape(item.trim_start()));
    }
}

/// A table after a blank line: its heading, a blank line, then the table itself.
pub(super) fn table(out: &mut String, table: &Table) {
    let _ = writeln!(out, "\n{}\n", escape(&table.heading));
    header_and_rows(out, &table.header, &table.rows);
}

/// The lines of a Markdown table: the header, the rule (text columns left-aligned, figures
/// right-aligned), the rows; every cell escaped.
pub(super) fn header_and_rows(out: &mut String, header: &[String], rows: &[Vec<String>]) {
    let line = |cells: Vec<String>| format!("| {} |", cells.join(" | "));
    let escaped = |cells: &[String]| line(cells.iter().map(|c| escape(c)).collect());
    let _ = writeln!(out, "{}", escaped(header));
    let rule = (0..header.len())
        .map(|i| if i < TEXT_COLUMNS { "---" } else { "---:" }.to_string())
        .collect();
    let _ = writeln!(out, "{}", line(rule));
    for row in rows {
        let _ = writeln!(out, "{}", escaped(row));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsoak_testing::fixture::two_round_doc;

    #[test]
    fn the_comparison_renders_as_markdown_tables() {
        insta::assert_snapshot!(render(&two_round_doc()));
    }
}
