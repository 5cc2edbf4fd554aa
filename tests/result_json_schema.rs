//! docs/result.schema.json (JSON Schema draft 2020-12) describes result.json exactly, and these
//! tests hold it to what the Rust types write: every saved real result and every result this
//! build writes (run and compare, with and without noise, a ring-setup comparison, an explained
//! run) validates; a key the schema does not know, a missing required key or a value of the
//! wrong type is rejected, so a field added to, removed from or re-typed in the result types
//! without a schema change fails here. docs/result-schema.md names every property the schema
//! holds, and the schema holds every field the page's tables name, so the two documents cannot
//! drift.

mod common;
use common::documented_words;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use jsonschema::Validator;
use serde_json::{Value, json};

use common::{rtsoak, serial};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn schema() -> Value {
    let text = std::fs::read_to_string(root().join("docs/result.schema.json")).unwrap();
    serde_json::from_str(&text).expect("docs/result.schema.json is JSON")
}

/// A draft 2020-12 validator for `schema` that checks `format` (date-time) too.
fn validator(schema: &Value) -> Validator {
    jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(schema)
        .expect("docs/result.schema.json compiles")
}

/// The schema as today's rtsoak writes results: the properties older version 2 results lack
/// but this build always writes (`x-rtsoak-always-written`) are required too.
fn written_today(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => {
            let mut out: serde_json::Map<String, Value> = map
                .iter()
                .map(|(key, value)| (key.clone(), written_today(value)))
                .collect();
            if let Some(Value::Array(always)) = map.get("x-rtsoak-always-written") {
                let required = out
                    .entry("required")
                    .or_insert_with(|| json!([]))
                    .as_array_mut()
                    .unwrap();
                required.extend(always.iter().cloned());
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(written_today).collect()),
        other => other.clone(),
    }
}

