//! Prometheus text exposition format, for the node_exporter textfile collector (write it to
//! `<dir>/rtsoak.prom` atomically). Metric names start with `rtsoak_` and carry their unit
//! (`_seconds`); labels are `transport` and, for latencies, `series`. Figures are per transport
//! with its rounds merged, the same figures as the comparison table: latencies of every series
//! docs/figures.md defines, integrity counts (missed periods, piggybacked messages, each kind of
//! transport failure) and how far the transport tells its own wake apart. A figure a transport
//! cannot give (piggybacked without attribution) has no sample, never a 0 that would pass for
//! one.

use std::fmt::Write;

use super::REPORTED_SERIES;
use crate::result::merge::{TransportRuns, by_transport};
use crate::result::{ResultDoc, RunStatus};
use crate::stats::{Attribution, Integrity};

/// Reads one figure of a summary.
type Figure = fn(&crate::stats::Summary) -> u64;

/// Quantiles published in the latency summary.
const QUANTILES: [(&str, Figure); 5] = [
    ("0.5", |s| s.p50_ns),
    ("0.9", |s| s.p90_ns),
    ("0.99", |s| s.p99_ns),
    ("0.999", |s| s.p99_9_ns),
    ("0.9999", |s| s.p99_99_ns),
];

fn seconds(ns: u64) -> String {
    format!("{}", ns as f64 / 1e9)
}

