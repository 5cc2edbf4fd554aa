//! Prometheus text exposition format, for the node_exporter textfile collector (write it to
//! `<dir>/rtsoak.prom` atomically). Metric names start with `rtsoak_` and carry their unit
//! (`_seconds`). Every per-transport sample is labelled `transport` (the registry name) and
//! `ring_setup` (the setup the run asked for), and latencies also `series`; labels are added by
//! the writer here ([`Writer`]), never by editing the text. Every sample carries what measured
//! ([`identity_labels`]: `profile`, `kernel_release`, `preempt_rt`, `board`), and the file
//! ends with the verdict and the run's end time, as the textfile does.
//!
//! Latency is a histogram, `rtsoak_latency_seconds_bucket{le=...}` with `_sum` and `_count`, on
//! bucket bounds that are the same for every board and profile ([`BUCKET_BOUNDS_NS`], dense
//! around the usual 100 us threshold), so a fleet's files add up in Prometheus:
//! `histogram_quantile(0.999, sum by (le, transport) (rtsoak_latency_seconds_bucket))`.
//! The board's own HDR quantiles are the gauge `rtsoak_latency_quantile_seconds`.
//! Figures are per transport with its rounds merged, the same as the comparison table:
//! latencies of every series docs/figures.md defines, integrity counts (missed periods,
//! piggybacked messages, each kind of transport failure) and how far the transport tells its
//! own wake apart. A figure a transport cannot give (piggybacked without attribution) has no
//! sample, never a 0 that would pass for one.

use std::fmt::{Display, Write};

use crate::escape::{prometheus_help, prometheus_label as label};
use rtsoak_analysis::merge::{TransportRuns, by_transport};
use rtsoak_record::Integrity;
use rtsoak_record::result::{ResultDoc, RunStatus};
use rtsoak_record::{Series, SeriesKey};

/// Reads one figure of a summary.
type Figure = fn(&rtsoak_record::Summary) -> u64;

/// Quantiles published as `rtsoak_latency_quantile_seconds`.
/// (A `percentile` label, in percent: `quantile` belongs to summaries, and promtool says so.)
const QUANTILES: [(&str, Figure); 5] = [
    ("50", |s| s.p50_ns),
    ("90", |s| s.p90_ns),
    ("99", |s| s.p99_ns),
    ("99.9", |s| s.p99_9_ns),
    ("99.99", |s| s.p99_99_ns),
];

/// Upper bounds of the latency histogram's buckets, ns, the same on every board: 5 us to 10 ms,
/// dense around 50-200 us, where RT thresholds sit. Above the last, only `+Inf`.
pub(crate) const BUCKET_BOUNDS_NS: [u64; 15] = [
    5_000, 10_000, 20_000, 30_000, 50_000, 75_000, 100_000, 150_000, 200_000, 300_000, 500_000,
    1_000_000, 2_000_000, 5_000_000, 10_000_000,
];

fn seconds(ns: u64) -> String {
    format!("{}", ns as f64 / 1e9)
}

/// Writes families and samples, putting the common labels on every sample.
pub(crate) struct Writer<'a> {
    out: String,
    common: &'a [(&'a str, String)],
}

impl<'a> Writer<'a> {
    /// A writer that puts `common` (name, value) labels first on every sample.
    pub(crate) fn new(common: &'a [(&'a str, String)]) -> Self {
        Writer {
            out: String::new(),
            common,
        }
    }

    /// A family's `# HELP` and `# TYPE` lines.
    pub(crate) fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.out, "# HELP {name} {}", prometheus_help(help));
        let _ = writeln!(self.out, "# TYPE {name} {kind}");
    }

    /// One sample: `name{common..., labels...} value`.
    pub(crate) fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: impl Display) {
        let _ = write!(self.out, "{name}");
        let all = self
            .common
            .iter()
            .map(|(k, v)| (*k, v.as_str()))
            .chain(labels.iter().copied());
        let mut first = true;
        for (key, value) in all {
            let _ = write!(
                self.out,
                "{}{key}=\"{}\"",
                if first { "{" } else { "," },
                label(value)
            );
            first = false;
        }
        if !first {
            self.out.push('}');
        }
        let _ = writeln!(self.out, " {value}");
    }

    /// The text written.
    pub(crate) fn finish(self) -> String {
        self.out
    }
}

