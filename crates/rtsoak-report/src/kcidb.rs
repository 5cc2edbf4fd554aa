//! KCIDB I/O (schema v4.5, the version `kcidb-io` validates it at in the analysis tests): one
//! checkout (the kernel release), one build (the kernel on this host and arch) and one test per
//! transport and series, path `rtsoak.<transport>[.<ring setup>].<series>`, plus
//! `rtsoak.<transport>` for the run and `rtsoak.verdict`. Status: PASS; FAIL where the verdict
//! failed it (a breached limit of the series, a lost message, a transport error); ERROR for a
//! run that failed or was interrupted; SKIP for an unsupported transport or an inconclusive
//! verdict; DONE for a figure nothing judges. A series test's `number` is its longest sample in
//! microseconds; p99 and over-threshold per million are in `misc`. The kernel and board are the
//! `environment` (comment and misc), the result files the `output_files` (relative `file:`
//! URLs: the document lives beside them). Every object is submitted under the plan's origin
//! (`export.kcidb_origin`, `--kcidb-origin`; `rtsoak` by default), and every id starts with it:
//! test ids are `<origin>:<host>:<start>:<path>`, so two boards starting in the same second do
//! not collide. Paths stay `rtsoak.…` whoever submits: they name the test. The
//! `rtsoak.verdict` test's `misc` holds the verdict line (on a development profile's PASS, what
//! it is not), its reasons and the caveats with their severity. Pure: the document comes from
//! the saved result alone.

use serde_json::{Value, json};

use super::text::is_about;
use rtsoak_analysis::merge::{TransportRuns, by_transport};
use rtsoak_record::result::{ResultDoc, RunStatus};
use rtsoak_record::{Series, SeriesKey};

/// The schema version written, as kcidb-io names it.
const VERSION: (u32, u32) = (4, 5);
/// The first word of every test's path: the test is rtsoak's, whoever submits it.
const TEST_PATH_ROOT: &str = "rtsoak";
/// The series reported, as the verdict judges them.
const SERIES: [Series; 2] = [Series::SendCall, Series::Delivery];

/// Render `doc` as a KCIDB I/O document, its objects submitted under the plan's origin.
pub(crate) fn render(doc: &ResultDoc) -> Vec<u8> {
    let origin = doc.plan.export.kcidb_origin.as_str();
    let release = doc.host.kernel_release.as_deref().unwrap_or("unknown");
    let hostname = doc.host.hostname.as_deref().unwrap_or("unknown");
    let checkout_id = format!("{origin}:{release}");
    let build_id = format!("{origin}:{release}:{}:{hostname}", doc.host.arch);
    let tests = Tests {
        origin,
        id_prefix: format!(
            "{origin}:{}:{}",
            super::identity::host_id(&doc.host),
            doc.started_at
        ),
        build_id: &build_id,
        start_time: &doc.started_at,
        environment: environment(doc, release, hostname),
    };
    let document = json!({
        "version": {"major": VERSION.0, "minor": VERSION.1},
        "checkouts": [{"id": checkout_id, "origin": origin, "comment": format!("Linux {release}")}],
        "builds": [{"id": build_id, "checkout_id": checkout_id, "origin": origin,
                    "architecture": doc.host.arch, "comment": format!("the running kernel of {hostname}")}],
        "tests": tests.of(doc),
    });
    let mut out = super::escape::pretty_json(&document).unwrap_or_default();
    out.push('\n');
    out.into_bytes()
}

/// The host as every test's `environment`: a comment a person reads, the facts in `misc`.
fn environment(doc: &ResultDoc, release: &str, hostname: &str) -> Value {
    json!({
        "comment": format!("{hostname} ({}), Linux {release}{}", doc.host.arch,
            if doc.host.preempt_rt { " PREEMPT_RT" } else { ", not PREEMPT_RT" }),
        "misc": {
            "hostname": hostname,
            "kernel_release": release,
            "kernel_version": doc.host.kernel_version,
            "arch": doc.host.arch,
            "preempt_rt": doc.host.preempt_rt,
            "board": super::identity::board(&doc.host),
            "board_compatible": doc.host.board.as_ref().map(|b| &b.compatible),
            "l4t_release": doc.host.board.as_ref().and_then(|b| b.l4t_release.as_deref()),
            "vendor_rt_kernel": doc.host.board.as_ref().and_then(|b| b.vendor_rt_kernel),
            "profile": doc.plan.profile,
            "rtsoak_version": doc.tool.version,
        },
    })
}

/// What every test of one document shares.
struct Tests<'a> {
    origin: &'a str,
    /// `<origin>:<host>:<start>`: a test's id is this and its path, unique per board and run.
    id_prefix: String,
    build_id: &'a str,
    start_time: &'a str,
    environment: Value,
}

