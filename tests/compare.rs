//! `compare` in rounds, `report` on what it saved, exports in the result directory, a killed
//! coordinator, and `--break-on` with the kernel's tracefs. Behaviour only: no latency figure
//! is asserted (this VM's timer jitter is large).

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{alive, load, rtsoak, rtsoak_path, serial, skip};
use rtsoak_analysis::merge::by_transport;
use rtsoak_record::RingSetup;
use rtsoak_record::result::RunStatus;

/// The data rows of the table whose heading line starts with `heading`, split at whitespace
/// (the transport names here have none; the header is left out, its names do).
fn table_rows(table: &str, heading: &str) -> Vec<Vec<String>> {
    table
        .lines()
        .skip_while(|line| !line.starts_with(heading))
        .skip(2)
        .take_while(|line| !line.is_empty())
        .map(|line| line.split_whitespace().map(str::to_string).collect())
        .collect()
}

#[test]
fn a_two_round_compare_fills_every_column_and_report_reprints_the_same_table() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let compare = rtsoak()
        .args([
            "compare",
            "-q",
            "--details",
            "--profile",
            "ci",
            "-t",
            "futex,msg-ring,eventfd,signalfd",
            "--duration",
            "1s",
            "--rounds",
            "2",
            "--export",
            "markdown,hdr-log,cyclictest,prometheus,hgrm",
            "-o",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    let doc = load(dir.path());
    common::assert_passed_or_starved(&compare, &doc);
    let table = String::from_utf8(compare.stdout).unwrap();
    let order: Vec<(&str, u32)> = doc
        .runs
        .iter()
        .map(|r| (r.transport.as_str(), r.round))
        .collect();
    let transports = ["futex", "msg-ring", "eventfd", "signalfd"];
    let expected: Vec<(&str, u32)> = [1, 2]
        .into_iter()
        .flat_map(|round| transports.map(|t| (t, round)))
        .collect();
    assert_eq!(order, expected, "interleaved: A B C D, A B C D");
    assert!(doc.runs.iter().all(|r| r.status == RunStatus::Completed));

    // Every column of every transport is filled; `-` only where the figure cannot exist: the
    // own-wake figures of a transport that cannot tell its own wake apart, and planned periods
    // or a series the result does not hold.
    let merged = by_transport(&doc);
    let rows = table_rows(&table, "Runs and integrity");
    assert_eq!(rows.len(), 4, "{table}");
    for ((row, transport), t) in rows.iter().zip(transports).zip(&merged) {
        assert_eq!(
            row.len(),
            14,
            "every column of {transport} is filled: {row:?}"
        );
        assert_eq!(row[0], transport);
        assert_eq!(row[1], "2", "two runs merged");
        assert_eq!(row[3], t.integrity.sent.to_string());
        let attributable = row[11] != "none";
        assert_eq!(attributable, t.integrity.own_wake.attributable(), "{row:?}");
        for (i, cell) in row.iter().enumerate() {
            let may_be_dash = match i {
                2 => t.integrity.planned_periods == 0,
                6 | 10 => !attributable,
                _ => false,
            };
            assert!(may_be_dash || cell != "-", "column {i} of {row:?}");
        }
    }
    for (heading, series) in [
        ("timer", "timer"),
        ("send call", "send_call"),
        ("fan-out", "fanout"),
        ("delivery", "delivery"),
        ("own wake", "own_wake"),
        ("handling", "handling"),
    ] {
        let rows = table_rows(&table, &format!("{heading}: "));
        assert_eq!(rows.len(), 4, "{heading}: {table}");
        for ((row, transport), t) in rows.iter().zip(transports).zip(&merged) {
            assert_eq!(row.len(), 10, "{heading} of {transport}: {row:?}");
            assert_eq!(row[0], transport);
            let shown = t.series.contains_key(series)
                && (series != "own_wake" || t.integrity.own_wake.attributable());
            let filled = row[1..].iter().all(|cell| cell != "-");
            let dashes = row[1..].iter().all(|cell| cell == "-");
            assert!(if shown { filled } else { dashes }, "{heading}: {row:?}");
        }
    }
    for series in ["timer", "send_call", "fanout", "delivery"] {
        let recorded = merged.iter().all(|t| t.series.contains_key(series));
        assert!(recorded, "every transport records {series}");
    }
    assert!(table.contains("\nPer round "), "{table}");

    let report = rtsoak()
        .args(["report", "--details"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(report.status.success());
    assert_eq!(
        String::from_utf8(report.stdout).unwrap(),
        table,
        "report reprints the table from the saved JSON, byte for byte"
    );
    for file in [
        "table.md",
        "intervals.hlog",
        "histogram.txt",
        "rtsoak.prom",
        "hgrm/eventfd.delivery.hgrm",
        "hgrm/eventfd.send_call.hgrm",
    ] {
        let text = std::fs::read_to_string(dir.path().join(file)).unwrap();
        assert!(!text.is_empty(), "{file}");
    }
}

#[test]
fn report_writes_a_format_to_a_file_and_refuses_what_is_not_a_result() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let run = rtsoak()
        .args([
            "run",
            "-q",
            "-t",
            "eventfd",
            "--profile",
            "ci",
            "--duration",
            "1s",
            "-o",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    common::assert_passed_or_starved(&run, &load(dir.path()));
    let out = dir.path().join("metrics.prom");
    rtsoak()
        .args(["report", "--format", "prometheus", "-o"])
        .arg(&out)
        .arg(dir.path().join("result.json"))
        .assert()
        .success();
    let text = std::fs::read_to_string(&out).unwrap();
    // Every series carries the identity labels first (profile, kernel, board), then its own.
    assert!(
        text.lines()
            .any(|line| line.starts_with("rtsoak_messages_sent{")
                && line.contains("transport=\"eventfd\",ring_setup=")),
        "{text}"
    );

    // A directory format goes into a directory, one file per distribution, never to stdout.
    let refused = rtsoak()
        .args(["report", "--format", "hgrm"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("give --output DIR"));
    let hgrm = dir.path().join("distributions");
    rtsoak()
        .args(["report", "--format", "hgrm", "-o"])
        .arg(&hgrm)
        .arg(dir.path())
        .assert()
        .success();
    let delivery = std::fs::read_to_string(hgrm.join("eventfd.delivery.hgrm")).unwrap();
    assert!(delivery.starts_with("       Value     Percentile TotalCount 1/(1-Percentile)\n\n"));
    assert_eq!(
        delivery.matches("#[Max").count(),
        1,
        "one distribution per file"
    );

    let not_a_result = dir.path().join("metrics.prom");
    // A file that is not a result is a bad argument (2), never a failed run (5).
    let refused = rtsoak().arg("report").arg(&not_a_result).output().unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("is not JSON"));
    rtsoak()
        .args(["report", "--format", "pdf"])
        .arg(dir.path())
        .assert()
        .code(2);
}

#[test]
fn killing_the_coordinator_during_the_third_run_leaves_the_first_two_saved() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(rtsoak_path())
        .args([
            "compare",
            "-q",
            "--profile",
            "ci",
            "-t",
            "futex,msg-ring,eventfd,signalfd",
        ])
        .args(["--duration", "2s", "-o"])
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let result = dir.path().join("result.json");
    let deadline = Instant::now() + Duration::from_secs(60);
    while saved_runs(&result) < 2 {
        // A compare that ended early (another soak holding the RT CPUs exits 6) says why.
        if let Some(status) = child.try_wait().unwrap() {
            let mut stderr = String::new();
            let _ = std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr);
            panic!("compare ended ({status}) before two runs were saved: {stderr}");
        }
        assert!(Instant::now() < deadline, "two runs were never saved");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The third run is starting or under way: kill the coordinator outright.
    std::thread::sleep(Duration::from_millis(500));
    let pid = child.id() as i32;
    child.kill().unwrap();
    child.wait().unwrap();

    let doc = load(dir.path());
    assert_eq!(doc.runs.len(), 2);
    assert!(doc.runs.iter().all(|r| r.status == RunStatus::Completed));
    assert!(doc.finished_at.is_none(), "the invocation never finished");
    let deadline = Instant::now() + Duration::from_secs(5);
    while worker_of(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!worker_of(pid), "no worker outlives its coordinator");
}

fn saved_runs(path: &Path) -> usize {
    rtsoak::store::load(path).map_or(0, |doc| doc.runs.len())
}

/// True if a process whose parent was `pid` (a worker) is still alive.
fn worker_of(pid: i32) -> bool {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|child| alive(*child))
        .any(|child| {
            std::fs::read_to_string(format!("/proc/{child}/stat"))
                .ok()
                .and_then(|stat| {
                    let after = stat.rsplit_once(')')?.1.to_string();
                    after.split_whitespace().nth(1)?.parse::<i32>().ok()
                })
                == Some(pid)
        })
}

const TRACEFS: &str = "/sys/kernel/tracing";

#[test]
fn break_on_marks_the_trace_stops_tracing_and_records_the_sample() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let tracing_on = Path::new(TRACEFS).join("tracing_on");
    let args = |dir: &Path| {
        let mut command = rtsoak();
        command
            .args([
                "run",
                "-q",
                "-t",
                "eventfd",
                "--profile",
                "ci",
                "--duration",
                "1s",
            ])
            .args(["--break-on", "1", "-o"])
            .arg(dir);
        command
    };
    if !common::is_root() {
        // An ordinary user can neither mount tracefs nor write its files: refused up front.
        let out = args(dir.path()).output().unwrap();
        assert_eq!(out.status.code(), Some(5));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("--break-on"), "{stderr}");
        assert!(!dir.path().join("result.json").exists(), "nothing ran");
        skip("tracing needs root: checked the refusal only");
        return;
    }
    // rtsoak mounts tracefs where nothing is (tests/explain.rs shows it on a run); here it is
    // mounted the same way first, to read tracing_on before the run.
    let mount = rtsoak_sys::trace::mount_if_missing();
    assert!(
        !matches!(mount, rtsoak_sys::trace::Mount::Failed(_)),
        "{mount:?}"
    );
    let before = std::fs::read_to_string(&tracing_on).unwrap();
    std::fs::write(Path::new(TRACEFS).join("trace"), "").unwrap(); // empty the buffer
    // A delivery always takes longer than 1 us: the break fires on the first measured message.
    let out = args(dir.path()).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = load(dir.path());
    let run = &doc.runs[0];
    let event = run.break_event.expect("the break is recorded");
    assert!(event.value_ns > 1_000);
    assert!(event.marker_written && event.trace_stopped && !event.continued);
    assert_eq!(run.status, RunStatus::Interrupted);
    assert_eq!(run.reason.as_deref(), Some("stopped by --break-on"));
    assert!(
        run.integrity.sent < 1_900,
        "the run stopped early: {:?}",
        run.integrity
    );
    assert_eq!(run.integrity.lost, 0);
    assert_eq!(std::fs::read_to_string(&tracing_on).unwrap().trim(), "0");
    let trace = std::fs::read_to_string(Path::new(TRACEFS).join("trace")).unwrap();
    // Publisher and subscriber may both cross 1 us; the result names the one whose marker the
    // buffer kept (tracing is off after the first).
    let marker = format!(
        "rtsoak break: {} {} ns > 1000 ns, seq {}",
        event.series.name(),
        event.value_ns,
        event.seq
    );
    assert!(
        trace.contains(&marker),
        "{marker} not in the trace buffer:\n{trace}"
    );
    std::fs::write(&tracing_on, before.trim()).unwrap();
}

