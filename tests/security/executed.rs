//! Programs rtsoak executes: none found by a search of `PATH` as root. Inside a LAVA test shell
//! it prints LAVA's signals itself and runs no `lava-test-case`; a bare external noise command
//! is looked up in the system's directories only, a program another user could have planted is
//! refused before anything runs, and what the command itself runs by name is found in the
//! system's directories too.

use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::common::rtsoak_path;
use super::{Setup, as_nobody, assert_measured, setup, stderr};

/// uid 65534 plants an executable `name` in `dir` that would leave `marker` if it ever ran.
fn plant_program(dir: &Path, name: &str, marker: &Path) -> PathBuf {
    let path = dir.join(name);
    let script = format!(
        "printf '#!/bin/sh\\necho ran >%s\\n' '{}' > '{}' && chmod 755 '{}'",
        marker.display(),
        path.display(),
        path.display()
    );
    as_nobody("sh", &["-c".as_ref(), script.as_ref()]);
    path
}

/// The `ci` profile with `external` set to `argv` (TOML array text), as a file of root's.
pub(crate) fn external_profile(s: &Setup, name: &str, argv: &str) -> PathBuf {
    let profile = s.path(name);
    let ci = Command::new(rtsoak_path())
        .args(["profiles", "--show", "ci"])
        .output()
        .unwrap();
    let text = String::from_utf8(ci.stdout)
        .unwrap()
        .replace("external = []", &format!("external = {argv}"));
    assert!(text.contains(argv), "the ci profile has external = []");
    std::fs::write(&profile, text).unwrap();
    profile
}

/// The lines starting with a LAVA test case signal.
fn signals(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.contains("<LAVA_SIGNAL_TESTCASE "))
        .map(str::to_string)
        .collect()
}

