//! The LAVA lines of the two-round fixture, judged, and of verdicts made to be PASS, FAIL and
//! INCONCLUSIVE: what each case is called, what it says, and what the log says before it.

use super::*;
use rtsoak_record::result::verdict::{
    Accepted, Breach, Failure, FailureKind, Inconclusive, InconclusiveKind, Limit, Verdict,
};
use rtsoak_record::{Series, Status};
use rtsoak_testing::fixture::two_round_doc;

fn judged() -> ResultDoc {
    let mut doc = two_round_doc();
    doc.verdict = Some(rtsoak_analysis::judge::verdict(&doc));
    doc
}

fn cases(lines: &[Line]) -> Vec<&Case> {
    lines
        .iter()
        .filter_map(|line| match line {
            Line::Case(case) => Some(case),
            Line::Log(_) => None,
        })
        .collect()
}

fn breach(transport: &str, what: Limit, series: Series, message: &str) -> Breach {
    Breach {
        transport: Some(transport.to_string()),
        ring_setup: None,
        what,
        series: Some(series),
        figure: 250.0,
        limit: 200.0,
        unit: "us".to_string(),
        message: message.to_string(),
    }
}

#[test]
fn every_transport_and_figure_is_a_case_and_the_verdict_the_last() {
    insta::assert_snapshot!(render(&judged()));
}

#[test]
fn names_hold_only_what_lava_takes_and_every_figure_has_a_measurement_and_units() {
    let lines = lines(&judged());
    let cases = cases(&lines);
    assert!(cases.len() > 20);
    for case in &cases {
        let name = &case.name;
        assert!(
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)),
            "{name}"
        );
        if !name.starts_with("verdict") {
            let m = case
                .measurement
                .as_ref()
                .expect("a figure has a measurement");
            m.value.parse::<f64>().unwrap();
            assert!(!m.units.is_empty());
        }
    }
    let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    for figure in ["p99", "p99_9", "p99_99", "longest", "over-threshold"] {
        assert!(
            names.contains(&format!("futex.delivery.{figure}").as_str()),
            "{names:?}"
        );
    }
    assert_eq!(names.last(), Some(&"verdict"));
    assert_eq!(
        Case::new("futex (defer-taskrun)/x", Outcome::Pass, None).name,
        "futex--defer-taskrun--x"
    );
}

#[test]
fn a_case_is_signalled_as_lavas_helper_signals_it() {
    let measured = Case::new(
        "futex.delivery.p99",
        Outcome::Pass,
        Some(Measurement {
            value: "41.2".into(),
            units: "us",
        }),
    );
    assert_eq!(
        measured.signal(),
        "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=futex.delivery.p99 RESULT=pass UNITS=us MEASUREMENT=41.2>"
    );
    assert_eq!(
        measured.command(),
        "lava-test-case futex.delivery.p99 --result pass --measurement 41.2 --units us"
    );
    let verdict = Case::new("verdict", Outcome::Skip, None);
    assert_eq!(
        verdict.signal(),
        "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=verdict RESULT=skip>"
    );
}

#[test]
fn a_figure_fails_on_the_limit_that_judges_it_and_no_other() {
    let mut doc = two_round_doc();
    let verdict = Verdict::of(
        Vec::new(),
        vec![breach(
            "futex",
            Limit::MaxDelivery,
            Series::Delivery,
            "futex: delivery longest 250 us over 200 us",
        )],
        Vec::new(),
    );
    doc.verdict = Some(verdict);
    let lines = lines(&doc);
    let outcome = |name: &str| {
        cases(&lines)
            .iter()
            .find(|c| c.name == name)
            .unwrap()
            .outcome
    };
    assert_eq!(outcome("futex.delivery.longest"), Outcome::Fail);
    assert_eq!(
        outcome("futex.delivery.p99"),
        Outcome::Pass,
        "no limit judges p99"
    );
    assert_eq!(outcome("futex.delivery.over-threshold"), Outcome::Pass);
    assert_eq!(outcome("futex.send_call.longest"), Outcome::Pass);
    assert_eq!(
        outcome("futex-syscall.delivery.longest"),
        Outcome::Pass,
        "another transport"
    );
    assert_eq!(outcome("signalfd.messages"), Outcome::Skip, "unsupported");
}

#[test]
fn a_fail_names_each_reason_as_a_failed_case_after_its_sentence() {
    let mut doc = two_round_doc();
    let lost = Failure {
        transport: Some("eventfd".into()),
        ring_setup: None,
        kind: FailureKind::LostMessages,
        message: "eventfd: 3 messages lost".into(),
    };
    let mut verdict = Verdict::of(
        vec![lost],
        vec![
            breach(
                "futex",
                Limit::MaxOverThreshold,
                Series::Delivery,
                "futex: delivery 4 over",
            ),
            breach(
                "futex",
                Limit::MaxOverThreshold,
                Series::SendCall,
                "futex: send call 2 over",
            ),
        ],
        Vec::new(),
    );
    verdict.breaches.push(Breach {
        transport: None,
        series: None,
        what: Limit::RequirePreemptRt,
        message: "the kernel 6.1.0 is not PREEMPT_RT".into(),
        ..verdict.breaches[0].clone()
    });
    doc.verdict = Some(verdict);
    let console: Vec<String> = lines(&doc).iter().map(Line::console).collect();
    let at = |text: &str| {
        console
            .iter()
            .position(|l| l == text)
            .unwrap_or_else(|| panic!("{text}: {console:#?}"))
    };
    let signal = |name: &str| {
        at(&format!(
            "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID={name} RESULT=fail>"
        ))
    };
    let said = |sentence: &str| at(&format!("rtsoak verdict reason: {sentence}"));
    assert_eq!(
        said("eventfd: 3 messages lost") + 1,
        signal("verdict.reason.lost-messages.eventfd")
    );
    assert_eq!(
        said("futex: delivery 4 over") + 1,
        signal("verdict.reason.max_over_threshold.futex.delivery")
    );
    assert_eq!(
        said("futex: send call 2 over") + 1,
        signal("verdict.reason.max_over_threshold.futex.send_call")
    );
    assert_eq!(
        said("the kernel 6.1.0 is not PREEMPT_RT") + 1,
        signal("verdict.reason.require_preempt_rt")
    );
    assert_eq!(at("rtsoak verdict: FAIL") + 1, signal("verdict"));
    assert_eq!(
        signal("verdict"),
        console.len() - 1,
        "the verdict is the last line"
    );
}