/// Each error as `instance path: message`, empty when `doc` is valid.
fn errors(validator: &Validator, doc: &Value) -> Vec<String> {
    validator
        .iter_errors(doc)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

fn assert_valid(validator: &Validator, doc: &Value, what: &str) {
    let errors = errors(validator, doc);
    assert!(
        errors.is_empty(),
        "{what} does not match docs/result.schema.json:\n{}",
        errors[..errors.len().min(20)].join("\n")
    );
}

/// Every JSON file in the repository's fixture and seed trees that is a soak result (an object
/// with `schema_version` and `runs`), sorted.
fn saved_results() -> Vec<(PathBuf, Value)> {
    fn walk(dir: &Path, out: &mut Vec<(PathBuf, Value)>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "json") {
                let Ok(doc) = serde_json::from_slice::<Value>(&std::fs::read(&path).unwrap())
                else {
                    continue;
                };
                if doc.get("schema_version").is_some() && doc.get("runs").is_some() {
                    out.push((path, doc));
                }
            }
        }
    }
    let mut out = Vec::new();
    for dir in [
        "tests/fixtures",
        "fuzz/seeds",
        "analysis",
        "bench",
        "lava",
        "docs",
    ] {
        walk(&root().join(dir), &mut out);
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn fixture(name: &str) -> Value {
    let path = root().join("tests/fixtures/results").join(name);
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn the_schema_is_valid_draft_2020_12() {
    let schema = schema();
    assert_eq!(
        schema["$schema"], "https://json-schema.org/draft/2020-12/schema",
        "the schema names its draft"
    );
    if let Err(error) = jsonschema::draft202012::meta::validate(&schema) {
        panic!(
            "docs/result.schema.json is not a valid draft 2020-12 schema: {}: {error}",
            error.instance_path()
        );
    }
    validator(&schema);
    validator(&written_today(&schema));
}

/// Paths of the property schemas in `schema` that have no `description`.
fn undescribed(schema: &Value, path: &str, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::Object(properties)) = map.get("properties") {
                for (name, property) in properties {
                    if property.get("description").is_none() {
                        out.push(format!("{path}/properties/{name}"));
                    }
                }
            }
            for (key, child) in map {
                undescribed(child, &format!("{path}/{key}"), out);
            }
        }
        Value::Array(items) => {
            for (n, item) in items.iter().enumerate() {
                undescribed(item, &format!("{path}/{n}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_field_of_the_schema_says_what_it_means() {
    let mut missing = Vec::new();
    undescribed(&schema(), "#", &mut missing);
    assert!(missing.is_empty(), "no description: {missing:#?}");
}

#[test]
fn every_saved_version_2_or_3_result_validates_as_saved_and_as_this_build_reads_it() {
    let validator = validator(&schema());
    let results = saved_results();
    let readable = |doc: &Value| doc["schema_version"] == 2 || doc["schema_version"] == 3;
    assert!(
        results.iter().filter(|(_, doc)| readable(doc)).count() >= 3,
        "the saved real results in tests/fixtures/results/ were not found"
    );
    for (path, doc) in &results {
        let what = path.strip_prefix(root()).unwrap().display().to_string();
        if readable(doc) {
            assert_valid(&validator, doc, &what);
            // Read (a version 2 sentence becomes its cause) and saved again, as version 3.
            let read = rtsoak::store::from_bytes(&serde_json::to_vec(doc).unwrap()).unwrap();
            let saved: Value = serde_json::from_slice(&rtsoak_report::json::render(&read)).unwrap();
            assert_eq!(saved["schema_version"], 3, "{what}");
            assert_valid(&validator, &saved, &format!("{what}, read and saved"));
        } else {
            // The schema describes versions 2 and 3 only; a version 1 result is read by
            // rtsoak's loader, which upgrades it, never by this schema.
            let errors = errors(&validator, doc);
            assert!(
                errors.iter().any(|e| e.starts_with("/schema_version:")),
                "{what} (version {}) is not refused for its schema_version: {errors:#?}",
                doc["schema_version"]
            );
        }
    }
}

#[test]
fn a_result_that_waited_for_its_cpus_validates_and_reads_back() {
    use rtsoak_record::{CpuHolder, CpuHolderRole, CpuWait};
    let validator = validator(&schema());
    let holder = |role, pid: Option<u32>| CpuHolder {
        role,
        cpus: vec![4, 5],
        pid,
        uid: pid.map(|_| 0),
        command: pid.map(|_| "rtsoak compare --profile nightly \\x1b[2J".to_string()),
    };
    let wait = CpuWait {
        waited_ns: 840_000_000_000,
        queue_position: 2,
        waited_behind: vec![
            holder(CpuHolderRole::Holding, Some(4711)),
            holder(CpuHolderRole::Queued, None),
        ],
    };
    let mut doc = rtsoak::store::from_bytes(
        &serde_json::to_vec(&fixture("explained-6.12-rt-vm.json")).unwrap(),
    )
    .unwrap();
    doc.cpu_wait = Some(wait.clone());
    let saved: Value = serde_json::from_slice(&rtsoak_report::json::render(&doc)).unwrap();
    assert_valid(&validator, &saved, "a result with cpu_wait");
    let read = rtsoak::store::from_bytes(&serde_json::to_vec(&saved).unwrap()).unwrap();
    assert_eq!(read.cpu_wait, Some(wait));
    let mut unknown_role = saved.clone();
    unknown_role["cpu_wait"]["waited_behind"][0]["role"] = json!("waiting");
    assert!(!errors(&validator, &unknown_role).is_empty());
}

/// One change to a valid result that makes it invalid.
enum Edit {
    /// A key the schema does not know, added at this pointer.
    Add(String, Value),
    /// A key the schema requires, removed.
    Remove(String),
    /// A value of the wrong type or outside its enum.
    Set(String, Value),
}

impl Edit {
    /// The edited copy of `doc`, and where a validator must report the problem: at the object
    /// for a key added or removed, at the value for a value replaced.
    fn apply(&self, doc: &Value) -> (Value, String) {
        let mut doc = doc.clone();
        let (Edit::Add(pointer, _) | Edit::Remove(pointer) | Edit::Set(pointer, _)) = self;
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        let object = doc.pointer_mut(parent).unwrap().as_object_mut().unwrap();
        match self {
            Edit::Add(_, value) => {
                assert!(
                    object.insert(key.to_string(), value.clone()).is_none(),
                    "{pointer}"
                );
            }
            Edit::Remove(_) => {
                assert!(object.remove(key).is_some(), "{pointer}");
            }
            Edit::Set(_, value) => {
                assert!(
                    object.insert(key.to_string(), value.clone()).is_some(),
                    "{pointer}"
                );
                return (doc, pointer.clone());
            }
        }
        (doc, parent.to_string())
    }
}

#[test]
fn a_result_with_an_unknown_key_a_missing_key_or_a_wrong_type_is_rejected_where_it_is_wrong() {
    let validator = validator(&schema());
    let doc = fixture("explained-6.12-rt-vm.json");
    assert_valid(&validator, &doc, "the unedited fixture");
    let run = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .position(|r| r["status"] == "completed" && r.get("explanation").is_some())
        .expect("the fixture has an explained completed run");
    let run = format!("/runs/{run}");
    let at = |path: &str| format!("{run}{path}");
    let edits = [
        Edit::Add("/surprise".into(), json!(1)),
        Edit::Add(at("/integrity/surprise"), json!(0)),
        Edit::Add(at("/workers/0/setup/surprise"), json!(null)),
        Edit::Add("/plan/verdict/max_lost".into(), json!(0)),
        Edit::Add(at("/series/surprise"), json!({})),
        Edit::Add(at("/cpu_busy_percent/cpu0"), json!(1.0)),
        Edit::Remove("/host".into()),
        Edit::Remove(at("/measured_ns")),
        Edit::Remove("/plan/rt/policy".into()),
        Edit::Remove(at("/explanation/tracing/lines")),
        Edit::Remove(at("/workers/1/counters/wakeups")),
        Edit::Set("/schema_version".into(), json!(4)),
        Edit::Set(at("/measured_ns"), json!("1000000000")),
        Edit::Set(at("/measured_ns"), json!(1.5)),
        Edit::Set(at("/measured_ns"), json!(-1)),
        Edit::Set(at("/integrity/lost"), json!(null)),
        Edit::Set("/verdict/status".into(), json!("maybe")),
        Edit::Set("/caveats/0/severity".into(), json!("mild")),
        Edit::Set("/support/0/support/status".into(), json!("perhaps")),
        Edit::Set("/plan/ring_setup".into(), json!("fast")),
        Edit::Set("/interrupted".into(), json!("no")),
    ];
    for edit in &edits {
        let (edited, expected) = edit.apply(&doc);
        let errors = errors(&validator, &edited);
        // A nullable value (`anyOf` a definition or null) is reported at the value itself,
        // which is the edit's location or one of its ancestors (never the root, unless the
        // edit was at the root).
        let reported_there = errors.iter().any(|e| {
            let path = e.split(": ").next().unwrap();
            expected.starts_with(path) && (path.is_empty() == expected.is_empty())
        });
        assert!(
            reported_there,
            "the edit at {expected} is not reported there: {errors:#?}"
        );
    }
}

/// The property names of `schema`, outside the system check's own definitions (docs/
/// system-check.md describes those).
fn property_names(schema: &Value, path: &str, out: &mut BTreeSet<(String, String)>) {
    match schema {
        Value::Object(map) => {
            for (key, child) in map {
                let child_path = format!("{path}/{key}");
                if ["#/$defs/system_check", "#/$defs/trial"].contains(&child_path.as_str()) {
                    continue;
                }
                if key == "properties" {
                    for name in child.as_object().unwrap().keys() {
                        out.insert((name.clone(), child_path.clone()));
                    }
                }
                property_names(child, &child_path, out);
            }
        }
        Value::Array(items) => {
            for (n, item) in items.iter().enumerate() {
                property_names(item, &format!("{path}/{n}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_property_of_the_schema_is_named_on_the_result_schema_page() {
    let page = std::fs::read_to_string(root().join("docs/result-schema.md")).unwrap();
    let documented = documented_words(&page);
    let mut names = BTreeSet::new();
    property_names(&schema(), "#", &mut names);
    let missing: Vec<String> = names
        .into_iter()
        .filter(|(name, _)| !documented.contains(name))
        .map(|(name, at)| format!("{name} ({at})"))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/result-schema.md does not name these properties of docs/result.schema.json: \
         {missing:#?}"
    );
    assert!(
        page.contains("(result.schema.json)"),
        "docs/result-schema.md links the schema"
    );
}

/// Every property name and every string an `enum` or `const` allows (series names key maps) in
/// `schema`, outside the system check's own definitions.
fn schema_words(schema: &Value, path: &str, out: &mut BTreeSet<String>) {
    match schema {
        Value::Object(map) => {
            for (key, child) in map {
                let child_path = format!("{path}/{key}");
                if ["#/$defs/system_check", "#/$defs/trial"].contains(&child_path.as_str()) {
                    continue;
                }
                match (key.as_str(), child) {
                    ("properties", Value::Object(properties)) => {
                        out.extend(properties.keys().cloned());
                    }
                    ("enum", Value::Array(values)) => {
                        out.extend(values.iter().filter_map(Value::as_str).map(str::to_string));
                    }
                    ("const", Value::String(value)) => {
                        out.insert(value.clone());
                    }
                    _ => {}
                }
                schema_words(child, &child_path, out);
            }
        }
        Value::Array(items) => {
            for item in items {
                schema_words(item, path, out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_field_a_table_of_the_result_schema_page_names_is_in_the_schema() {
    let page = std::fs::read_to_string(root().join("docs/result-schema.md")).unwrap();
    // bench.json is a document of its own, which this schema does not describe.
    let (soak, _bench) = page.split_once("## Bench results").unwrap();
    let mut words = BTreeSet::new();
    schema_words(&schema(), "#", &mut words);
    let mut missing = Vec::new();
    for row in soak.lines().filter(|line| line.starts_with("| `")) {
        let field = row.split(" | ").next().unwrap();
        for word in documented_words(field) {
            if !words.contains(&word) {
                missing.push(format!("{word} (row {field})"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/result.schema.json does not hold these fields of docs/result-schema.md: \
         {missing:#?}"
    );
}

/// Run rtsoak with `args` into a new directory and return the result it wrote, with the exit
/// code: a soak on a loaded 2-CPU machine may end INCONCLUSIVE (7, a starved publisher) or
/// worse, and its result must match the schema all the same.
fn real_result(args: &[&str]) -> (Value, Value) {
    let dir = tempfile::tempdir().unwrap();
    let output = rtsoak()
        .args(args)
        .args(["--json", "-o"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let code = output.status.code();
    assert!(
        matches!(code, Some(0 | 1 | 4 | 7)),
        "rtsoak {args:?} exited {code:?}:\n{stderr}"
    );
    let saved = std::fs::read(dir.path().join("result.json")).unwrap_or_else(|e| {
        panic!("rtsoak {args:?} (exit {code:?}) saved no result: {e}\n{stderr}")
    });
    let saved: Value = serde_json::from_slice(&saved).unwrap();
    let printed: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("rtsoak {args:?} --json printed no JSON: {e}\n{stderr}"));
    eprintln!("rtsoak {args:?}: exit {code:?}");
    (saved, printed)
}

/// What a real run of `args` wrote and printed matches the schema as this build writes it.
fn assert_real_result_matches(args: &[&str]) -> Value {
    let validator = validator(&written_today(&schema()));
    let (saved, printed) = real_result(args);
    assert_valid(
        &validator,
        &saved,
        &format!("the result.json of rtsoak {args:?}"),
    );
    assert_valid(
        &validator,
        &printed,
        &format!("the --json output of rtsoak {args:?}"),
    );
    saved
}

const SHORT: [&str; 5] = ["-q", "--profile", "ci", "--duration", "1s"];

#[test]
fn a_real_compare_of_every_transport_with_noise_matches_the_schema() {
    let _serial = serial();
    let doc = assert_real_result_matches(&[&["compare"][..], &SHORT].concat());
    assert!(doc["plan"]["noise"]["enabled"] == true, "noise was on");
}

#[test]
fn a_real_quiet_run_matches_the_schema() {
    let _serial = serial();
    let args = [&["run", "-t", "eventfd", "--no-noise"][..], &SHORT].concat();
    let doc = assert_real_result_matches(&args);
    assert!(doc["plan"]["noise"]["enabled"] == false, "noise was off");
}

#[test]
fn a_real_ring_setup_comparison_matches_the_schema() {
    let _serial = serial();
    let args = [
        &[
            "compare",
            "-t",
            "futex,signalfd",
            "--ring-setup",
            "defer-taskrun,none",
        ][..],
        &SHORT,
    ]
    .concat();
    let doc = assert_real_result_matches(&args);
    assert!(
        doc["runs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r.get("ring_setup_requested").is_some()),
        "the runs recorded the setup each asked for"
    );
}

#[test]
fn a_real_explained_compare_matches_the_schema() {
    let _serial = serial();
    let args = [
        &["compare", "-t", "futex,msg-ring", "--explain"][..],
        &SHORT,
    ]
    .concat();
    let doc = assert_real_result_matches(&args);
    assert!(doc["plan"]["explain"] == true, "the run was traced");
}

#[test]
fn a_real_run_with_its_floor_matches_the_schema() {
    let _serial = serial();
    let args = [&["run", "-t", "futex", "--floor"][..], &SHORT].concat();
    let doc = assert_real_result_matches(&args);
    let floor = doc["floor_runs"]
        .as_array()
        .expect("the result has floor runs");
    assert_eq!(floor.len(), 1);
    assert!(
        doc["plan"].get("floor").is_none(),
        "the saved plan is the harness's"
    );
}

#[test]
fn a_real_run_with_actions_matches_the_schema() {
    let _serial = serial();
    let args = [
        &[
            "run",
            "-t",
            "eventfd",
            "--no-noise",
            "--on-threshold-limit",
            "1us",
            "--on-threshold-every",
            "200ms",
            "--on-threshold",
            "continue",
            "--on-threshold",
            "exec=/usr/bin/true",
            "--on-end",
            "continue",
        ][..],
        &SHORT,
    ]
    .concat();
    let doc = assert_real_result_matches(&args);
    assert!(doc["runs"][0]["actions"]["firings"][0]["actions"][1]["kind"] == "exec");
    assert!(doc["end_actions"][0]["kind"] == "continue");
}
