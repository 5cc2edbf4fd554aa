//! Text another user controls (a lock holder's command line, a process name from /proc, a trace
//! line's `comm`, a profile's own bytes), made safe to print on root's terminal or in a log:
//! control characters become visible escapes, so no escape sequence reaches the terminal raw,
//! and long text is cut, so a profile with one 100 MB line cannot flood stderr.
//!
//! Owns: the one escaping rule. Never drops a character silently: what is cut is counted.

use std::borrow::Cow;

/// How much foreign text one message quotes before cutting it.
pub(crate) const QUOTE_MAX_BYTES: usize = 200;

/// `text` with every control character (C0, DEL, C1 `U+0080..=U+009F`, ESC among them) and the
/// backslash written as a `\x1b`-style escape; borrowed when there is nothing to escape.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if needs_escape(c) {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
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

/// Control characters, and the backslash (so an escape already in the text is told apart from
/// one this function wrote).
fn needs_escape(c: char) -> bool {
    c.is_control() || c == '\\'
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
    fn a_long_quote_is_cut_and_says_how_much_is_left_out() {
        let long = "é".repeat(1000);
        let quoted = quote(&long);
        assert!(quoted.len() < 300, "{}", quoted.len());
        assert!(quoted.ends_with("…(1800 more bytes)"), "{quoted}");
    }
}
