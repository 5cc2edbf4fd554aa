//! docs/result-schema.md names every field a real result holds: each key of the saved real
//! results in tests/fixtures/results/ appears on the page in backquotes, alone or as a part of
//! a dotted path (`plan.abi.doorbell.msg_command`). `system_check` is left out here: its
//! fields are the system check's own, and docs/system-check.md describes them.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

mod common;
use common::documented_words;

/// Paths of the keys in `value` whose own name is not in `documented`.
fn undocumented(value: &Value, path: &str, documented: &BTreeSet<String>, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                if path.is_empty() && key == "system_check" {
                    continue;
                }
                // Keys that are data, not field names: CPU numbers, `<transport>/<series>`.
                let data = key.chars().all(|c| c.is_ascii_digit()) || key.contains('/');
                if !data && !documented.contains(key) {
                    out.push(format!("{path}.{key}"));
                }
                undocumented(child, &format!("{path}.{key}"), documented, out);
            }
        }
        Value::Array(items) => {
            for item in items {
                undocumented(item, &format!("{path}[]"), documented, out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_field_of_the_saved_real_results_is_documented_in_the_result_schema() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/result-schema.md")).unwrap();
    let documented = documented_words(&page);
    let mut missing = Vec::new();
    let fixtures = root.join("tests/fixtures/results");
    for entry in std::fs::read_dir(&fixtures).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let doc: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            undocumented(&doc, "", &documented, &mut missing);
        }
    }
    missing.sort();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "docs/result-schema.md does not name these fields: {missing:#?}"
    );
}

#[test]
fn the_fields_of_a_ring_setup_comparison_are_documented_too() {
    // No saved fixture compares ring setups; these appear only where one did.
    let page = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/result-schema.md"),
    )
    .unwrap();
    for field in ["plan.ring_setup_variants", "ring_setup_requested"] {
        assert!(page.contains(&format!("`{field}`")), "{field}");
    }
}