/// A transport's own labels: its registry name and the ring setup its runs asked for.
fn transport_labels<'a>(doc: &ResultDoc, t: &TransportRuns<'a>) -> [(&'static str, &'a str); 2] {
    [
        ("transport", t.transport),
        (
            "ring_setup",
            t.ring_setup.unwrap_or(doc.plan.ring_setup).name(),
        ),
    ]
}

/// Render `doc` in the Prometheus text format.
pub(crate) fn render(doc: &ResultDoc) -> String {
    let common = identity_labels(doc, doc.plan.profile.clone());
    let mut w = Writer::new(&common);
    write_metrics(&mut w, doc);
    super::textfile::verdict_metrics(&mut w, doc);
    w.finish()
}

/// The labels every sample of an export carries, so a fleet's dashboard can split it by what
/// measured: `profile` (as given), `kernel_release`, `preempt_rt` and `board`.
pub(crate) fn identity_labels(doc: &ResultDoc, profile: String) -> Vec<(&'static str, String)> {
    vec![
        ("profile", profile),
        (
            "kernel_release",
            doc.host.kernel_release.clone().unwrap_or_default(),
        ),
        ("preempt_rt", doc.host.preempt_rt.to_string()),
        ("board", super::identity::board(&doc.host)),
    ]
}

/// Every metric of `doc`, through `w`.
pub(crate) fn write_metrics(w: &mut Writer<'_>, doc: &ResultDoc) {
    let merged = by_transport(doc);
    let measured: Vec<_> = merged
        .iter()
        .filter(|t| t.status != RunStatus::Unsupported)
        .collect();
    histograms(w, doc, &measured);
    quantiles(w, doc, &measured);
    per_series(
        w,
        doc,
        &measured,
        "rtsoak_latency_max_seconds",
        "Longest sample (exact).",
        |s| seconds(s.max_ns),
    );
    per_series(
        w,
        doc,
        &measured,
        "rtsoak_latency_over_threshold_samples",
        "Samples above rtsoak_threshold_seconds (exact).",
        |s| s.over_threshold.to_string(),
    );
    counts(w, doc, &measured);
    attribution(w, doc, &measured);
    per_transport(
        w,
        doc,
        &measured,
        "rtsoak_runs",
        "Runs (rounds) merged into the transport's figures.",
        |t| t.measured_runs().to_string(),
    );
    per_transport(
        w,
        doc,
        &merged.iter().collect::<Vec<_>>(),
        "rtsoak_run_ok",
        "1 if every run of the transport completed, 0 if one failed, was interrupted or is unsupported.",
        |t| u8::from(t.status == RunStatus::Completed).to_string(),
    );
    invocation(w, doc);
}

/// `rtsoak_latency_seconds`: each series' histogram on the fixed bucket bounds.
fn histograms(w: &mut Writer<'_>, doc: &ResultDoc, measured: &[&TransportRuns<'_>]) {
    w.family(
        "rtsoak_latency_seconds",
        "histogram",
        "Latency of the RT pair by series (send_call, delivery, timer, fanout, own_wake, \
         handling, member_refresh; docs/figures.md), from the merged HDR histogram, on bucket \
         bounds that are the same on every board.",
    );
    for t in measured {
        let [transport, setup] = transport_labels(doc, t);
        for series_key in Series::REPORTED.map(SeriesKey::Rt) {
            // A series whose histograms did not all decode has no buckets to publish.
            let Some(series) = t.series.get(&series_key).filter(|s| s.percentiles_known()) else {
                continue;
            };
            let name = series_key.name();
            for bound in BUCKET_BOUNDS_NS {
                let le = seconds(bound);
                let count = series.histogram.count_between(0, bound);
                w.sample(
                    "rtsoak_latency_seconds_bucket",
                    &[transport, setup, ("series", name), ("le", &le)],
                    count.min(series.summary.count),
                );
            }
            w.sample(
                "rtsoak_latency_seconds_bucket",
                &[transport, setup, ("series", name), ("le", "+Inf")],
                series.summary.count,
            );
            let labels = [transport, setup, ("series", name)];
            let sum_s = series.histogram.mean() * series.histogram.len() as f64 / 1e9;
            w.sample("rtsoak_latency_seconds_sum", &labels, sum_s);
            w.sample(
                "rtsoak_latency_seconds_count",
                &labels,
                series.summary.count,
            );
        }
    }
}

