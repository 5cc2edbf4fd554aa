//! The result document as JSON: exactly what `result.json` holds (`docs/result-schema.md`).

use rtsoak_record::result::ResultDoc;

/// Render `doc` as compact JSON with a trailing newline, as the result file is saved.
pub fn render(doc: &ResultDoc) -> Vec<u8> {
    crate::result::store::to_json(doc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsoak_testing::fixture::two_round_doc;

    #[test]
    fn the_json_reads_back_as_the_same_document() {
        let doc = two_round_doc();
        let back: ResultDoc = serde_json::from_slice(&render(&doc)).unwrap();
        assert_eq!(back, doc);
    }
}
