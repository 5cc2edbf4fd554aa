//! The bad-input corpus: broken profiles and flags, each with the error a user sees. Every
//! entry must exit with code 2 (usage), name what is wrong and what is allowed, never panic,
//! and create no result directory. Nothing runs, so these are quick.

mod common;

use common::rtsoak;

/// One broken input: profile text (None = the built-in `ci`), extra flags, and a stable
/// substring of the error naming the key and its allowed values.
struct Case {
    name: &'static str,
    profile: Option<&'static str>,
    flags: &'static [&'static str],
    error: &'static str,
}

const CORPUS: &[Case] = &[
    Case {
        name: "a string where a number belongs",
        profile: Some("[run]\nduration_s = \"ten\"\n"),
        flags: &[],
        error: "invalid type: string \"ten\", expected u64",
    },
    Case {
        name: "an unknown key",
        profile: Some("[run]\nperiod_ms = 5\n"),
        flags: &[],
        error: "unknown field `period_ms`, expected one of `transports`",
    },
    Case {
        name: "an unknown section",
        profile: Some("[turbo]\nx = 1\n"),
        flags: &[],
        error: "unknown field `turbo`",
    },
    Case {
        name: "text that is not TOML",
        profile: Some("[run\nduration_s = 1\n"),
        flags: &[],
        error: "TOML parse error at line 1",
    },
    Case {
        name: "an empty noise CPU list",
        profile: Some("[cpus]\nnoise = \"\"\n"),
        flags: &[],
        error: "profile key `cpus.noise`: \"\" is neither \"auto\" nor a CPU list: empty CPU list",
    },
    Case {
        name: "a malformed noise CPU list",
        profile: Some("[cpus]\nnoise = \"0-\"\n"),
        flags: &[],
        error: "`0-` is not a CPU number or range: write CPUs as `0-1,4`",
    },
    Case {
        name: "publisher and subscriber on one CPU",
        profile: Some("[cpus]\npublisher = 0\nsubscriber = 0\n"),
        flags: &[],
        error: "publisher and subscriber are both CPU 0: the RT pair needs two different CPUs",
    },
    Case {
        name: "an offline CPU",
        profile: Some("[cpus]\npublisher = 4000\n"),
        flags: &[],
        error: "profile key `cpus.publisher`: CPU 4000 is not online; online CPUs are",
    },
    Case {
        name: "one RT CPU on the command line",
        profile: None,
        flags: &["--rt-cpus", "0"],
        error: "the command line gave 1 RT CPUs (0); give exactly two",
    },
    Case {
        name: "priority 0",
        profile: Some("[rt]\npublisher_priority = 0\n"),
        flags: &[],
        error: "`rt.publisher_priority` = 0 is not allowed: expected 1..=99 for policy `fifo`",
    },
    Case {
        name: "priority 100",
        profile: Some("[rt]\nsubscriber_priority = 100\n"),
        flags: &[],
        error: "`rt.subscriber_priority` = 100 is not allowed: expected 1..=99",
    },
    Case {
        name: "priority 100 on the command line",
        profile: None,
        flags: &["--priority", "100"],
        error: "= 100 (from the command line) is not allowed: expected 1..=99",
    },
    Case {
        name: "period 0",
        profile: Some("[run]\nperiod_us = 0\n"),
        flags: &[],
        error: "`run.period_us` = 0 is not allowed: expected 50..=1000000 (microseconds)",
    },
    Case {
        name: "period 0 on the command line",
        profile: None,
        flags: &["--period", "0us"],
        error: "`run.period_us` = 0 (from the command line) is not allowed",
    },
    Case {
        name: "an absurd duration",
        profile: Some("[run]\nduration_s = 99999999999\n"),
        flags: &[],
        error: "`run.duration_s` = 99999999999 is not allowed: expected 1..=604800 (seconds)",
    },
    Case {
        name: "a duration of 0",
        profile: Some("[run]\nduration_s = 0\n"),
        flags: &[],
        error: "`run.duration_s` = 0 is not allowed: expected 1..=604800",
    },
    Case {
        name: "a duration without a known unit",
        profile: None,
        flags: &["--duration", "5parsecs"],
        error: "invalid value '5parsecs' for '--duration <DURATION>'",
    },
    Case {
        name: "a negative threshold",
        profile: Some("[run]\nthreshold_us = -5\n"),
        flags: &[],
        error: "invalid value: integer `-5`, expected u64",
    },
    Case {
        name: "zero rounds",
        profile: Some("[run]\nrounds = 0\n"),
        flags: &[],
        error: "`run.rounds` = 0 is not allowed: expected 1..=1000",
    },
    Case {
        name: "a zero interval",
        profile: Some("[run]\ninterval_s = 0\n"),
        flags: &[],
        error: "`run.interval_s` = 0 is not allowed: expected 1..=3600 (seconds)",
    },
    Case {
        name: "a zero delivery timeout",
        profile: Some("[run]\ndelivery_timeout_ms = 0\n"),
        flags: &[],
        error: "`run.delivery_timeout_ms` = 0 is not allowed: expected 10..=60000",
    },
    Case {
        name: "an unknown transport",
        profile: Some("[run]\ntransports = [\"pigeon\"]\n"),
        flags: &[],
        error: "unknown transport `pigeon`: known transports are futex",
    },
    Case {
        name: "an unknown policy",
        profile: Some("[rt]\npolicy = \"deadline\"\n"),
        flags: &[],
        error: "unknown variant `deadline`, expected one of `fifo`, `rr`, `other`",
    },
    Case {
        name: "a missing external noise command",
        profile: Some("[noise.load]\nexternal = [\"/nonexistent/loadgen\"]\n"),
        flags: &[],
        error: "`noise.load.external` = [\"/nonexistent/loadgen\"] is not allowed: expected a \
                program that exists",
    },
    Case {
        name: "queue noise not below the RT pair",
        profile: Some("[noise.queue]\npriority = 40\n"),
        flags: &[],
        error: "`noise.queue.priority` = 40 is not allowed: expected below the RT pair's \
                priority (40)",
    },
    Case {
        name: "a burst duty cap of 100 %",
        profile: Some("[noise.bursts]\nduty_cap_percent = 100\n"),
        flags: &[],
        error: "`noise.bursts.duty_cap_percent` = 100 is not allowed: expected 1..=95 (percent)",
    },
    Case {
        name: "an unknown flag",
        profile: None,
        flags: &["--turbo"],
        error: "unexpected argument '--turbo' found",
    },
    Case {
        name: "an unknown built-in profile",
        profile: None,
        flags: &["--profile", "jetson"],
        error: "no profile named `jetson`: the built-in and installed (in /etc/rtsoak/profiles) profiles are default, ci",
    },
];

#[test]
fn every_corpus_entry_exits_2_with_its_error_no_panic_and_no_result_directory() {
    let mut failures = Vec::new();
    for case in CORPUS {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("result");
        let mut command = rtsoak();
        command.args(["compare", "-q"]);
        match case.profile {
            Some(text) => {
                let path = dir.path().join("broken.toml");
                std::fs::write(&path, text).unwrap();
                command.arg("--profile").arg(path);
            }
            None if case.flags.contains(&"--profile") => {}
            None => {
                command.args(["--profile", "ci"]);
            }
        }
        let output = command
            .args(case.flags)
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        let problems = [
            (output.status.code() != Some(2)).then(|| format!("exit {:?}", output.status.code())),
            (!stderr.contains(case.error)).then(|| "the error text differs".to_string()),
            stderr.contains("panicked").then(|| "a panic".to_string()),
            out.exists().then(|| "a result directory".to_string()),
        ];
        let problems: Vec<String> = problems.into_iter().flatten().collect();
        if !problems.is_empty() {
            failures.push(format!("{}: {}\n{stderr}", case.name, problems.join(", ")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
