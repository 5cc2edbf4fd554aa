//! What the crate graph cannot keep by itself (docs/architecture.md draws the crates):
//!
//! - each crate depends on exactly the rtsoak crates its layer allows: Cargo refuses an import
//!   its `Cargo.toml` does not declare, but a declared edge upwards would compile;
//! - every crate but the kernel layer forbids `unsafe`, so the compiler keeps it there;
//! - every bench file is in its registry, so adding a bench is one file and one line (the
//!   transports' registry is an exhaustive `match`, and `tests/registry.rs` checks their files);
//! - no `allow` lets a function off clippy's length limit, which every crate root denies.
//!
//! Imports across layers, dead and needlessly public items and `unsafe` are the compiler's
//! (the crate graph, `dead_code`, `unreachable_pub`, `forbid(unsafe_code)`).

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Every crate of the workspace (its directory, relative to the top) and the rtsoak crates it
/// may depend on: the layering, top to bottom.
const LAYERS: [(&str, &[&str]); 7] = [
    (
        ".",
        &[
            "rtsoak-analysis",
            "rtsoak-measure",
            "rtsoak-record",
            "rtsoak-report",
            "rtsoak-sys",
        ],
    ),
    (
        "crates/rtsoak-report",
        &["rtsoak-analysis", "rtsoak-record"],
    ),
    (
        "crates/rtsoak-measure",
        &["rtsoak-analysis", "rtsoak-record", "rtsoak-sys"],
    ),
    ("crates/rtsoak-analysis", &["rtsoak-record"]),
    ("crates/rtsoak-sys", &["rtsoak-record"]),
    ("crates/rtsoak-record", &[]),
    (
        "crates/rtsoak-testing",
        &["rtsoak-analysis", "rtsoak-record"],
    ),
];

/// The rtsoak crates named in the `[dependencies]` table of the manifest in `dir`.
fn rtsoak_dependencies(dir: &str) -> BTreeSet<String> {
    let manifest = fs::read_to_string(Path::new(ROOT).join(dir).join("Cargo.toml")).unwrap();
    let manifest: toml::Table = toml::from_str(&manifest).unwrap();
    manifest
        .get("dependencies")
        .and_then(toml::Value::as_table)
        .map(|table| {
            table
                .keys()
                .filter(|name| name.starts_with("rtsoak"))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn each_crate_depends_only_on_the_layers_below_it() {
    for (dir, allowed) in LAYERS {
        let allowed: BTreeSet<String> = allowed.iter().map(|name| name.to_string()).collect();
        assert_eq!(
            rtsoak_dependencies(dir),
            allowed,
            "{dir}/Cargo.toml: a crate depends only on the layers below it (docs/architecture.md)"
        );
    }
    let members = fs::read_dir(Path::new(ROOT).join("crates"))
        .unwrap()
        .count();
    assert_eq!(members + 1, LAYERS.len(), "every crate has its layer here");
}

#[test]
fn every_crate_but_the_kernel_layer_forbids_unsafe_code() {
    for (dir, _) in LAYERS {
        let root = Path::new(ROOT).join(dir).join("src/lib.rs");
        let lib = fs::read_to_string(&root).unwrap();
        let forbids = lib.lines().any(|line| line == "#![forbid(unsafe_code)]");
        assert_eq!(
            forbids,
            dir != "crates/rtsoak-sys",
            "{}: `unsafe` lives in rtsoak-sys only, behind safe functions",
            root.display()
        );
    }
}

#[test]
fn every_bench_file_is_in_the_registry() {
    // A bench is one file and one `registry![...]` line, which declares its module: a file
    // left out of the list would not even be compiled.
    let dir = Path::new(ROOT).join("crates/rtsoak-measure/src/bench");
    let registry = fs::read_to_string(dir.join("mod.rs")).unwrap();
    let call = registry
        .split("\nregistry![")
        .nth(1)
        .expect("a registry![...] call in the benches' mod.rs");
    let registered: BTreeSet<String> = call[..call.find("];").unwrap()]
        .split(',')
        .filter_map(|entry| entry.trim().split("::").next())
        .filter(|module| !module.is_empty())
        .map(str::to_string)
        .collect();
    let benches: BTreeSet<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| fs::read_to_string(path).is_ok_and(|text| text.contains("impl Bench for ")))
        .map(|path| path.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(benches.len() >= 5, "found only {benches:?}");
    assert_eq!(
        benches, registered,
        "every `impl Bench` is one line of registry![...] in the benches' mod.rs"
    );
}

#[test]
fn no_function_is_let_off_the_length_limit() {
    // Each crate root denies clippy::too_many_lines (clippy.toml sets the limit) for product
    // code; an `allow` would let a function through unseen.
    let mut dirs = vec![Path::new(ROOT).join("src")];
    for (dir, _) in &LAYERS[1..] {
        dirs.push(Path::new(ROOT).join(dir).join("src"));
    }
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = fs::read_to_string(&path).unwrap();
                let lets_off = text
                    .lines()
                    .any(|line| line.contains("allow(") && line.contains("too_many_lines"));
                assert!(
                    !lets_off,
                    "{} lets a function off clippy::too_many_lines: split it into named steps",
                    path.display()
                );
            }
        }
    }
}
