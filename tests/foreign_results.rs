//! A result rtsoak did not write as it is (edited, damaged, or made by another user to be read
//! by root) is rendered harmless or refused by every command that reads one: `report` in every
//! format, `diff` and `baseline promote`. Escape sequences in any of its texts reach no terminal
//! raw; counts that add up past 2^64 are refused (exit 2), never summed to a small number.
//! Every test starts from a real saved result, so the fields are the ones rtsoak writes.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::rtsoak;
use serde_json::Value;

/// What another user could put in a text: a title change, a screen clear, a carriage return
/// that hides the line, C1 CSI, a right-to-left override, a character XML 1.0 forbids, markup,
/// and a line break before a forgery.
const HOSTILE: &str =
    "\u{1b}]0;pwned\u{7}\u{1b}[2J\r\u{9b}31m\u{202e}\u{fffe}|<b>&`x`\nFORGED line";

/// The saved real comparison with a verdict and a decision.
fn real_result() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/results/explained-6.12-rt-vm.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Every string leaf of `value` by its path, array indices left out (`/runs/*/reason`).
fn text_paths(value: &Value, path: &str, out: &mut std::collections::BTreeSet<String>) {
    match value {
        Value::String(_) => {
            out.insert(path.to_string());
        }
        Value::Array(items) => {
            for item in items {
                text_paths(item, &format!("{path}/*"), out);
            }
        }
        Value::Object(map) => {
            // A histogram is data, not text: left as it is, so the figures stay.
            for (key, item) in map.iter().filter(|(key, _)| *key != "histogram") {
                text_paths(item, &format!("{path}/{key}"), out);
            }
        }
        _ => {}
    }
}

/// Append `text` to every string at `path`.
fn append(value: &mut Value, path: &[&str], text: &str) {
    match (value, path.split_first()) {
        (Value::String(s), None) => s.push_str(text),
        (Value::Array(items), Some((&"*", rest))) => {
            for item in items {
                append(item, rest, text);
            }
        }
        (Value::Object(map), Some((key, rest))) => {
            if let Some(item) = map.get_mut(*key) {
                append(item, rest, text);
            }
        }
        _ => {}
    }
}

/// The real result with [`HOSTILE`] appended to every text rtsoak still reads it with (a
/// name that must be a registry's, an enum or a time is refused or unread as text), and the
/// texts that took it.
fn hostile_result() -> (Vec<u8>, Vec<String>) {
    let mut doc = real_result();
    let mut paths = std::collections::BTreeSet::new();
    text_paths(&doc, "", &mut paths);
    let mut taken = Vec::new();
    for path in paths {
        let parts: Vec<&str> = path.split('/').skip(1).collect();
        let mut trial = doc.clone();
        append(&mut trial, &parts, HOSTILE);
        if rtsoak::store::from_bytes(&serde_json::to_vec(&trial).unwrap()).is_ok() {
            doc = trial;
            taken.push(path);
        }
    }
    (serde_json::to_vec(&doc).unwrap(), taken)
}

/// `bytes` saved as `result.json` in a new directory.
fn saved(bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("result.json");
    std::fs::write(&path, bytes).unwrap();
    (dir, path)
}

/// Nothing on stdout or stderr that a terminal acts on (line breaks and the cyclictest file's
/// TABs are the format's own), and no line that starts with what followed a line break.
fn assert_inert(what: &str, output: &Output) {
    for (stream, bytes) in [("stdout", &output.stdout), ("stderr", &output.stderr)] {
        let text = String::from_utf8(bytes.clone()).unwrap();
        let active: Vec<char> = text
            .chars()
            .filter(|&c| rtsoak_record::text::acts_on(c) && c != '\n' && c != '\t')
            .collect();
        assert!(
            active.is_empty(),
            "{what} {stream}: {:?} in\n{text}",
            &active[..active.len().min(8)]
        );
        assert!(
            !text
                .lines()
                .any(|line| line.trim_start().starts_with("FORGED")),
            "{what} {stream}: a forged line in\n{text}"
        );
    }
}