impl Tests<'_> {
    /// The tests of `doc`: per transport the run and each judged series, then the verdict.
    fn of(&self, doc: &ResultDoc) -> Vec<Value> {
        let mut tests = Vec::new();
        for t in by_transport(doc) {
            let prefix = super::text::dotted_name(&t);
            let (run_status, figure_status) = statuses(doc, &t);
            let i = &t.integrity;
            tests.push(self.test(
                prefix.clone(),
                run_status,
                Some((i.sent as f64, "messages")),
                json!({"lost": i.lost, "missed_periods": i.missed_periods,
                       "transport_failures": i.transport_failures(),
                       "measured_s": t.measured_ns() as f64 / 1e9}),
            ));
            for judged in SERIES {
                let Some(series) = t.series.get(&SeriesKey::Rt(judged)) else {
                    continue;
                };
                let name = judged.name();
                let s = &series.summary;
                tests.push(self.test(
                    format!("{prefix}.{name}"),
                    figure_status(judged),
                    Some((s.max_ns as f64 / 1e3, "us")),
                    json!({"count": s.count, "p99_us": s.p99_ns as f64 / 1e3,
                           "longest_us": s.max_ns as f64 / 1e3,
                           "over_threshold_per_million": s.over_threshold_per_million()}),
                ));
            }
        }
        let verdict = match doc.verdict.as_ref().map(|v| v.status) {
            Some(rtsoak_record::Status::Pass) => "PASS",
            Some(rtsoak_record::Status::Fail) => "FAIL",
            Some(rtsoak_record::Status::Inconclusive) | None => "SKIP",
        };
        let path = format!("{TEST_PATH_ROOT}.verdict");
        tests.push(self.test(path, verdict, None, verdict_misc(doc)));
        tests
    }

    /// One test: its id from the path, the shared build, time, environment and files.
    fn test(&self, path: String, status: &str, number: Option<(f64, &str)>, misc: Value) -> Value {
        let mut test = json!({
            "id": format!("{}:{path}", self.id_prefix),
            "build_id": self.build_id,
            "origin": self.origin,
            "path": path,
            "status": status,
            "start_time": self.start_time,
            "environment": self.environment,
            "output_files": [{"name": "result.json", "url": "file:result.json"}],
            "misc": misc,
        });
        if let Some((value, unit)) = number {
            test["number"] = json!({"value": value, "unit": unit});
        }
        test
    }
}

/// The verdict test's `misc`: the verdict line, its reasons, what the profile accepted, and
/// the caveats with their severity.
fn verdict_misc(doc: &ResultDoc) -> Value {
    let Some(verdict) = &doc.verdict else {
        return json!({"verdict": "none: the invocation did not finish",
                      "caveats": super::verdict_text::caveat_lines(doc)});
    };
    json!({
        "verdict": super::verdict_text::status_phrase(verdict),
        "reasons": super::verdict_text::reasons(verdict),
        "accepted": verdict.accepted.iter().map(|a| &a.condition).collect::<Vec<_>>(),
        "caveats": super::verdict_text::caveat_lines(doc),
    })
}

/// The run's status, and a function giving each series' status.
fn statuses<'a>(
    doc: &'a ResultDoc,
    t: &'a TransportRuns<'_>,
) -> (&'static str, impl Fn(Series) -> &'static str + 'a) {
    let verdict = doc.verdict.as_ref();
    let unsupported = t.status == RunStatus::Unsupported;
    let run = if unsupported {
        "SKIP"
    } else if t.status != RunStatus::Completed {
        "ERROR"
    } else if t.integrity.lost > 0 || !t.integrity.transport_failures().is_empty() {
        "FAIL"
    } else if verdict.is_some_and(|v| {
        v.inconclusive
            .iter()
            .any(|i| is_about(t, &i.transport, i.ring_setup))
    }) {
        "SKIP"
    } else {
        "PASS"
    };
    let series = move |judged: Series| {
        if unsupported {
            "SKIP"
        } else if verdict.is_some_and(|v| {
            v.breaches
                .iter()
                .any(|b| is_about(t, &b.transport, b.ring_setup) && b.series == Some(judged))
        }) {
            "FAIL"
        } else if verdict.is_some() {
            "PASS"
        } else {
            "DONE"
        }
    };
    (run, series)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsoak_testing::fixture::two_round_doc;

    #[test]
    fn the_document_pins_its_version_and_keys_tests_by_origin_and_path() {
        let doc: Value = serde_json::from_slice(&render(&two_round_doc())).unwrap();
        assert_eq!(doc["version"], json!({"major": 4, "minor": 5}));
        let tests = doc["tests"].as_array().unwrap();
        assert!(tests.iter().any(|t| t["path"] == "rtsoak.futex.delivery"));
        for t in tests {
            assert!(t["id"].as_str().unwrap().starts_with("rtsoak:"), "{t}");
            assert_eq!(t["origin"], "rtsoak");
            assert!(t["path"].as_str().unwrap().starts_with("rtsoak."), "{t}");
            assert!(
                ["PASS", "FAIL", "ERROR", "DONE", "SKIP"].contains(&t["status"].as_str().unwrap())
            );
        }
    }

    #[test]
    fn every_object_and_id_is_the_configured_origins_and_the_paths_stay_rtsoaks() {
        let mut doc = two_round_doc();
        doc.plan.export.kcidb_origin = "board_lab".parse().unwrap();
        let doc: Value = serde_json::from_slice(&render(&doc)).unwrap();
        let objects = ["checkouts", "builds", "tests"]
            .iter()
            .flat_map(|kind| doc[kind].as_array().unwrap());
        for object in objects {
            assert_eq!(object["origin"], "board_lab", "{object}");
            assert!(
                object["id"].as_str().unwrap().starts_with("board_lab:"),
                "{object}"
            );
        }
        for test in doc["tests"].as_array().unwrap() {
            assert!(test["build_id"].as_str().unwrap().starts_with("board_lab:"));
            assert!(
                test["path"].as_str().unwrap().starts_with("rtsoak."),
                "{test}"
            );
        }
        let build = &doc["builds"][0];
        assert!(
            build["checkout_id"]
                .as_str()
                .unwrap()
                .starts_with("board_lab:")
        );
    }
}
