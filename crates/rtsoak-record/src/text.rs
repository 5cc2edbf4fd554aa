//! Text another user controls (a lock holder's command line, a process name from /proc, a trace
//! line's `comm`, a profile's own bytes, every text of a result read back from a file), made safe
//! to print on root's terminal or in a log: every character a terminal or a text renderer acts on
//! instead of showing becomes a visible escape, so no escape sequence reaches the terminal raw,
//! and long text is cut, so a profile with one 100 MB line cannot flood stderr.
//!
//! Owns: the one rule of which characters are acted on ([`acts_on`]) and how one is written
//! visibly ([`push_escape`]); every format's own escaping (Markdown, XML, Prometheus, JSON) starts
//! from it. Never drops a character silently: what is cut is counted.

use std::borrow::Cow;
use std::fmt::Write;

/// How much foreign text one message quotes before cutting it.
pub(crate) const QUOTE_MAX_BYTES: usize = 200;

/// `text` with every character a terminal acts on ([`acts_on`]) and the backslash written as a
/// `\x1b`-style escape; borrowed when there is nothing to escape. For foreign text quoted where
/// it is read: the backslash is escaped too, so an escape already in the text is told apart from
/// one this function wrote.
pub fn printable(text: &str) -> Cow<'_, str> {
    escaped(text, |c| acts_on(c) || c == '\\')
}

/// `text` on one line with every character a terminal acts on ([`acts_on`], line breaks among
/// them) written visibly; backslashes are kept, so text [`printable`] already escaped (a `comm`
/// saved in a result) shows as it was saved, and applying it twice changes nothing. What every
/// line a format writes goes through.
pub fn visible(text: &str) -> Cow<'_, str> {
    escaped(text, acts_on)
}

/// [`visible`] for text of several lines (a profile shown whole, an error whose context spans
/// lines): line feeds and tabs are kept, everything else a terminal acts on is escaped.
pub fn visible_lines(text: &str) -> Cow<'_, str> {
    escaped(text, |c| acts_on(c) && c != '\n' && c != '\t')
}

/// JSON text (as `serde_json` writes it) with every character a terminal acts on that JSON lets
/// stand raw in a string (DEL, C1, the bidirectional and zero-width controls, the line and
/// paragraph separators, U+FFFE and U+FFFF) written as a `\uXXXX` escape: the same document to
/// any JSON reader, and nothing a terminal acts on when it is printed. (`serde_json` escapes
/// C0 in strings itself, so a C0 character in its output is the layout's own line break; none
/// of the others can stand outside a string.)
pub fn visible_json(json: String) -> String {
    let in_string = |c: char| acts_on(c) && c >= '\u{7f}';
    if !json.chars().any(in_string) {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if in_string(c) {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

/// True for a character a terminal or a text renderer acts on instead of showing it: every
/// control character (C0 with ESC, CR, BEL and the line feed, DEL, C1 `U+0080..=U+009F`, which
/// some terminals read as CSI), the bidirectional controls that reorder what follows them (a
/// line that reads backwards), the zero-width characters and the word joiner (text that hides
/// text), the line and paragraph separators, and the noncharacters U+FFFE and U+FFFF (which
/// XML 1.0 cannot hold).
pub fn acts_on(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{206f}'
                | '\u{feff}'
                | '\u{fffe}'
                | '\u{ffff}'
        )
}

/// Write `c` visibly: `\x1b` up to U+00FF, `\u{202e}` above.
pub fn push_escape(out: &mut String, c: char) {
    let code = c as u32;
    let _ = if code <= 0xff {
        write!(out, "\\x{code:02x}")
    } else {
        write!(out, "\\u{{{code:04x}}}")
    };
}

/// `text` with the characters `escape` picks written by [`push_escape`]; borrowed when there
/// is none.
fn escaped(text: &str, escape: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(&escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if escape(c) {
            push_escape(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `text` with anything but ASCII letters, digits and the characters of `kept` replaced by `_`:
/// a name from a result file that becomes part of a file name, a test id, a tag or a label, so
/// that a hand-edited result cannot name a path or break the format.
pub fn restricted(text: &str, kept: &[char]) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || kept.contains(&c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Like [`printable`], for bytes that may not be UTF-8 (a `/proc/PID/cmdline`): invalid bytes
/// are escaped as `\xNN` too.
pub fn printable_bytes(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        out.push_str(&printable(chunk.valid()));
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// [`printable`], cut to about [`QUOTE_MAX_BYTES`] with `…(N more bytes)` saying how much was
/// left out: for quoting foreign text inside a message.
pub fn quote(text: &str) -> String {
    if text.len() <= QUOTE_MAX_BYTES {
        return printable(text).into_owned();
    }
    let mut cut = QUOTE_MAX_BYTES;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!(
        "{}…({} more bytes)",
        printable(&text[..cut]),
        text.len() - cut
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        assert!(matches!(
            printable("rtsoak run -t eventfd"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn escapes_bells_carriage_returns_and_c1_become_visible() {
        assert_eq!(
            printable("a\x1b[31mred\r\x07\u{9b}b\\"),
            "a\\x1b[31mred\\x0d\\x07\\x9bb\\x5c"
        );
        assert_eq!(printable_bytes(b"x\xff\x1b"), "x\\xff\\x1b");
    }

    #[test]
    fn text_that_reorders_or_hides_text_is_escaped_too() {
        assert_eq!(
            printable("ok\u{202e}LIAF\u{200b}\u{2028}\u{fffe}"),
            "ok\\u{202e}LIAF\\u{200b}\\u{2028}\\u{fffe}"
        );
        assert_eq!(
            printable("é中\u{1f600}"),
            "é中\u{1f600}",
            "other text is shown as it is"
        );
    }

    #[test]
    fn visible_text_keeps_backslashes_so_escaping_twice_changes_nothing() {
        let once = visible("a\\x1b b\x1b[2J\n");
        assert_eq!(once, "a\\x1b b\\x1b[2J\\x0a");
        assert_eq!(visible(&once), once);
        assert_eq!(
            visible_lines("line\tone\n\x1b]0;title\x07\r"),
            "line\tone\n\\x1b]0;title\\x07\\x0d"
        );
    }

    #[test]
    fn json_keeps_its_meaning_and_loses_what_a_terminal_acts_on() {
        // As serde_json writes `host<CSI>31m<DEL><RLO><ESC>`: ESC escaped already.
        let json = "{\"host\":\"host\u{9b}31m\u{7f}\u{202e}\\u001b\"}".to_string();
        assert_eq!(
            visible_json(json),
            r#"{"host":"host\u009b31m\u007f\u202e\u001b"}"#
        );
        let plain = "{\n  \"transport\": \"futex\",\n  \"kernel\": \"6.12.0-rt5 é\"\n}".to_string();
        assert_eq!(visible_json(plain.clone()), plain);
    }

    #[test]
    fn a_long_quote_is_cut_and_says_how_much_is_left_out() {
        let long = "é".repeat(1000);
        let quoted = quote(&long);
        assert!(quoted.len() < 300, "{}", quoted.len());
        assert!(quoted.ends_with("…(1800 more bytes)"), "{quoted}");
    }
}
