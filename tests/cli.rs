//! The command line as a user meets it: help, probe, profiles, and every bad input answered with
//! a clear error and the usage exit code, before any worker starts.

mod common;

use common::rtsoak;
use predicates::prelude::*;

#[test]
fn help_documents_the_exit_codes() {
    rtsoak()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("130  interrupted by a signal"))
        .stdout(predicate::str::contains("4    messages were lost"));
}

#[test]
fn probe_json_lists_every_transport_with_its_support() {
    let output = rtsoak().args(["probe", "--json"]).output().unwrap();
    // 0 ready, 1 not ready for real-time figures (tests/probe.rs holds it to what it found).
    assert!(matches!(output.status.code(), Some(0 | 1)), "{output:?}");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let matrix = report["support"].as_array().unwrap();
    let names: Vec<&str> = matrix
        .iter()
        .map(|e| e["transport"].as_str().unwrap())
        .collect();
    assert_eq!(names, rtsoak_record::transport::Name::ids());
    assert!(names.contains(&"eventfd-multishot") && names.contains(&"futex-syscall"));
    for entry in matrix {
        let status = entry["support"]["status"].as_str().unwrap();
        assert!(status == "supported" || status == "unsupported", "{entry}");
    }
}

#[test]
fn profiles_lists_the_built_in_profiles_and_shows_one() {
    rtsoak()
        .arg("profiles")
        .assert()
        .success()
        .stdout(predicate::str::contains("default").and(predicate::str::contains("ci")));
    rtsoak()
        .args(["profiles", "--show", "ci"])
        .assert()
        .success()
        .stdout(predicate::str::contains("[run]"));
}

#[test]
fn an_unknown_transport_is_a_usage_error_naming_the_known_ones() {
    rtsoak()
        .args(["run", "-t", "carrier-pigeon", "--profile", "ci"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("carrier-pigeon"))
        .stderr(predicate::str::contains("msg-ring"));
}

#[test]
fn an_unknown_profile_key_is_a_usage_error_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.toml");
    std::fs::write(&path, "[run]\nperiod_ns = 500\n").unwrap();
    rtsoak()
        .args(["run", "-t", "eventfd", "--profile"])
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("period_ns"));
}

#[test]
fn a_priority_out_of_range_is_a_usage_error() {
    for priority in ["0", "100"] {
        rtsoak()
            .args([
                "run",
                "-t",
                "eventfd",
                "--profile",
                "ci",
                "--priority",
                priority,
            ])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("priority"));
    }
}