/// A root run in `cwd` with `PATH` and extra environment, as a LAVA test shell would start it.
fn run_in_shell(cwd: &Path, path: &str, env: &[(&str, &str)], out: &Path) -> Output {
    let mut command = Command::new(rtsoak_path());
    command
        .current_dir(cwd)
        .env("PATH", path)
        .env_remove("KMSG")
        .env_remove("LAVA_RESULT_DIR")
        .args(["run", "-q", "-t", "eventfd", "--profile", "ci"])
        .args([
            "--duration",
            "1s",
            "--no-noise",
            "--wait-for-cpus",
            "30m",
            "-o",
        ])
        .arg(out);
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

#[test]
fn a_lava_test_case_planted_on_path_or_in_the_working_directory_is_never_run() {
    let s = setup();
    let marker = s.path("helper-ran");
    let bin = s.nobodys_dir("bin");
    // A shared sticky working directory, with the empty PATH entry that means it.
    let cwd = s.roots_dir("shared", 0o1777);
    plant_program(&bin, "lava-test-case", &marker);
    plant_program(&cwd, "lava-test-case", &marker);
    let path = format!("{}::/usr/bin:/bin", bin.display());
    let lava_dir = s.path("lava-results");
    let lava = lava_dir.to_str().unwrap();

    let out = s.path("out");
    let run = run_in_shell(&cwd, &path, &[("LAVA_RESULT_DIR", lava)], &out);
    assert_measured(&run);
    assert!(!marker.exists(), "a planted lava-test-case ran as root");
    let printed = signals(&String::from_utf8_lossy(&run.stdout));
    let report = Command::new(rtsoak_path())
        .args(["report", "--format", "lava"])
        .arg(&out)
        .output()
        .unwrap();
    let script = String::from_utf8(report.stdout).unwrap();
    // The script's cases; its other lines print the log's sentences.
    let cases: Vec<&str> = script
        .lines()
        .filter(|line| line.starts_with("lava-test-case "))
        .collect();
    assert_eq!(printed.len(), cases.len(), "{printed:?}\n{script}");
    for (signal, line) in printed.iter().zip(&cases) {
        let name = line.split(' ').nth(1).unwrap();
        assert!(
            signal.starts_with(&format!(
                "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID={name} RESULT="
            )),
            "{signal} for {line}"
        );
    }
    assert!(
        !lava_dir.exists(),
        "nothing is written under a path from the environment"
    );

    // `lava-signal: kmsg`: the signals go to the kernel log, as the helper sends them.
    let mut kmsg = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open("/dev/kmsg")
        .unwrap();
    kmsg.seek(SeekFrom::End(0)).unwrap();
    let run = run_in_shell(
        &cwd,
        &path,
        &[("LAVA_RESULT_DIR", lava), ("KMSG", "true")],
        &s.path("out-kmsg"),
    );
    assert_measured(&run);
    assert!(signals(&String::from_utf8_lossy(&run.stdout)).is_empty());
    let mut logged = Vec::new();
    let mut record = vec![0u8; 8192];
    while let Ok(n) = kmsg.read(&mut record) {
        logged.push(String::from_utf8_lossy(&record[..n]).into_owned());
    }
    let logged = signals(&logged.join(""));
    assert_eq!(logged.len(), printed.len(), "{logged:?}");
    // `<0>`: level 0 (the facility of a write from user space is `user`, 1).
    let level = |record: &str| record.split(',').next()?.parse::<u32>().ok().map(|p| p & 7);
    assert!(logged.iter().all(|r| level(r) == Some(0)), "{logged:?}");
    assert!(!marker.exists());

    // Outside a test shell: nothing.
    let run = run_in_shell(&cwd, &path, &[], &s.path("out-plain"));
    assert_measured(&run);
    assert!(signals(&String::from_utf8_lossy(&run.stdout)).is_empty());
}

#[test]
fn root_runs_no_external_program_another_user_could_have_planted() {
    let s = setup();
    let marker = s.path("planted-ran");
    let bin = s.nobodys_dir("bin");
    let planted = plant_program(&bin, "rtsoak-planted-load", &marker);
    plant_program(&bin, "sleep", &marker);
    let path = format!("{}::/usr/bin:/bin", bin.display());
    let run = |profile: &Path, out: &Path| {
        Command::new(rtsoak_path())
            .current_dir(&bin)
            .env("PATH", &path)
            .args(["run", "-q", "-t", "eventfd", "--duration", "1s"])
            .args(["--wait-for-cpus", "30m", "--profile"])
            .arg(profile)
            .arg("-o")
            .arg(out)
            .output()
            .unwrap()
    };

    // A bare name only uid 65534's PATH entry holds: root does not look there.
    let profile = external_profile(&s, "bare.toml", "[\"rtsoak-planted-load\"]");
    let out = run(&profile, &s.path("never-1"));
    let text = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains("noise.load.external") && text.contains("never in $PATH"),
        "{text}"
    );

    // The planted file by its path: refused, naming why.
    let profile = external_profile(&s, "path.toml", &format!("[\"{}\"]", planted.display()));
    let out = run(&profile, &s.path("never-2"));
    let text = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("owned by uid 65534"), "{text}");
    assert!(!s.path("never-1").exists() && !s.path("never-2").exists());

    // `sleep`, planted first on PATH and in the working directory: root runs the system's.
    let profile = external_profile(&s, "sleep.toml", "[\"sleep\", \"60\"]");
    let out_dir = s.path("out");
    let out = run(&profile, &out_dir);
    assert_measured(&out);
    let doc = super::common::load(&out_dir);
    let external = doc.runs[0].noise.external.clone().expect("the command ran");
    assert_eq!(external.argv, ["sleep", "60"]);
    assert!(
        external.exit.contains("stopped by rtsoak"),
        "{}",
        external.exit
    );
    assert!(!marker.exists(), "a planted program ran as root");

    // What the command itself runs by name (`sh -c "sleep 60"`): the shell's search of PATH
    // finds the system's `sleep`, never the one planted first on root's PATH.
    let profile = external_profile(&s, "shell.toml", "[\"sh\", \"-c\", \"sleep 60\"]");
    let out_dir = s.path("out-shell");
    let out = run(&profile, &out_dir);
    assert_measured(&out);
    let doc = super::common::load(&out_dir);
    let external = doc.runs[0].noise.external.clone().expect("the command ran");
    assert!(
        external.exit.contains("stopped by rtsoak"),
        "the system's sleep ran until the stop: {}",
        external.exit
    );
    assert!(
        !marker.exists(),
        "the external command ran a program planted on root's PATH"
    );
}
