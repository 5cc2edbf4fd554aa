//! What the crate graph cannot keep by itself (docs/architecture.md draws the crates):
//!
//! - each crate depends on exactly the rtsoak crates its layer allows: Cargo refuses an import
//!   its `Cargo.toml` does not declare, but a declared edge upwards would compile;
//! - every crate but the kernel layer forbids `unsafe`, so the compiler keeps it there;
//! - every bench file is in its registry, so adding a bench is one file and one line (the
//!   transports' registry is an exhaustive `match`, and `tests/registry.rs` checks their files).
//!
//! Which modules import which within a crate, dead public items and the length of functions
//! are the compiler's and clippy's (`unreachable_pub`, `dead_code`, `clippy::too_many_lines`).

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
