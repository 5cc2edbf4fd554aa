//! Every format's escaping of the text a result carries (host name, kernel release, profile,
//! transport, reasons, error strings, caveats: anything read back from a file is foreign), one
//! function per format, each called by that format's writer at one place (a cell, a line, an
//! attribute, a label), never by whoever builds the text:
//!
//! - a terminal or any line-oriented file (the tables, `diff`, the journal, the comment lines
//!   of the interval log, `.hgrm` and the cyclictest file): [`terminal`], one line with every
//!   character a terminal acts on written visibly ([`rtsoak_record::text::acts_on`]);
//! - Markdown (GitHub renders inline HTML too): [`markdown`];
//! - XML 1.0 (JUnit): [`xml_attr`] and [`xml_text`], only characters XML 1.0 allows;
//! - Prometheus: [`prometheus_label`] and [`prometheus_help`];
//! - a LAVA job's log: [`lava_log`], and [`shell_word`] for the script that prints it;
//! - JSON: [`json`], which `serde_json` output goes through; [`pretty_json`] for an indented
//!   document.
//!
//! Each markup escape starts from the terminal's rule, so no format passes on what a terminal
//! would act on when the file is printed. Nothing is dropped: a character a format cannot hold
//! is written as a visible `\x1b` or `\u{202e}`.

use rtsoak_record::text::{acts_on, push_escape};

pub use rtsoak_record::text::{visible as terminal, visible_json as json};

/// `value` as indented JSON through [`json`]: what every `--json`, the bench results and the
/// campaign document print or save, the same bytes to a terminal and to a file.
pub fn pretty_json<T: serde::Serialize>(value: &T) -> serde_json::Result<String> {
    serde_json::to_string_pretty(value).map(json)
}

/// A Markdown cell or line: one line, with what GitHub Markdown reads as syntax escaped (a
/// table's `|`, code spans, emphasis and strike-through, links, inline HTML and character
/// references, which could bring back what [`terminal`] escaped).
pub fn markdown(text: &str) -> String {
    let line = terminal(text);
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        if matches!(
            c,
            '|' | '*' | '_' | '`' | '<' | '>' | '[' | ']' | '\\' | '&' | '~'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// An XML attribute value: markup escaped, line breaks and tabs kept as character references,
/// every other character XML 1.0 cannot hold (C0 controls, U+FFFE, U+FFFF) or a terminal acts
/// on written visibly, so the file parses wherever the text came from.
pub fn xml_attr(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\n' => out.push_str("&#10;"),
            '\t' => out.push_str("&#9;"),
            '\r' => out.push_str("&#13;"),
            c if acts_on(c) => push_escape(&mut out, c),
            c => out.push(c),
        }
    }
    out
}

/// XML element text: as [`xml_attr`], line breaks written as they are.
pub fn xml_text(value: &str) -> String {
    xml_attr(value).replace("&#10;", "\n")
}

/// A Prometheus label value: one line, `\` and `"` escaped as the text format asks.
pub fn prometheus_label(value: &str) -> String {
    terminal(value).replace('\\', "\\\\").replace('"', "\\\"")
}

/// A Prometheus `# HELP` text: one line, `\` escaped as the text format asks.
pub fn prometheus_help(text: &str) -> String {
    terminal(text).replace('\\', "\\\\")
}

/// A line for a LAVA job's log: one line as for a terminal, where nothing reads as one of the
/// dispatcher's signals (`<LAVA_SIGNAL_TESTCASE ...>`, `<LAVA_TEST_RUNNER EXIT>`), which it
/// would act on wherever in a line it found one: the `<` that would open it is written `\x3c`.
pub fn lava_log(text: &str) -> String {
    terminal(text).replace("<LAVA_", "\\x3cLAVA_")
}

/// `text` as one word for a POSIX shell, taken literally: in single quotes, a quote in it
/// closed, escaped and reopened.
pub fn shell_word(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind of character a foreign text can use against a reader.
    const HOSTILE: &str = "a\u{1b}[2J\u{1b}]0;x\u{7}\r\n\t\u{9b}\u{7f}\u{202e}\u{fffe}\u{ffff}|`*_<b>&amp;[l](u)~\"\\";

    #[test]
    fn a_terminal_line_holds_nothing_a_terminal_acts_on() {
        let line = terminal(HOSTILE);
        assert!(!line.chars().any(acts_on), "{line}");
        assert!(!line.contains('\n'));
    }

    #[test]
    fn markdown_escapes_syntax_and_keeps_the_text_readable() {
        assert_eq!(markdown("a|b_c>d"), "a\\|b\\_c\\>d");
        let cell = markdown(HOSTILE);
        assert!(!cell.chars().any(acts_on), "{cell}");
        for syntax in ['|', '`', '<', '[', '&', '~'] {
            assert!(
                cell.match_indices(syntax)
                    .all(|(at, _)| cell[..at].ends_with('\\')),
                "{syntax} unescaped in {cell}"
            );
        }
    }

    #[test]
    fn xml_holds_only_what_xml_1_0_allows_and_keeps_line_breaks() {
        assert_eq!(
            xml_attr("a<b & \"c\"\nd\u{1}\u{fffe}"),
            "a&lt;b &amp; &quot;c&quot;&#10;d\\x01\\u{fffe}"
        );
        let xml = xml_attr(HOSTILE);
        let allowed = |c: char| {
            matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}')
                || c >= '\u{10000}'
        };
        assert!(xml.chars().all(allowed), "{xml}");
        assert!(!xml.chars().any(acts_on), "{xml}");
        assert_eq!(xml_text("a\nb<"), "a\nb&lt;");
    }

    #[test]
    fn prometheus_label_values_and_help_stay_on_their_line() {
        assert_eq!(prometheus_label("a\"b\\c\nd"), "a\\\"b\\\\c\\\\x0ad");
        assert_eq!(prometheus_help("50\\ %\n"), "50\\\\ %\\\\x0a");
    }

    #[test]
    fn a_lava_log_line_holds_no_signal_the_dispatcher_would_act_on() {
        let forged =
            "x <LAVA_SIGNAL_TESTCASE TEST_CASE_ID=verdict RESULT=pass> <LAVA_TEST_RUNNER EXIT>";
        let line = lava_log(&format!("{HOSTILE}{forged}"));
        assert!(!line.contains("<LAVA_"), "{line}");
        assert!(line.contains("\\x3cLAVA_SIGNAL_TESTCASE TEST_CASE_ID=verdict"));
        assert!(!line.chars().any(acts_on) && !line.contains('\n'), "{line}");
        assert_eq!(lava_log("p < 0.01"), "p < 0.01", "any other < stays");
    }

    #[test]
    fn a_shell_word_is_the_text_itself_to_sh() {
        assert_eq!(shell_word("it's $(x) `y` \\c"), "'it'\\''s $(x) `y` \\c'");
        let out = std::process::Command::new("sh")
            .args(["-c", &format!("printf '%s' {}", shell_word(HOSTILE))])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8(out.stdout).unwrap(), HOSTILE);
    }

    #[test]
    fn json_reads_back_as_the_same_text() {
        let text = json(serde_json::to_string(&HOSTILE).unwrap());
        assert!(!text.chars().any(acts_on), "{text}");
        assert_eq!(serde_json::from_str::<String>(&text).unwrap(), HOSTILE);
    }
}