/// `rtsoak_latency_quantile_seconds`: this board's percentiles of each series.
fn quantiles(w: &mut Writer<'_>, doc: &ResultDoc, measured: &[&TransportRuns<'_>]) {
    w.family(
        "rtsoak_latency_quantile_seconds",
        "gauge",
        "This board's latency percentiles by series (percentile label: 50 to 99.99), from its HDR histogram (not to be averaged \
         across boards: aggregate rtsoak_latency_seconds_bucket instead).",
    );
    for t in measured {
        let [transport, setup] = transport_labels(doc, t);
        for name in Series::REPORTED.map(SeriesKey::Rt) {
            if let Some(series) = t.series.get(&name).filter(|s| s.percentiles_known()) {
                for (quantile, value) in QUANTILES {
                    w.sample(
                        "rtsoak_latency_quantile_seconds",
                        &[
                            transport,
                            setup,
                            ("series", name.name()),
                            ("percentile", quantile),
                        ],
                        seconds(value(&series.summary)),
                    );
                }
            }
        }
    }
}

/// `rtsoak_own_wake_attribution`: how far each transport tells its own wake apart.
fn attribution(w: &mut Writer<'_>, doc: &ResultDoc, measured: &[&TransportRuns<'_>]) {
    w.family(
        "rtsoak_own_wake_attribution",
        "gauge",
        "1 for how far the RT subscriber tells the RT publisher's own wake apart: exact, covering \
         or none (then there is no own_wake series and no piggybacked count).",
    );
    for t in measured {
        let [transport, setup] = transport_labels(doc, t);
        w.sample(
            "rtsoak_own_wake_attribution",
            &[
                transport,
                setup,
                ("attribution", t.integrity.own_wake.name()),
            ],
            1,
        );
    }
}

/// What holds for the whole invocation: the threshold, the kernel, the caveats, when it ended.
fn invocation(w: &mut Writer<'_>, doc: &ResultDoc) {
    w.family(
        "rtsoak_threshold_seconds",
        "gauge",
        "Over-threshold limit of the runs.",
    );
    w.sample(
        "rtsoak_threshold_seconds",
        &[],
        seconds(doc.plan.threshold_ns),
    );
    w.family(
        "rtsoak_preempt_rt",
        "gauge",
        "1 if the kernel was PREEMPT_RT.",
    );
    w.sample("rtsoak_preempt_rt", &[], u8::from(doc.host.preempt_rt));
    w.family(
        "rtsoak_caveats",
        "gauge",
        "Conditions that weaken the result (see the result's caveats); 0 on a proper RT setup.",
    );
    w.sample("rtsoak_caveats", &[], doc.caveats.len());
    if let Some(at_s) = finished_unix_s(doc) {
        w.family(
            "rtsoak_finished_timestamp_seconds",
            "gauge",
            "When the invocation finished, seconds since the epoch.",
        );
        w.sample("rtsoak_finished_timestamp_seconds", &[], at_s);
    }
}

/// When the invocation finished, whole seconds since the epoch; none where it did not finish or
/// its time does not parse.
pub(crate) fn finished_unix_s(doc: &ResultDoc) -> Option<u64> {
    let at = humantime::parse_rfc3339_weak(doc.finished_at.as_deref()?).ok()?;
    Some(at.duration_since(std::time::UNIX_EPOCH).ok()?.as_secs())
}

