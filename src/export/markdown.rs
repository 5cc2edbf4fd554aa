//! The comparison table as GitHub Markdown: the same cells as the terminal table, for an issue,
//! a pull request or a wiki page.

use std::fmt::Write;

use super::comparison::{TEXT_COLUMNS, comparison};
use super::table::round_header;
use crate::result::ResultDoc;

/// Render `doc` as Markdown.
pub fn render(doc: &ResultDoc) -> String {
    let c = comparison(doc);
    let mut out = String::new();
    let _ = writeln!(out, "{}\n", escape(&c.title));
    table(&mut out, &c.header, &c.rows);
    if !c.round_rows.is_empty() {
        let _ = writeln!(out, "\nPer round:\n");
        table(&mut out, &round_header(&c), &c.round_rows);
    }
    if !c.notes.is_empty() {
        let _ = writeln!(out);
        for note in &c.notes {
            let _ = writeln!(out, "- {}", escape(note));
        }
    }
    if !c.caveats.is_empty() {
        let _ = writeln!(out, "\nWhat these figures are worth:\n");
        for caveat in &c.caveats {
            let _ = writeln!(out, "- {}", escape(caveat));
        }
    }
    out
}

fn table(out: &mut String, header: &[String], rows: &[Vec<String>]) {
    let line = |cells: Vec<String>| format!("| {} |", cells.join(" | "));
    let _ = writeln!(out, "{}", line(header.iter().map(|h| escape(h)).collect()));
    let rule = (0..header.len())
        .map(|i| if i < TEXT_COLUMNS { "---" } else { "---:" }.to_string())
        .collect();
    let _ = writeln!(out, "{}", line(rule));
    for row in rows {
        let _ = writeln!(out, "{}", line(row.iter().map(|c| escape(c)).collect()));
    }
}

/// Keep a cell's text from being read as Markdown syntax.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        if matches!(ch, '|' | '*' | '_' | '`' | '<' | '>' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::fixture::two_round_doc;

    #[test]
    fn the_comparison_renders_as_markdown_tables() {
        insta::assert_snapshot!(render(&two_round_doc()));
    }

    #[test]
    fn pipes_and_markup_in_cells_are_escaped() {
        assert_eq!(escape("a|b_c>d"), "a\\|b\\_c\\>d");
    }
}
