//! The result document as JSON: exactly what `result.json` holds (`docs/result-schema.md`).

use rtsoak_record::result::ResultDoc;
use rtsoak_record::text::visible_json;

/// Render `doc` as compact JSON (one line) with a trailing newline, exactly as the result file is
/// saved. Compact because indentation was half of the file: a default comparison's outlier
/// lists alone took 1.0 MB pretty and 0.5 MB compact. `jq .` shows it indented; any JSON
/// reader, `report` and `diff` included, reads pretty files from earlier versions the same.
/// Nothing a terminal acts on stands raw in it ([`visible_json`]), so printing it is safe.
pub fn render(doc: &ResultDoc) -> Vec<u8> {
    let text = serde_json::to_string(doc).expect("a result document always serializes to JSON");
    let mut bytes = visible_json(text).into_bytes();
    bytes.push(b'\n');
    bytes
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
