//! The KCIDB origin as a lab sets it: a bad one refused before anything runs, wherever it was
//! given, and a good one carried into every object and id of the `kcidb` export, also when a
//! saved result is rendered again.

mod common;

use common::rtsoak;
use predicates::prelude::*;

/// A saved real result (a version 2 one, which `report` upgrades), without an origin.
const SAVED: &str = "tests/fixtures/results/compare-vm-2cpu.json";

#[test]
fn an_origin_kcidb_would_refuse_is_a_usage_error_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    rtsoak()
        .args(["run", "-t", "eventfd", "--profile", "ci"])
        .args(["--kcidb-origin", "My-Lab", "-o"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("`My-Lab` is not a KCIDB origin"))
        .stderr(predicate::str::contains("^[a-z0-9_]+$"));
    let profile = dir.path().join("lab.toml");
    std::fs::write(&profile, "[export]\nkcidb_origin = \"my lab\"\n").unwrap();
    rtsoak()
        .args(["run", "-t", "eventfd", "--profile"])
        .arg(&profile)
        .arg("-o")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("export.kcidb_origin"))
        .stderr(predicate::str::contains("^[a-z0-9_]+$"));
    assert!(!out.exists(), "nothing ran, nothing was written");
}

#[test]
fn report_renders_a_saved_result_under_the_origin_asked_for_and_only_as_kcidb() {
    let render = |extra: &[&str]| {
        let output = rtsoak()
            .args(["report", "--format", "kcidb", SAVED])
            .args(extra)
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        serde_json::from_slice::<serde_json::Value>(&output.stdout).unwrap()
    };
    let first_test = |doc: &serde_json::Value| doc["tests"][0].clone();
    let default = first_test(&render(&[]));
    assert_eq!(default["origin"], "rtsoak", "a result without one: rtsoak");
    let asked = render(&["--kcidb-origin", "night_lab"]);
    for kind in ["checkouts", "builds", "tests"] {
        for object in asked[kind].as_array().unwrap() {
            assert_eq!(object["origin"], "night_lab", "{object}");
            let id = object["id"].as_str().unwrap();
            assert!(id.starts_with("night_lab:"), "{id}");
        }
    }
    assert_eq!(
        first_test(&asked)["path"],
        default["path"],
        "the path names the test"
    );
    rtsoak()
        .args([
            "report",
            "--format",
            "junit",
            "--kcidb-origin",
            "night_lab",
            SAVED,
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--format kcidb"));
    rtsoak()
        .args([
            "report",
            "--format",
            "kcidb",
            "--kcidb-origin",
            "night-lab",
            SAVED,
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a KCIDB origin"));
}