#[test]
fn a_comparison_of_ring_setups_reports_each_setup_as_its_own_row() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let output = rtsoak()
        .args([
            "compare",
            "-q",
            "--profile",
            "ci",
            "-t",
            "eventfd",
            "--duration",
            "1s",
        ])
        .args(["--ring-setup", "defer-taskrun,coop-taskrun,none"])
        .args(["--export", "hdr-log", "-o"])
        .arg(dir.path())
        .output()
        .unwrap();
    let doc = load(dir.path());
    common::assert_passed_or_starved(&output, &doc);
    // The result keeps the registry name and the setup apart; the label is for tables.
    let rows: Vec<(&str, Option<RingSetup>)> = doc
        .runs
        .iter()
        .map(|r| (r.transport.as_str(), r.ring_setup_requested))
        .collect();
    assert_eq!(
        rows,
        [
            ("eventfd", Some(RingSetup::DeferTaskrun)),
            ("eventfd", Some(RingSetup::CoopTaskrun)),
            ("eventfd", Some(RingSetup::None)),
        ]
    );
    for run in &doc.runs {
        assert_eq!(
            run.ring_setup, run.ring_setup_requested,
            "each ran with the setup it asked for"
        );
        assert_eq!(run.integrity.lost, 0);
    }
    let table = String::from_utf8_lossy(&output.stdout);
    for label in [
        "eventfd (defer-taskrun)",
        "eventfd (coop-taskrun)",
        "eventfd (none)",
    ] {
        assert!(table.contains(label), "{table}");
    }
    // The interval log tags each setup as a part of its own, readable by the hdrhistogram
    // crate's reader and by a reader that splits lines at spaces and commas as Java's does.
    let log = std::fs::read_to_string(dir.path().join("intervals.hlog")).unwrap();
    let mut tags = std::collections::BTreeSet::new();
    for line in log.lines().filter(|l| l.starts_with("Tag=")) {
        let tokens: Vec<&str> = line.split([' ', ',']).collect();
        assert_eq!(tokens.len(), 5, "split as Java splits it: {tokens:?}");
        tags.insert(tokens[0].trim_start_matches("Tag=").to_string());
    }
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry, Tag};
    let mut read = std::collections::BTreeSet::new();
    for entry in IntervalLogIterator::new(log.as_bytes()) {
        if let LogEntry::Interval(interval) = entry.expect("the crate reads every line") {
            read.insert(interval.tag().expect("tagged").as_str().to_string());
        }
    }
    assert_eq!(read, tags);
    for setup in ["defer-taskrun", "coop-taskrun", "none"] {
        for series in ["send_call", "delivery"] {
            let tag = format!("eventfd/{setup}/{series}");
            assert!(Tag::new(&tag).is_some());
            assert!(tags.contains(&tag), "{tag} missing from {tags:?}");
        }
    }
}
