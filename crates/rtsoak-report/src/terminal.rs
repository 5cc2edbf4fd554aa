//! What `run` and `compare` print on a terminal: the headline view, and with `--details` every
//! other table after it.

use super::headline::{NARROWEST, WIDEST};
use super::{details, headline};
use rtsoak_record::result::ResultDoc;

/// What a terminal of `columns` columns gets (`None`: its width is unknown, as for a file or a
/// pipe): the headline view, as wide as the terminal but never wider than 100 columns nor
/// narrower than 80, its advice naming rtsoak as `rtsoak` (the command the reader types:
/// `rtsoak`, `cargo run --release --`), and with `details` every other table after it.
pub fn render(doc: &ResultDoc, details: bool, columns: Option<usize>, rtsoak: &str) -> String {
    let width = columns.map_or(NARROWEST, |columns| columns.clamp(NARROWEST, WIDEST));
    let mut text = headline::render(doc, width, rtsoak);
    if details {
        text.push_str("\nDetails:\n");
        text.push_str(&details::render(doc));
    }
    text
}