/// `rtsoak report --format FORMAT RESULT`, as what it shows: its stdout and stderr, and for a
/// format that is a directory of files (`hgrm`, which refuses a stream), the directory written
/// with `--output`: every file's name and content, as its stdout.
fn report_as(format: &str, result: &Path) -> Output {
    let directory = rtsoak_report::FORMATS
        .iter()
        .any(|f| f.name == format && matches!(f.render, rtsoak_report::Render::Directory(_)));
    if !directory {
        return rtsoak()
            .args(["report", "--format", format])
            .arg(result)
            .output()
            .unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join(format);
    let mut output = rtsoak()
        .args(["report", "-q", "--format", format, "--output"])
        .arg(&out)
        .arg(result)
        .output()
        .unwrap();
    let mut names: Vec<_> = std::fs::read_dir(&out)
        .map(|entries| entries.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    names.sort();
    for path in names {
        output
            .stdout
            .extend(path.file_name().unwrap().as_encoded_bytes());
        output.stdout.push(b'\n');
        output.stdout.extend(std::fs::read(&path).unwrap());
    }
    output
}

#[test]
fn escape_sequences_in_every_text_of_a_result_reach_no_terminal_from_report_diff_or_promote() {
    let (bytes, taken) = hostile_result();
    for field in [
        "/host/hostname",
        "/host/kernel_release",
        "/plan/profile",
        "/argv/*",
        "/caveats/*/text",
        "/runs/*/reason",
        "/verdict/inconclusive/*/message",
    ] {
        assert!(taken.iter().any(|t| t == field), "{field} not in {taken:?}");
    }
    let (_dir, result) = saved(&bytes);
    for format in rtsoak_report::names() {
        let output = report_as(format, &result);
        assert_eq!(output.status.code(), Some(0), "{format}: {output:?}");
        // Element text of JUnit keeps a message's line breaks: XML's lines are no report's.
        if format != "junit" {
            assert_inert(format, &output);
        }
    }
    let details = rtsoak()
        .args(["report", "--details"])
        .arg(&result)
        .output()
        .unwrap();
    assert_inert("report --details", &details);
    for flags in [&[][..], &["--markdown"], &["--json"]] {
        let output = rtsoak()
            .arg("diff")
            .arg(&result)
            .arg(&result)
            .args(flags)
            .output()
            .unwrap();
        assert_inert(&format!("diff {flags:?}"), &output);
    }
    let baselines = tempfile::tempdir().unwrap();
    for force in [false, true] {
        let mut promote = rtsoak();
        promote.args(["baseline", "promote"]).arg(&result);
        promote.arg("--to").arg(baselines.path().join("night"));
        if force {
            promote.arg("--force");
        }
        let output = promote.output().unwrap();
        assert_inert(&format!("baseline promote (--force: {force})"), &output);
    }
}

#[test]
fn the_junit_of_a_result_full_of_what_xml_1_0_forbids_is_read_by_pythons_xml_parser() {
    let (bytes, _) = hostile_result();
    let (dir, result) = saved(&bytes);
    let xml = dir.path().join("junit.xml");
    let output = rtsoak()
        .args(["report", "--format", "junit", "-o"])
        .arg(&xml)
        .arg(&result)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let script = "import sys, xml.etree.ElementTree as E; \
                  print(len(E.parse(sys.argv[1]).getroot().iter('testcase').__next__().attrib))";
    match std::process::Command::new("python3")
        .args(["-c", script])
        .arg(&xml)
        .output()
    {
        Ok(parsed) => assert!(
            parsed.status.success(),
            "{}",
            String::from_utf8_lossy(&parsed.stderr)
        ),
        Err(error) => rtsoak_testing::skip(&format!(
            "python3 is not available ({error}); .ci/run installs it"
        )),
    }
}

#[test]
fn errors_that_name_a_path_or_a_profile_show_it_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join(format!("{HOSTILE}.json"));
    let output = rtsoak().arg("report").arg(&missing).output().unwrap();
    assert_ne!(output.status.code(), Some(0));
    assert_inert("report of a missing path", &output);
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("\\x1b]0;pwned"),
        "{output:?}"
    );
    let output = rtsoak()
        .args(["profiles", "--show", HOSTILE])
        .output()
        .unwrap();
    assert_ne!(output.status.code(), Some(0));
    assert_inert("profiles --show", &output);
}

/// The real result in two rounds of futex, each of which lost `lost` messages.
fn with_lost(lost: u64) -> Vec<u8> {
    let mut doc = real_result();
    doc["plan"]["rounds"] = 2.into();
    let runs = doc["runs"].as_array_mut().unwrap();
    let futex = runs.iter().position(|r| r["transport"] == "futex").unwrap();
    runs[futex]["integrity"]["lost"] = lost.into();
    let mut second = runs[futex].clone();
    second["round"] = 2.into();
    runs.push(second);
    serde_json::to_vec(&doc).unwrap()
}

#[test]
fn lost_counts_that_add_up_past_2_to_the_64_are_refused_by_every_reader_never_read_as_none() {
    // 2^63 + 2^63 wraps to 0: a lossy result would read as clean.
    let (_dir, result) = saved(&with_lost(1 << 63));
    let baselines = tempfile::tempdir().unwrap();
    let commands: Vec<Vec<std::ffi::OsString>> = vec![
        vec!["report".into(), result.clone().into()],
        vec![
            "report".into(),
            "--format".into(),
            "lava".into(),
            result.clone().into(),
        ],
        vec!["diff".into(), result.clone().into(), result.clone().into()],
        vec![
            "baseline".into(),
            "promote".into(),
            result.clone().into(),
            "--to".into(),
            baselines.path().join("night").into(),
            "--force".into(),
        ],
    ];
    for args in commands {
        let output = rtsoak().args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("runs[].integrity.lost added over its runs exceed 2^64 - 1"),
            "{args:?}: {stderr}"
        );
        assert!(output.stdout.is_empty(), "{args:?}: nothing is rendered");
    }
    assert!(!baselines.path().join("night").exists(), "nothing promoted");
    // Counts that add up are read, and a lossy result stays lossy.
    let (_dir, result) = saved(&with_lost(1 << 62));
    let lava = rtsoak()
        .args(["report", "--format", "lava"])
        .arg(&result)
        .output()
        .unwrap();
    assert_eq!(lava.status.code(), Some(0), "{lava:?}");
    let text = String::from_utf8(lava.stdout).unwrap();
    assert!(
        text.contains("futex.lost --result fail --measurement 9223372036854775808 "),
        "{text}"
    );
}