#[test]
fn an_inconclusive_verdict_skips_its_case_and_each_reason_and_merges_reasons_of_one_name() {
    let mut doc = two_round_doc();
    let why = |message: &str| Inconclusive {
        transport: Some("futex".into()),
        ring_setup: None,
        kind: InconclusiveKind::MissedPeriods,
        message: message.into(),
    };
    doc.verdict = Some(Verdict::of(
        Vec::new(),
        Vec::new(),
        vec![why("round 1 missed 9 %"), why("round 2 missed 7 %")],
    ));
    let lines = lines(&doc);
    let reason = "verdict.reason.missed-periods.futex";
    let all = cases(&lines);
    let named: Vec<&&Case> = all.iter().filter(|c| c.name == reason).collect();
    assert_eq!(named.len(), 1, "one case per name");
    assert_eq!(named[0].outcome, Outcome::Skip);
    let console: Vec<String> = lines.iter().map(Line::console).collect();
    let case_at = console.iter().position(|l| l.contains(reason)).unwrap();
    assert_eq!(
        console[case_at - 2..case_at],
        [
            "rtsoak verdict reason: round 1 missed 9 %",
            "rtsoak verdict reason: round 2 missed 7 %"
        ]
    );
    assert_eq!(
        console.last().unwrap(),
        "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=verdict RESULT=skip>"
    );
    assert_eq!(console[console.len() - 2], "rtsoak verdict: INCONCLUSIVE");
    assert_eq!(
        cases(&lines)
            .iter()
            .find(|c| c.name == "futex.messages")
            .unwrap()
            .outcome,
        Outcome::Skip
    );
}

#[test]
fn a_pass_has_no_reason_and_names_what_it_accepted() {
    let mut doc = two_round_doc();
    let mut verdict = Verdict::of(Vec::new(), Vec::new(), Vec::new());
    verdict.accepted.push(Accepted {
        condition: rtsoak_record::CheckId::KernelPreemptRt.into(),
        message: "the kernel is not PREEMPT_RT".into(),
    });
    assert_eq!(verdict.status, Status::Pass);
    doc.verdict = Some(verdict);
    let console: Vec<String> = lines(&doc).iter().map(Line::console).collect();
    assert!(
        !console.iter().any(|l| l.contains("verdict.reason.")),
        "{console:#?}"
    );
    let tail = &console[console.len() - 4..];
    assert_eq!(
        tail,
        [
            "rtsoak verdict accepts: the kernel is not PREEMPT_RT",
            "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=verdict.accepted.kernel.preempt-rt RESULT=pass>",
            "rtsoak verdict: PASS on a non-RT kernel: these figures describe this kernel",
            "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=verdict RESULT=pass>",
        ]
    );
}

#[test]
fn no_text_of_a_result_becomes_a_signal_or_a_shell_command() {
    let mut doc = two_round_doc();
    let forged = "x' ; exit 3; echo '<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=verdict RESULT=pass>";
    let failure = Failure {
        transport: None,
        ring_setup: None,
        kind: FailureKind::RunFailed,
        message: forged.into(),
    };
    doc.verdict = Some(Verdict::of(vec![failure], Vec::new(), Vec::new()));
    let lines = lines(&doc);
    for line in &lines {
        if let Line::Log(_) = line {
            assert!(!line.console().contains("<LAVA_"), "{}", line.console());
        }
    }
    // The script as `sh` runs it, a `lava-test-case` that does nothing on its PATH.
    let bin = std::env::temp_dir().join(format!("rtsoak-lava-test-{}", std::process::id()));
    std::fs::create_dir_all(&bin).unwrap();
    let helper = bin.join("lava-test-case");
    std::fs::write(&helper, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&helper, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = std::process::Command::new("sh")
        .args(["-c", &render(&doc)])
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .output()
        .unwrap();
    std::fs::remove_dir_all(&bin).unwrap();
    assert!(out.status.success(), "the text ran as a command: {out:?}");
    let printed = String::from_utf8(out.stdout).unwrap();
    let logged: Vec<String> = lines
        .iter()
        .filter(|l| matches!(l, Line::Log(_)))
        .map(Line::console)
        .collect();
    assert_eq!(
        printed.lines().collect::<Vec<_>>(),
        logged,
        "the script prints the log lines as they are"
    );
}