fn per_series(
    w: &mut Writer<'_>,
    doc: &ResultDoc,
    transports: &[&TransportRuns<'_>],
    name: &str,
    help: &str,
    value: fn(&rtsoak_record::Summary) -> String,
) {
    w.family(name, "gauge", help);
    for t in transports {
        let [transport, setup] = transport_labels(doc, t);
        for series in Series::REPORTED.map(SeriesKey::Rt) {
            if let Some(s) = t.series.get(&series) {
                w.sample(
                    name,
                    &[transport, setup, ("series", series.name())],
                    value(&s.summary),
                );
            }
        }
    }
}

/// Reads one integrity count of a transport; none where it cannot exist.
type Count = fn(&Integrity) -> Option<u64>;
/// The integrity counts of each measured transport, in the order they are written.
const COUNTS: [(&str, &str, Count); 9] = [
    (
        "rtsoak_messages_sent",
        "Messages the RT publisher sent in the measured phase.",
        |i| Some(i.sent),
    ),
    (
        "rtsoak_messages_lost",
        "Messages never delivered within the delivery timeout; any loss fails the run.",
        |i| Some(i.lost),
    ),
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

fn counts(w: &mut Writer<'_>, doc: &ResultDoc, transports: &[&TransportRuns<'_>]) {
    for (name, help, count) in COUNTS {
        w.family(name, "gauge", help);
        for t in transports {
            if let Some(value) = count(&t.integrity) {
                w.sample(name, &transport_labels(doc, t), value);
            }
        }
    }
}

fn per_transport(
    w: &mut Writer<'_>,
    doc: &ResultDoc,
    transports: &[&TransportRuns<'_>],
    name: &str,
    help: &str,
    value: fn(&TransportRuns<'_>) -> String,
) {
    w.family(name, "gauge", help);
    for t in transports {
        w.sample(name, &transport_labels(doc, t), value(t));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsoak_testing::fixture::two_round_doc;

    /// The metrics alone, without the identity labels and the verdict: what a test of one
    /// metric's own labels reads.
    fn bare(doc: &ResultDoc) -> String {
        let mut w = Writer::new(&[]);
        write_metrics(&mut w, doc);
        w.finish()
    }

    #[test]
    fn every_sample_names_what_measured_and_the_verdict_its_reasons_and_end_come_last() {
        let mut doc = two_round_doc();
        doc.verdict = Some(rtsoak_analysis::judge::verdict(&doc));
        let text = render(&doc);
        let identity = "{profile=\"ci\",kernel_release=\"6.12.117+deb13-rt-arm64\",\
                        preempt_rt=\"true\",board=\"NVIDIA Jetson Orin Nano Developer Kit\"";
        for sample in text.lines().filter(|l| !l.starts_with('#')) {
            assert!(sample.contains(identity), "{sample}");
        }
        assert!(text.contains("rtsoak_verdict{"), "{text}");
        assert!(
            text.contains(",verdict=\"fail\",kind=\"lost-messages\",transport=\"eventfd\""),
            "{text}"
        );
        // 2026-11-30T12:01:00Z
        assert!(
            text.contains(",board=\"NVIDIA Jetson Orin Nano Developer Kit\"} 1796040060\n"),
            "{text}"
        );
    }

    #[test]
    fn the_dashboards_failure_panel_adds_every_count_that_fails_a_run() {
        let dashboard: serde_json::Value =
            serde_json::from_str(include_str!("../../../analysis/grafana/rtsoak-fleet.json"))
                .unwrap();
        let panel = dashboard["panels"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["title"].as_str().unwrap().contains("transport failures"))
            .expect("the dashboard has a transport failures panel");
        let expr = panel["targets"][0]["expr"].as_str().unwrap();
        for (name, help, _) in COUNTS {
            if help.contains("any fails the run") {
                assert!(expr.contains(name), "the panel leaves out {name}: {expr}");
            }
        }
    }

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
                 handling, member_refresh; docs/figures.md), from the merged HDR histogram, on \
                 bucket bounds that are the same on every board."
            )
        );
    }

    #[test]
    fn the_python_prometheus_client_parser_accepts_the_file() {
        let Some(families) = rtsoak_testing::python_check::prometheus(&render(&two_round_doc()))
        else {
            return;
        };
        assert_eq!(
            families.get("rtsoak_latency_seconds"),
            Some(&(
                "histogram".to_string(),
                (7 + 7 + 6) * (BUCKET_BOUNDS_NS.len() + 3)
            )),
            "futex and eventfd × seven series, futex-syscall × six (no own wake) × (the buckets, \
             +Inf, sum, count)"
        );
        assert_eq!(
            families.get("rtsoak_run_ok").map(|f| f.0.as_str()),
            Some("gauge")
        );
    }

    #[test]
    fn integrity_counts_are_published_and_a_count_that_cannot_exist_has_no_sample() {
        let text = bare(&two_round_doc());
        assert!(
            text.contains(
                "rtsoak_missed_periods{transport=\"futex\",ring_setup=\"defer-taskrun\"} 5\n"
            ),
            "{text}"
        );
        assert!(text.contains(
            "rtsoak_planned_periods{transport=\"futex\",ring_setup=\"defer-taskrun\"} 4007\n"
        ));
        assert!(text.contains(
            "rtsoak_fallback_deliveries{transport=\"futex\",ring_setup=\"defer-taskrun\"} 12\n"
        ));
        assert!(text.contains(
            "rtsoak_messages_piggybacked{transport=\"futex\",ring_setup=\"defer-taskrun\"} 83\n"
        ));
        assert!(text.contains(
            "rtsoak_messages_lost{transport=\"eventfd\",ring_setup=\"defer-taskrun\"} 3\n"
        ));
        assert!(text.contains(
            "rtsoak_own_wake_attribution{transport=\"futex-syscall\",ring_setup=\"defer-taskrun\",attribution=\"none\"} 1\n"
        ));
        for absent in [
            "rtsoak_messages_piggybacked{transport=\"futex-syscall\",",
            "rtsoak_own_wakes_missing{transport=\"futex-syscall\",",
            "rtsoak_own_wakes_missing{transport=\"futex\",",
            "transport=\"futex-syscall\",ring_setup=\"defer-taskrun\",series=\"own_wake\"",
        ] {
            assert!(!text.contains(absent), "{absent}");
        }
        assert!(text.contains(
            "rtsoak_own_wakes_missing{transport=\"eventfd\",ring_setup=\"defer-taskrun\"} 0\n"
        ));
    }

    #[test]
    fn the_latency_histogram_is_cumulative_on_fixed_bounds_and_ends_at_the_count() {
        let text = render(&two_round_doc());
        let lines = text.lines().map(|l| Ok(l.to_string()));
        let scrape = prometheus_parse::Scrape::parse(lines).expect("the text parses");
        let histogram = scrape
            .samples
            .iter()
            .find(|s| {
                s.metric == "rtsoak_latency_seconds"
                    && s.labels.get("transport") == Some("futex")
                    && s.labels.get("series") == Some("delivery")
            })
            .expect("futex delivery is a histogram");
        let prometheus_parse::Value::Histogram(buckets) = &histogram.value else {
            panic!("{:?}", histogram.value);
        };
        assert_eq!(buckets.len(), BUCKET_BOUNDS_NS.len() + 1);
        for (bucket, bound) in buckets.iter().zip(BUCKET_BOUNDS_NS) {
            assert!((bucket.less_than - bound as f64 / 1e9).abs() < 1e-12);
        }
        assert!(
            buckets.windows(2).all(|w| w[0].count <= w[1].count),
            "cumulative"
        );
        let count = scrape
            .samples
            .iter()
            .find(|s| {
                s.metric == "rtsoak_latency_seconds_count"
                    && s.labels.get("transport") == Some("futex")
                    && s.labels.get("series") == Some("delivery")
            })
            .unwrap();
        assert_eq!(
            count.value,
            prometheus_parse::Value::Untyped(buckets.last().unwrap().count)
        );
    }

    #[test]
    fn a_ring_setup_comparison_labels_the_setup_and_keeps_the_transport_name() {
        let mut doc = two_round_doc();
        for run in &mut doc.runs {
            let transport = run.transport.clone();
            rtsoak_record::result::RunKey {
                transport: &transport,
                ring_setup: Some(rtsoak_record::RingSetup::None),
            }
            .apply(run);
        }
        let text = bare(&doc);
        assert!(
            text.contains("rtsoak_messages_sent{transport=\"futex\",ring_setup=\"none\"}"),
            "{text}"
        );
        assert!(
            !text.contains(" (none)"),
            "no setup folded into the transport"
        );
    }
}