#[test]
fn an_offline_cpu_is_a_usage_error_listing_the_online_ones() {
    rtsoak()
        .args([
            "run",
            "-t",
            "eventfd",
            "--profile",
            "ci",
            "--rt-cpus",
            "0,4000",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("4000"))
        .stderr(predicate::str::contains("online"));
}

#[test]
fn a_malformed_cpu_list_or_duration_is_a_usage_error() {
    rtsoak()
        .args(["run", "-t", "eventfd", "--rt-cpus", "5-3"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("backwards"));
    rtsoak()
        .args(["run", "-t", "eventfd", "--period", "500"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("500us"));
}

#[test]
fn a_too_short_period_is_refused_with_the_allowed_range() {
    rtsoak()
        .args([
            "run",
            "-t",
            "eventfd",
            "--profile",
            "ci",
            "--period",
            "10us",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("period_us"));
}

#[test]
fn an_unwritable_output_directory_is_reported_before_anything_runs() {
    rtsoak()
        .args([
            "run",
            "-t",
            "eventfd",
            "--profile",
            "ci",
            "-o",
            "/proc/version/results",
        ])
        .assert()
        .code(5)
        .stderr(predicate::str::contains("--output"));
}

#[test]
fn help_says_what_the_default_profile_gives_each_override() {
    let output = rtsoak().args(["compare", "--help"]).output().unwrap();
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).unwrap();
    let (_, profile) = rtsoak::profile::load("default").unwrap();
    for (flag, value) in [
        ("--duration", format!("{}s", profile.run.duration_s)),
        ("--period", format!("{}us", profile.run.period_us)),
        ("--threshold", format!("{}us", profile.run.threshold_us)),
        ("--policy", profile.rt.policy.name().to_string()),
    ] {
        let at = help
            .find(&format!("{flag} <"))
            .unwrap_or_else(|| panic!("{flag}"));
        let entry = &help[at..help[at..].find("\n\n").map_or(help.len(), |end| at + end)];
        assert!(
            entry.contains(&format!("[default profile: {value}]")),
            "{flag}: {entry}"
        );
    }
}

#[test]
fn completions_and_manual_pages_come_from_the_command_line_definition() {
    for shell in ["bash", "zsh", "fish"] {
        let output = rtsoak().args(["completions", shell]).output().unwrap();
        assert!(output.status.success(), "{shell}");
        let script = String::from_utf8(output.stdout).unwrap();
        for word in ["compare", "ring-setup", "break-on", "probe"] {
            assert!(script.contains(word), "{shell} completion lacks {word}");
        }
        for offered in ["'worker:", "\"worker\"", ",worker)"] {
            assert!(
                !script.contains(offered),
                "{shell}: the internal worker entry is not offered"
            );
        }
    }
    let bash = rtsoak()
        .args(["completions", "bash"])
        .output()
        .unwrap()
        .stdout;
    let mut check = std::process::Command::new("bash")
        .args(["-n", "/dev/stdin"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    check.stdin.take().unwrap().write_all(&bash).unwrap();
    assert!(
        check.wait().unwrap().success(),
        "bash -n rejects the completion"
    );

    let page = String::from_utf8(rtsoak().arg("man").output().unwrap().stdout).unwrap();
    assert!(
        page.starts_with(".ie") || page.contains(".TH rtsoak 1"),
        "{page}"
    );
    assert!(page.contains(".TH rtsoak 1"));
    for command in ["compare", "probe", "bench"] {
        assert!(page.contains(command), "rtsoak(1) lists {command}");
    }
}

/// The words bash offers after `rtsoak <words>` when the last one is `current`, as the
/// generated completion computes them (`complete -F _rtsoak`, then the function's COMPREPLY).
fn bash_offers(words: &[&str], current: &str) -> Vec<String> {
    let script = rtsoak()
        .args(["completions", "bash"])
        .output()
        .unwrap()
        .stdout;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rtsoak.bash");
    std::fs::write(&file, script).unwrap();
    let mut line: Vec<&str> = vec!["rtsoak"];
    line.extend_from_slice(words);
    line.push(current);
    let quoted: Vec<String> = line.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "source '{}'; COMP_WORDS=({}); COMP_CWORD={}; COMP_LINE=\"${{COMP_WORDS[*]}}\"; \
         COMP_POINT=${{#COMP_LINE}}; _rtsoak rtsoak '{current}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        file.display(),
        quoted.join(" "),
        line.len() - 1,
        line[line.len() - 2],
    );
    let output = std::process::Command::new("bash")
        .args(["-c", &program])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn bash_completes_transport_profile_and_format_names_and_comma_lists_of_them() {
    let transports = bash_offers(&["compare", "-t"], "");
    for name in rtsoak_record::transport::Name::ids() {
        assert!(
            transports.iter().any(|w| w == name),
            "-t offers {name}: {transports:?}"
        );
    }
    let after_comma = bash_offers(&["compare", "-t"], "futex,msg");
    assert_eq!(after_comma, ["futex,msg-ring"], "the list so far is kept");
    let profiles = bash_offers(&["compare", "--profile"], "");
    for name in rtsoak::profile::builtin_names() {
        assert!(
            profiles.iter().any(|w| w == name),
            "--profile offers {name}: {profiles:?}"
        );
    }
    let formats = bash_offers(&["run", "--export"], "hdr-log,");
    for name in rtsoak_report::names() {
        let offered = format!("hdr-log,{name}");
        assert!(
            formats.contains(&offered),
            "--export offers {offered}: {formats:?}"
        );
    }
}

#[test]
fn the_manual_page_has_exit_status_and_value_placeholders_in_its_synopsis() {
    let page = String::from_utf8(rtsoak().arg("man").output().unwrap().stdout).unwrap();
    assert!(page.contains(".SH \"EXIT STATUS\""), "{page}");
    assert!(!page.contains(".SH EXTRA"), "no EXTRA section: {page}");
    let dir = tempfile::tempdir().unwrap();
    rtsoak()
        .args(["man", "--dir"])
        .arg(dir.path())
        .assert()
        .success();
    let run = std::fs::read_to_string(dir.path().join("rtsoak-run.1")).unwrap();
    let synopsis = run
        .split(".SH SYNOPSIS")
        .nth(1)
        .and_then(|rest| rest.split(".SH ").next())
        .expect("rtsoak-run(1) has a SYNOPSIS");
    for placeholder in ["<TRANSPORT>", "<PROFILE>", "<DURATION>"] {
        assert!(
            synopsis.contains(placeholder),
            "{placeholder} in {synopsis}"
        );
    }
    assert!(
        run.contains(".SH \"EXIT STATUS\""),
        "rtsoak-run(1) has EXIT STATUS too"
    );
    // rtsoak-probe(1) lists the probe's own codes, not the soak's.
    let probe = std::fs::read_to_string(dir.path().join("rtsoak-probe.1")).unwrap();
    let probe_status = probe.split(".SH \"EXIT STATUS\"").nth(1).unwrap();
    assert!(
        probe_status.contains("\\fB1\\fR\nnot ready"),
        "{probe_status}"
    );
    assert!(!probe_status.contains("regression"), "{probe_status}");
    // Each exit code is a line of its own: the last one does not run into the next sentence.
    let status = page.split(".SH \"EXIT STATUS\"").nth(1).unwrap();
    assert!(
        !status.contains("signal (the result is saved, marked interrupted) When"),
        "{status}"
    );
}

#[test]
fn the_install_script_installs_binary_pages_and_completions() {
    let prefix = tempfile::tempdir().unwrap();
    let status =
        std::process::Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/install"))
            .arg("--prefix")
            .arg(prefix.path())
            .arg("--binary")
            .arg(common::rtsoak_path())
            .status()
            .unwrap();
    assert!(status.success());
    for file in [
        "bin/rtsoak",
        // No command: where rtsoak in PREFIX/bin finds it (launch::worker_binary).
        "libexec/rtsoak/rtsoak-worker",
        "share/man/man1/rtsoak.1",
        "share/man/man1/rtsoak-compare.1",
        "share/man/man1/rtsoak-run.1",
        "share/bash-completion/completions/rtsoak",
        "share/zsh/site-functions/_rtsoak",
        "share/fish/vendor_completions.d/rtsoak.fish",
    ] {
        let path = prefix.path().join(file);
        let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        assert!(size > 0, "{} missing or empty", path.display());
    }
    assert!(
        !prefix
            .path()
            .join("share/man/man1/rtsoak-worker.1")
            .exists()
    );
    assert!(!prefix.path().join("bin/rtsoak-worker").exists());
    // The units are installed where systemd reads them, starting the binary just installed.
    let bin = prefix.path().join("bin/rtsoak");
    for unit in [
        "rtsoak-nightly.service",
        "rtsoak@.service",
        "rtsoak-nightly.timer",
        "rtsoak@.timer",
    ] {
        let installed =
            std::fs::read_to_string(prefix.path().join("lib/systemd/system").join(unit)).unwrap();
        if unit.ends_with(".service") {
            assert!(
                installed.contains(&format!("ExecStart={} ", bin.display())),
                "{unit}: {installed}"
            );
            assert!(!installed.contains("/usr/local/bin/rtsoak"), "{unit}");
        }
    }
    // The units name the installed pages.
    for unit in ["rtsoak-nightly.service", "rtsoak@.service"] {
        let text = std::fs::read_to_string(
            concat!(env!("CARGO_MANIFEST_DIR"), "/systemd/").to_string() + unit,
        )
        .unwrap();
        assert!(text.contains("Documentation=man:rtsoak(1)"), "{unit}");
    }
}

#[test]
fn run_offers_no_flag_of_a_comparison_and_says_to_use_compare() {
    let help =
        String::from_utf8(rtsoak().args(["run", "--help"]).output().unwrap().stdout).unwrap();
    assert!(!help.contains("--rounds"), "{help}");
    assert!(help.contains("--ring-setup"));
    let compare = String::from_utf8(
        rtsoak()
            .args(["compare", "--help"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(compare.contains("--rounds"));
    rtsoak()
        .args(["run", "-t", "eventfd", "--profile", "ci", "--rounds", "3"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("use `rtsoak compare"));
    rtsoak()
        .args([
            "run",
            "-t",
            "eventfd",
            "--profile",
            "ci",
            "--ring-setup",
            "none,coop-taskrun",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--ring-setup"));
}

#[test]
fn the_readmes_cargo_run_runs_rtsoak() {
    // The README's first command is `cargo run --release -- compare`. With two binaries
    // (rtsoak-worker beside rtsoak), plain `cargo run` refuses to choose unless the manifest
    // names one (`default-run`). The debug build stands in for the release one: the tests
    // built it already.
    let output = std::process::Command::new(env!("CARGO"))
        .args(["run", "--quiet", "--", "--version"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.starts_with("rtsoak "),
        "`cargo run -- --version`: {}\n{stdout}{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
}
