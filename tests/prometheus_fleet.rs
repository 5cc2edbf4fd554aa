//! The Prometheus export as a fleet uses it, against the real tools (the distribution's
//! `prometheus` and `prometheus-node-exporter`, which `.ci/run` installs): a real run writes its
//! node_exporter textfile, `promtool check metrics` finds nothing to say about it, a real
//! node_exporter serves it, a real Prometheus scrapes it, a `histogram_quantile` over the
//! latency buckets answers, and every query of the Grafana dashboard in `analysis/grafana/`
//! parses and returns data.

mod common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{rtsoak, serial, skip};

/// A child process killed and reaped when the test ends, whichever way.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A port nobody listens on right now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `text` with everything but unreserved characters percent-encoded, for a query string.
fn url_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// GET `path` from 127.0.0.1:`port`: the body, or `None` if nothing answered.
fn get(port: u16, path: &str) -> Option<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_string())
}

/// An instant query's result vector, once the query succeeds (`None`: an error or no answer).
fn query(port: u16, expr: &str) -> Option<Vec<serde_json::Value>> {
    let body = get(port, &format!("/api/v1/query?query={}", url_encode(expr)))?;
    let reply: serde_json::Value = serde_json::from_str(&body).ok()?;
    assert_eq!(
        reply["status"], "success",
        "Prometheus refused the query {expr}: {reply}"
    );
    reply["data"]["result"].as_array().cloned()
}

fn installed(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

#[test]
fn a_real_prometheus_scraping_a_real_runs_textfile_answers_the_fleet_queries() {
    let _serial = serial();
    for program in ["promtool", "prometheus", "prometheus-node-exporter"] {
        if !installed(program) {
            return skip(&format!(
                "{program} not found: install prometheus and prometheus-node-exporter"
            ));
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let textfiles = dir.path().join("textfiles");
    std::fs::create_dir(&textfiles).unwrap();
    let run = rtsoak()
        .args([
            "compare",
            "-q",
            "--profile",
            "ci",
            "-t",
            "eventfd,futex-syscall",
        ])
        .args(["--duration", "1s", "--textfile-dir"])
        .arg(&textfiles)
        .arg("-o")
        .arg(dir.path().join("result"))
        .output()
        .unwrap();
    common::assert_passed_or_starved(&run, &common::load(&dir.path().join("result")));
    let file = textfiles.join("rtsoak-ci.prom");

    // promtool's lint: no problem reported, not even a naming one.
    let check = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::fs::File::open(&file).unwrap())
        .output()
        .unwrap();
    assert!(
        check.status.success() && check.stdout.is_empty() && check.stderr.is_empty(),
        "promtool check metrics: {}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );

    let exporter_port = free_port();
    let _exporter = Running(
        Command::new("prometheus-node-exporter")
            .args(["--collector.disable-defaults", "--collector.textfile"])
            .arg(format!(
                "--collector.textfile.directory={}",
                textfiles.display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{exporter_port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let prometheus_port = free_port();
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: rtsoak\n    \
             static_configs:\n      - targets: ['127.0.0.1:{exporter_port}']\n"
        ),
    )
    .unwrap();
    let _prometheus = Running(
        Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("tsdb").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{prometheus_port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );

    // The fleet query: the p99 of delivery over every board's buckets, per transport.
    let fleet = "histogram_quantile(0.99, sum by (le, transport) \
                 (rtsoak_latency_seconds_bucket{series=\"delivery\"}))";
    let deadline = Instant::now() + Duration::from_secs(90);
    let answer = loop {
        if let Some(result) = query(prometheus_port, fleet).filter(|r| r.len() == 2) {
            break result;
        }
        assert!(
            Instant::now() < deadline,
            "Prometheus did not answer {fleet} within 90 s"
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    let doc = common::load(&dir.path().join("result"));
    for sample in &answer {
        let transport = sample["metric"]["transport"].as_str().unwrap();
        let value: f64 = sample["value"][1].as_str().unwrap().parse().unwrap();
        let run = doc.runs.iter().find(|r| r.transport == transport).unwrap();
        let delivery = &run.series["delivery"].summary;
        assert!(
            value.is_finite() && value > 0.0 && value <= 0.01,
            "{transport}: p99 {value} s"
        );
        assert!(
            value * 1e9 >= delivery.p50_ns as f64,
            "{transport}: the fleet p99 {value} s is below the board's own p50"
        );
    }

    // Every query of the dashboard parses and returns data.
    let dashboard =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("analysis/grafana/rtsoak-fleet.json");
    let dashboard: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dashboard).unwrap()).unwrap();
    let mut queries = 0;
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            let expr = target["expr"]
                .as_str()
                .unwrap()
                .replace("$series", "delivery");
            let result = query(prometheus_port, &expr).unwrap_or_default();
            assert!(
                !result.is_empty(),
                "the panel {:?} query {expr} returned no data",
                panel["title"]
            );
            queries += 1;
        }
    }
    assert!(queries >= 8, "only {queries} dashboard queries");
}