/// A label value with `\`, `"` and newlines escaped.
fn label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// Render `doc` in the Prometheus text format.
pub fn render(doc: &ResultDoc) -> String {
    let merged = by_transport(doc);
    let measured: Vec<_> = merged
        .iter()
        .filter(|t| t.status != RunStatus::Unsupported)
        .collect();
    let mut out = String::new();

    family(
        &mut out,
        "rtsoak_latency_seconds",
        "summary",
        "Latency of the RT pair by series (send_call, delivery, timer, fanout, own_wake, \
         handling, member_refresh; docs/figures.md), HDR histogram quantiles.",
    );
    for t in &measured {
        for name in REPORTED_SERIES {
            let Some(series) = t.series.get(name) else {
                continue;
            };
            let labels = format!("transport=\"{}\",series=\"{name}\"", label(t.transport));
            for (quantile, value) in QUANTILES {
                let _ = writeln!(
                    out,
                    "rtsoak_latency_seconds{{{labels},quantile=\"{quantile}\"}} {}",
                    seconds(value(&series.summary))
                );
            }
            let sum_s = series.histogram.mean() * series.histogram.len() as f64 / 1e9;
            let _ = writeln!(out, "rtsoak_latency_seconds_sum{{{labels}}} {sum_s}");
            let _ = writeln!(
                out,
                "rtsoak_latency_seconds_count{{{labels}}} {}",
                series.summary.count
            );
        }
    }
    per_series(
        &mut out,
        &measured,
        "rtsoak_latency_max_seconds",
        "Longest sample (exact).",
        |s| seconds(s.max_ns),
    );
    per_series(
        &mut out,
        &measured,
        "rtsoak_latency_over_threshold_samples",
        "Samples above rtsoak_threshold_seconds (exact).",
        |s| s.over_threshold.to_string(),
    );
    per_transport(
        &mut out,
        &measured,
        "rtsoak_messages_sent",
        "Messages the RT publisher sent in the measured phase.",
        |t| t.integrity.sent.to_string(),
    );
    per_transport(
        &mut out,
        &measured,
        "rtsoak_messages_lost",
        "Messages never delivered within the delivery timeout; any loss fails the run.",
        |t| t.integrity.lost.to_string(),
    );
    counts(&mut out, &measured);
    family(
        &mut out,
        "rtsoak_own_wake_attribution",
        "gauge",
        "1 for how far the RT subscriber tells the RT publisher's own wake apart: exact, covering \
         or none (then there is no own_wake series and no piggybacked count).",
    );
    for t in &measured {
        let attribution = match t.integrity.own_wake {
            Attribution::Exact => "exact",
            Attribution::Covering => "covering",
            Attribution::None => "none",
        };
        let _ = writeln!(
            out,
            "rtsoak_own_wake_attribution{{transport=\"{}\",attribution=\"{attribution}\"}} 1",
            label(t.transport)
        );
    }
    per_transport(
        &mut out,
        &measured,
        "rtsoak_runs",
        "Runs (rounds) merged into the transport's figures.",
        |t| t.measured_runs().to_string(),
    );
    per_transport(
        &mut out,
        &merged.iter().collect::<Vec<_>>(),
        "rtsoak_run_ok",
        "1 if every run of the transport completed, 0 if one failed, was interrupted or is unsupported.",
        |t| u8::from(t.status == RunStatus::Completed).to_string(),
    );
    family(
        &mut out,
        "rtsoak_threshold_seconds",
        "gauge",
        "Over-threshold limit of the runs.",
    );
    let _ = writeln!(
        out,
        "rtsoak_threshold_seconds {}",
        seconds(doc.plan.threshold_ns)
    );
    family(
        &mut out,
        "rtsoak_preempt_rt",
        "gauge",
        "1 if the kernel was PREEMPT_RT.",
    );
    let _ = writeln!(out, "rtsoak_preempt_rt {}", u8::from(doc.host.preempt_rt));
    family(
        &mut out,
        "rtsoak_caveats",
        "gauge",
        "Conditions that weaken the result (see the result's caveats); 0 on a proper RT setup.",
    );
    let _ = writeln!(out, "rtsoak_caveats {}", doc.caveats.len());
    if let Some(at) = doc
        .finished_at
        .as_deref()
        .and_then(|t| humantime::parse_rfc3339_weak(t).ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
    {
        family(
            &mut out,
            "rtsoak_finished_timestamp_seconds",
            "gauge",
            "When the invocation finished, seconds since the epoch.",
        );
        let _ = writeln!(out, "rtsoak_finished_timestamp_seconds {}", at.as_secs());
    }
    out
}

fn per_series(
    out: &mut String,
    transports: &[&crate::result::merge::TransportRuns<'_>],
    name: &str,
    help: &str,
    value: fn(&crate::stats::Summary) -> String,
) {
    family(out, name, "gauge", help);
    for t in transports {
        for series in REPORTED_SERIES {
            if let Some(s) = t.series.get(series) {
                let _ = writeln!(
                    out,
                    "{name}{{transport=\"{}\",series=\"{series}\"}} {}",
                    label(t.transport),
                    value(&s.summary)
                );
            }
        }
    }
}

/// Reads one integrity count of a transport; none where it cannot exist.
type Count = fn(&Integrity) -> Option<u64>;

/// The integrity counts beside `rtsoak_messages_sent` and `rtsoak_messages_lost`.
const COUNTS: [(&str, &str, Count); 7] = [
    (
        "rtsoak_planned_periods",
        "Measured periods the plan gave the RT publisher (absent where the result does not \
         record them).",
        |i| (i.planned_periods > 0).then_some(i.planned_periods),
    ),
    (
        "rtsoak_missed_periods",
        "Measured periods whose deadline passed before the RT publisher could send: skipped, so \
         no histogram holds them.",
        |i| Some(i.missed_periods),
    ),
    (
        "rtsoak_messages_piggybacked",
        "RT messages first seen through another wakeup or the fallback poll (only where the own \
         wake is told apart).",
        |i| i.piggybacked,
    ),
    (
        "rtsoak_fallback_deliveries",
        "RT messages seen only through the fallback poll, no wakeup came; any fails the run.",
        |i| Some(i.fallback_deliveries),
    ),
    (
        "rtsoak_wake_errors",
        "The RT publisher's wake calls that failed; any fails the run.",
        |i| Some(i.wake_errors),
    ),
    (
        "rtsoak_completion_errors",
        "The RT subscriber's completions with an unexpected error result; any fails the run.",
        |i| Some(i.cqe_errors),
    ),
    (
        "rtsoak_own_wakes_missing",
        "The RT publisher's wakes that never reached the RT subscriber (exact attribution only); \
         any fails the run.",
        |i| i.wakes_missing,
    ),
];

fn counts(out: &mut String, transports: &[&TransportRuns<'_>]) {
    for (name, help, count) in COUNTS {
        family(out, name, "gauge", help);
        for t in transports {
            if let Some(value) = count(&t.integrity) {
                let _ = writeln!(
                    out,
                    "{name}{{transport=\"{}\"}} {value}",
                    label(t.transport)
                );
            }
        }
    }
}

fn per_transport(
    out: &mut String,
    transports: &[&crate::result::merge::TransportRuns<'_>],
    name: &str,
    help: &str,
    value: fn(&crate::result::merge::TransportRuns<'_>) -> String,
) {
    family(out, name, "gauge", help);
    for t in transports {
        let _ = writeln!(
            out,
            "{name}{{transport=\"{}\"}} {}",
            label(t.transport),
            value(t)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::fixture::two_round_doc;

    #[test]
    fn the_metrics_render_with_help_type_and_labels() {
        insta::assert_snapshot!(render(&two_round_doc()));
    }

    #[test]
    fn a_prometheus_parser_reads_every_family_with_its_type() {
        let text = render(&two_round_doc());
        let lines = text.lines().map(|l| Ok(l.to_string()));
        let scrape = prometheus_parse::Scrape::parse(lines).expect("the text parses");
        let max = scrape
            .samples
            .iter()
            .find(|s| {
                s.metric == "rtsoak_latency_max_seconds"
                    && s.labels.get("transport") == Some("futex")
                    && s.labels.get("series") == Some("delivery")
            })
            .expect("futex delivery max is published");
        assert_eq!(max.value, prometheus_parse::Value::Gauge(0.00025));
        assert!(
            scrape
                .samples
                .iter()
                .all(|s| s.labels.get("transport") != Some("signalfd")
                    || s.metric == "rtsoak_run_ok"),
            "an unsupported transport publishes only that it did not run"
        );
        assert_eq!(
            scrape
                .docs
                .get("rtsoak_latency_seconds")
                .map(String::as_str),
            Some(
                "Latency of the RT pair by series (send_call, delivery, timer, fanout, own_wake, \
                 handling, member_refresh; docs/figures.md), HDR histogram quantiles."
            )
        );
    }

    #[test]
    fn the_python_prometheus_client_parser_accepts_the_file() {
        let Some(families) = crate::testing::python_check::prometheus(&render(&two_round_doc()))
        else {
            return;
        };
        assert_eq!(
            families.get("rtsoak_latency_seconds"),
            Some(&("summary".to_string(), (7 + 7 + 6) * 7)),
            "futex and eventfd × seven series, futex-syscall × six (no own wake) × (five \
             quantiles, sum, count)"
        );
        assert_eq!(
            families.get("rtsoak_run_ok").map(|f| f.0.as_str()),
            Some("gauge")
        );
    }

    #[test]
    fn integrity_counts_are_published_and_a_count_that_cannot_exist_has_no_sample() {
        let text = render(&two_round_doc());
        assert!(
            text.contains("rtsoak_missed_periods{transport=\"futex\"} 5\n"),
            "{text}"
        );
        assert!(text.contains("rtsoak_planned_periods{transport=\"futex\"} 4007\n"));
        assert!(text.contains("rtsoak_fallback_deliveries{transport=\"futex\"} 12\n"));
        assert!(text.contains("rtsoak_messages_piggybacked{transport=\"futex\"} 83\n"));
        assert!(text.contains("rtsoak_messages_lost{transport=\"eventfd\"} 3\n"));
        assert!(text.contains(
            "rtsoak_own_wake_attribution{transport=\"futex-syscall\",attribution=\"none\"} 1\n"
        ));
        for absent in [
            "rtsoak_messages_piggybacked{transport=\"futex-syscall\"}",
            "rtsoak_own_wakes_missing{transport=\"futex-syscall\"}",
            "rtsoak_own_wakes_missing{transport=\"futex\"}",
            "transport=\"futex-syscall\",series=\"own_wake\"",
        ] {
            assert!(!text.contains(absent), "{absent}");
        }
        assert!(text.contains("rtsoak_own_wakes_missing{transport=\"eventfd\"} 0\n"));
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
