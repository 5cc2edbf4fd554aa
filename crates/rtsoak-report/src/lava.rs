//! LAVA test-case lines: one `lava-test-case NAME --result pass|fail|skip --measurement V
//! --units U` per transport and figure, then one for the verdict, as a LAVA test shell's
//! `lava-test-case` helper takes them, and the signal that helper prints for each
//! (`lava/rtsoak-compare.yaml` runs rtsoak in a test shell, where rtsoak prints the signals
//! itself).
//!
//! Names are `<transport>[.<ring setup>].<figure>` or `<transport>.<series>.<figure>` and the
//! last line's `verdict`, from letters, digits and `_-.` only: LAVA keeps a test case's name in
//! URLs and in its own log's signal lines, where spaces and slashes do not survive. A figure
//! fails where the verdict failed it (a breached limit of that series, a lost message, a
//! transport error); an unsupported transport's figures are skipped. Pure: the lines come from
//! the saved result alone.

use std::fmt::Write;

use super::text::us;
use rtsoak_analysis::merge::{TransportRuns, by_transport};
use rtsoak_record::result::{ResultDoc, RunStatus};
use rtsoak_record::{Series, SeriesKey, Status};

/// The series whose figures are reported: the two the verdict judges.
const SERIES: [Series; 2] = [Series::SendCall, Series::Delivery];

/// Render `doc` as `lava-test-case` lines.
pub fn render(doc: &ResultDoc) -> String {
    let mut out = String::new();
    for t in by_transport(doc) {
        for (name, result, value, units) in lines(doc, &t) {
            let _ = writeln!(
                out,
                "lava-test-case {} --result {result} --measurement {value} --units {units}",
                case_name(&name)
            );
        }
    }
    let verdict = match doc.verdict.as_ref().map(|v| v.status) {
        Some(Status::Pass) => "pass",
        Some(Status::Fail) => "fail",
        Some(Status::Inconclusive) | None => "skip",
    };
    let _ = writeln!(out, "lava-test-case verdict --result {verdict}");
    out
}

/// The argument vectors of `text`'s lines, without the command name: what rtsoak passes to
/// `lava-test-case` when it calls it.
pub fn arguments(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .filter_map(|line| line.strip_prefix("lava-test-case "))
        .map(|rest| rest.split(' ').map(str::to_string).collect())
        .collect()
}

/// The signal LAVA's `lava-test-case` helper prints for `args` (a line's arguments, as
/// [`arguments`] gives them), word for word as the helper writes it: `TEST_CASE_ID`, `RESULT`,
/// then `UNITS` and `MEASUREMENT` where given. The dispatcher records a test case from it.
pub fn signal(args: &[String]) -> String {
    let value = |flag: &str| {
        args.iter()
            .position(|arg| arg == flag)
            .and_then(|at| args.get(at + 1))
    };
    let mut signal = format!(
        "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID={}",
        args.first().map_or("", String::as_str)
    );
    for (flag, key) in [
        ("--result", "RESULT"),
        ("--units", "UNITS"),
        ("--measurement", "MEASUREMENT"),
    ] {
        if let Some(value) = value(flag) {
            let _ = write!(signal, " {key}={value}");
        }
    }
    signal.push('>');
    signal
}

/// One transport's figures: (name, result, measurement, units).
fn lines(
    doc: &ResultDoc,
    t: &TransportRuns<'_>,
) -> Vec<(String, &'static str, String, &'static str)> {
    let prefix = match t.ring_setup {
        Some(setup) => format!("{}.{}", t.transport, setup.name()),
        None => t.transport.to_string(),
    };
    let verdict = doc.verdict.as_ref();
    let breached = |series: Option<&str>| {
        verdict.is_some_and(|v| {
            v.breaches.iter().any(|b| {
                b.transport.as_deref() == Some(t.transport)
                    && (b.ring_setup.is_none() || b.ring_setup == t.ring_setup)
                    && (series.is_none() || b.series.as_deref() == series)
            })
        })
    };
    let skip = t.status == RunStatus::Unsupported;
    let result = |failed: bool| match (skip, failed) {
        (true, _) => "skip",
        (false, true) => "fail",
        (false, false) => "pass",
    };
    let i = &t.integrity;
    let mut out = vec![
        (
            format!("{prefix}.messages"),
            result(t.status != RunStatus::Completed),
            i.sent.to_string(),
            "messages",
        ),
        (
            format!("{prefix}.missed-periods"),
            result(false),
            i.missed_periods.to_string(),
            "periods",
        ),
        (
            format!("{prefix}.lost"),
            result(i.lost > 0),
            i.lost.to_string(),
            "messages",
        ),
        (
            format!("{prefix}.transport-errors"),
            result(!i.transport_failures().is_empty()),
            i.transport_errors().to_string(),
            "errors",
        ),
    ];
    for judged in SERIES {
        let Some(series) = t.series.get(&SeriesKey::Rt(judged)) else {
            continue;
        };
        let name = judged.name();
        let s = &series.summary;
        let failed = breached(Some(name));
        let per_million = s.over_threshold_per_million();
        out.push((
            format!("{prefix}.{name}.over-threshold"),
            result(failed),
            format!("{per_million:.1}"),
            "per-million",
        ));
        if series.percentiles_known() {
            out.push((
                format!("{prefix}.{name}.p99"),
                result(failed),
                us(s.p99_ns),
                "us",
            ));
        }
        out.push((
            format!("{prefix}.{name}.longest"),
            result(failed),
            us(s.max_ns),
            "us",
        ));
    }
    out
}

/// `name` with every character LAVA does not take in a test case name made a `-`.
fn case_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_-.".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsoak_testing::fixture::two_round_doc;

    #[test]
    fn every_transport_and_figure_is_a_line_and_the_verdict_the_last() {
        insta::assert_snapshot!(render(&two_round_doc()));
    }

    #[test]
    fn names_hold_only_what_lava_takes_and_every_line_has_result_measurement_and_units() {
        let text = render(&two_round_doc());
        let args = arguments(&text);
        assert_eq!(args.len(), text.lines().count());
        for line in &args {
            assert!(
                line[0]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)),
                "{line:?}"
            );
            assert!(
                ["pass", "fail", "skip"].contains(&line[2].as_str()),
                "{line:?}"
            );
            if line[0] != "verdict" {
                assert_eq!(
                    (line[1].as_str(), line[3].as_str(), line[5].as_str()),
                    ("--result", "--measurement", "--units")
                );
                line[4].parse::<f64>().unwrap();
            }
        }
        assert_eq!(
            signal(&args[0]),
            format!(
                "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID={} RESULT={} UNITS={} MEASUREMENT={}>",
                args[0][0], args[0][2], args[0][6], args[0][4]
            )
        );
        assert_eq!(
            signal(args.last().unwrap()),
            format!(
                "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=verdict RESULT={}>",
                args.last().unwrap()[2]
            )
        );
        assert_eq!(
            case_name("futex (defer-taskrun)/x"),
            "futex--defer-taskrun--x"
        );
    }
}
