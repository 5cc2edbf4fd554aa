//! What `run` and `compare` print on a terminal: the headline view, and with `--details` every
//! other table after it.

use super::{details, headline};
use rtsoak_record::result::ResultDoc;

/// What a terminal gets: the headline view, and with `details` every other table after it.
pub fn render(doc: &ResultDoc, details: bool) -> String {
    let mut text = headline::render(doc);
    if details {
        text.push_str("\nDetails:\n");
        text.push_str(&details::render(doc));
    }
    text
}
