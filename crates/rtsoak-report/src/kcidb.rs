//! KCIDB I/O (schema v4.5, the version `kcidb-io` validates it at in the analysis tests): one
//! checkout (the kernel release), one build (the kernel on this host and arch) and one test per
//! transport and series, path `rtsoak.<transport>[.<ring setup>].<series>`, plus
//! `rtsoak.<transport>` for the run and `rtsoak.verdict`. Status: PASS; FAIL where the verdict
//! failed it (a breached limit of the series, a lost message, a transport error); ERROR for a
//! run that failed or was interrupted; SKIP for an unsupported transport or an inconclusive
//! verdict; DONE for a figure nothing judges. A series test's `number` is its longest sample in
//! microseconds; p99 and over-threshold per million are in `misc`. The kernel and board are the
//! `environment` (comment and misc), the result files the `output_files` (relative `file:`
//! URLs: the document lives beside them). Ids are `rtsoak:<host>:<start>:<path>`: two boards
//! starting in the same second do not collide. The `rtsoak.verdict` test's `misc` holds the
//! verdict line (on a development profile's PASS, what it is not), its reasons and the caveats
//! with their severity. Pure: the document comes from the saved result alone.

use serde_json::{Value, json};

use rtsoak_analysis::merge::{TransportRuns, by_transport};
use rtsoak_record::result::{ResultDoc, RunStatus};
use rtsoak_record::{Series, SeriesKey};

/// The schema version written, as kcidb-io names it.
const VERSION: (u32, u32) = (4, 5);
const ORIGIN: &str = "rtsoak";
/// The series reported, as the verdict judges them.
const SERIES: [Series; 2] = [Series::SendCall, Series::Delivery];

/// Render `doc` as a KCIDB I/O document.
pub(crate) fn render(doc: &ResultDoc) -> Vec<u8> {
    let release = doc.host.kernel_release.as_deref().unwrap_or("unknown");
    let hostname = doc.host.hostname.as_deref().unwrap_or("unknown");
    let stamp = &doc.started_at;
    let host_id = super::identity::host_id(&doc.host);
    let checkout_id = format!("{ORIGIN}:{release}");
    let build_id = format!("{ORIGIN}:{release}:{}:{hostname}", doc.host.arch);
    let environment = json!({
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
    });
    let output_files = json!([{"name": "result.json", "url": "file:result.json"}]);
    let mut tests = Vec::new();
    let test = |path: String, status: &str, number: Option<(f64, &str)>, misc: Value| {
        let mut t = json!({
            "id": format!("{ORIGIN}:{host_id}:{stamp}:{path}"),
            "build_id": build_id,
            "origin": ORIGIN,
            "path": path,
            "status": status,
            "start_time": stamp,
            "environment": environment,
            "output_files": output_files,
            "misc": misc,
        });
        if let Some((value, unit)) = number {
            t["number"] = json!({"value": value, "unit": unit});
        }
        t
    };
    for t in by_transport(doc) {
        let prefix = path_of(&t);
        let (run_status, figure_status) = statuses(doc, &t);
        let i = &t.integrity;
        tests.push(test(
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
            let per_million = s.over_threshold_per_million();
            tests.push(test(
                format!("{prefix}.{name}"),
                figure_status(name),
                Some((s.max_ns as f64 / 1e3, "us")),
                json!({"count": s.count, "p99_us": s.p99_ns as f64 / 1e3,
                       "longest_us": s.max_ns as f64 / 1e3,
                       "over_threshold_per_million": per_million}),
            ));
        }
    }
    let verdict = match doc.verdict.as_ref().map(|v| v.status) {
        Some(rtsoak_record::Status::Pass) => "PASS",
        Some(rtsoak_record::Status::Fail) => "FAIL",
        Some(rtsoak_record::Status::Inconclusive) | None => "SKIP",
    };
    tests.push(test(
        format!("{ORIGIN}.verdict"),
        verdict,
        None,
        verdict_misc(doc),
    ));
    let document = json!({
        "version": {"major": VERSION.0, "minor": VERSION.1},
        "checkouts": [{"id": checkout_id, "origin": ORIGIN, "comment": format!("Linux {release}")}],
        "builds": [{"id": build_id, "checkout_id": checkout_id, "origin": ORIGIN,
                    "architecture": doc.host.arch, "comment": format!("the running kernel of {hostname}")}],
        "tests": tests,
    });
    let mut out = super::escape::pretty_json(&document).unwrap_or_default();
    out.push('\n');
    out.into_bytes()
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

/// `rtsoak.futex`, or `rtsoak.futex.defer-taskrun` in a ring-setup comparison.
fn path_of(t: &TransportRuns<'_>) -> String {
    match t.ring_setup {
        Some(setup) => format!("{ORIGIN}.{}.{}", t.transport, setup.name()),
        None => format!("{ORIGIN}.{}", t.transport),
    }
}

/// The run's status, and a function giving each series' status.
fn statuses<'a>(
    doc: &'a ResultDoc,
    t: &'a TransportRuns<'_>,
) -> (&'static str, impl Fn(&str) -> &'static str + 'a) {
    let verdict = doc.verdict.as_ref();
    let names_it = move |transport: &Option<String>, setup: &Option<rtsoak_record::RingSetup>| {
        transport.as_deref() == Some(t.transport) && (setup.is_none() || *setup == t.ring_setup)
    };
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
            .any(|i| names_it(&i.transport, &i.ring_setup))
    }) {
        "SKIP"
    } else {
        "PASS"
    };
    let series = move |name: &str| {
        if unsupported {
            "SKIP"
        } else if verdict.is_some_and(|v| {
            v.breaches
                .iter()
                .any(|b| names_it(&b.transport, &b.ring_setup) && b.series.as_deref() == Some(name))
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
            assert!(
                ["PASS", "FAIL", "ERROR", "DONE", "SKIP"].contains(&t["status"].as_str().unwrap())
            );
        }
    }
}
