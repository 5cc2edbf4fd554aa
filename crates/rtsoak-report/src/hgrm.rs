//! HdrHistogram percentile distributions (".hgrm", what Java's
//! `AbstractHistogram.outputPercentileDistribution` prints): one file per transport (rounds
//! merged) and reported series, each exactly as the Java writer lays out one histogram (values
//! in microseconds, 5 ticks per half distance, its header, columns and `#[Mean`, `#[Max`,
//! `#[Buckets` footer, nothing else; numbers rounded as Java's `String.format` rounds them),
//! at the precision the histograms were stored at. HdrHistogram's plotter reads a file as one
//! distribution, so each file is one curve there; what a file holds is in its name:
//! `<transport>.<series>.hgrm` (`eventfd.delivery.hgrm`), with the ring setup between the two
//! in a ring-setup comparison (`eventfd.none.delivery.hgrm`).

use std::fmt::Write;

use hdrhistogram::Histogram;

use rtsoak_analysis::merge::{TransportRuns, by_transport};
use rtsoak_analysis::stats::decode_histogram;
use rtsoak_record::result::ResultDoc;
use rtsoak_record::{Series, SeriesKey};

use crate::NamedFile;

/// Values are printed in us: ns divided by this.
const VALUE_UNIT_RATIO: f64 = 1e3;
/// Percentile ticks per half distance to 100 %, as HdrHistogram's examples use.
const TICKS_PER_HALF_DISTANCE: u32 = 5;

/// One file per transport and reported series of `doc` whose histograms all decode, in table
/// order.
pub(crate) fn render(doc: &ResultDoc) -> Vec<NamedFile> {
    let mut files = Vec::new();
    for transport in by_transport(doc) {
        for key in Series::REPORTED.map(SeriesKey::Rt) {
            let Some(histogram) = stored_sum(&transport, key) else {
                continue;
            };
            files.push(NamedFile {
                name: file_name(&transport, key),
                bytes: distribution(&histogram).into_bytes(),
            });
        }
    }
    files
}

/// The sum of the runs' histograms of `key` at the precision they were stored at (the
/// coarsest, if rounds differ), so every printed value is one the stored buckets resolve; `None`
/// where no run has samples of it or a histogram does not decode (its percentiles are unknown).
fn stored_sum(transport: &TransportRuns, key: SeriesKey) -> Option<Histogram<u64>> {
    let decoded: Vec<Histogram<u64>> = transport
        .runs
        .iter()
        .filter_map(|run| run.series.get(&key))
        .map(|series| decode_histogram(&series.histogram).ok())
        .collect::<Option<_>>()?;
    let sigfig = decoded.iter().map(Histogram::sigfig).min()?;
    let high = decoded.iter().map(Histogram::high).max()?;
    let mut sum = Histogram::new_with_bounds(1, high, sigfig).ok()?;
    for histogram in &decoded {
        sum.add(histogram).ok()?;
    }
    (!sum.is_empty()).then_some(sum)
}

/// `eventfd.delivery.hgrm`, or `eventfd.none.delivery.hgrm` for one ring setup's runs. The
/// transport name comes from the result file: anything but letters, digits, `-` and `_` in it
/// becomes `_`, so a hand-edited result cannot name a path.
fn file_name(transport: &TransportRuns, series: SeriesKey) -> String {
    let name = rtsoak_record::text::restricted(transport.transport, &['-', '_']);
    match transport.ring_setup {
        Some(setup) => format!("{name}.{}.{series}.hgrm", setup.name()),
        None => format!("{name}.{series}.hgrm"),
    }
}

/// One histogram's distribution in the Java writer's layout.
fn distribution(histogram: &Histogram<u64>) -> String {
    let mut out = String::new();
    let digits = usize::from(histogram.sigfig());
    let us = |ns: f64| java_fixed(ns / VALUE_UNIT_RATIO, digits);
    let _ = writeln!(
        out,
        "{:>12} {:>14} {:>10} {:>14}\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    );
    for step in percentile_steps(histogram) {
        let value = us(step.value_ns as f64);
        let quantile = step.percentile / 100.0;
        let percentile = java_fixed(quantile, 12);
        let total = step.total_count;
        if step.percentile < 100.0 {
            let inverse = java_fixed(1.0 / (1.0 - quantile), 2);
            let _ = writeln!(out, "{value:>12} {percentile:>2} {total:10} {inverse:>14}");
        } else {
            let _ = writeln!(out, "{value:>12} {percentile:>2} {total:10}");
        }
    }
    let _ = writeln!(
        out,
        "#[Mean    = {:>12}, StdDeviation   = {:>12}]",
        us(histogram.mean()),
        us(histogram.stdev())
    );
    let _ = writeln!(
        out,
        "#[Max     = {:>12}, Total count    = {:12}]",
        us(histogram.max() as f64),
        histogram.len()
    );
    let _ = writeln!(
        out,
        "#[Buckets = {:12}, SubBuckets     = {:12}]",
        histogram.buckets(),
        sub_buckets(histogram.sigfig())
    );
    out
}

/// `value` (finite, not negative) with `decimals` digits after the point as Java's
/// `String.format("%.Nf")` writes it: the shortest decimal that reads back as `value`, rounded
/// half up. Rust's `{:.N}` rounds the exact binary value half to even instead, and the two
/// differ on every tie: 3215 ns is `3.215` us, which Java writes `3.22` at two digits and Rust
/// `3.21` (the double lies just below 3.215).
fn java_fixed(value: f64, decimals: usize) -> String {
    let shortest = format!("{value:e}");
    let (mantissa, exponent) = shortest.split_once('e').unwrap_or((&shortest, "0"));
    let exponent: i64 = exponent.parse().unwrap_or(0);
    let digits: Vec<u8> = mantissa
        .bytes()
        .filter(u8::is_ascii_digit)
        .map(|b| b - b'0')
        .collect();
    // value = 0.d1 d2 d3 ... x 10^(exponent + 1): keep the digits down to 10^-decimals.
    let kept = exponent + 1 + decimals as i64;
    let mut units: u128 = 0;
    for position in 0..kept.max(0) {
        let digit = digits.get(position as usize).copied().unwrap_or(0);
        units = units * 10 + u128::from(digit);
    }
    let next = usize::try_from(kept)
        .ok()
        .and_then(|k| digits.get(k).copied());
    if next.is_some_and(|digit| digit >= 5) {
        units += 1;
    }
    let scale = 10u128.pow(decimals as u32);
    match decimals {
        0 => units.to_string(),
        _ => format!("{}.{:0decimals$}", units / scale, units % scale),
    }
}

/// One row: the highest value of a bucket, the percentile level stepped to, the count up to
/// and including that bucket.
struct Step {
    value_ns: u64,
    percentile: f64,
    total_count: u64,
}

/// The rows Java's `PercentileIterator` steps through, with its arithmetic (percent levels,
/// `level <= 100 * count / total`), so a level that falls exactly on a bucket's cumulative
/// share is reported at that bucket as Java reports it (the Rust crate's quantile iterator
/// compares quantiles, and steps one bucket later there). The level advances by
/// 100 / (ticks * 2^(floor(log2(100 / (100 - level))) + 1)): [`TICKS_PER_HALF_DISTANCE`] equal
/// steps in each half of the distance left to 100 %. After the step that reaches the last
/// recorded bucket comes one more, at 100 %.
fn percentile_steps(histogram: &Histogram<u64>) -> Vec<Step> {
    let total = histogram.len();
    let mut steps = Vec::new();
    let mut level = 0.0_f64;
    let mut count_to_here = 0u64;
    let mut last_value_ns = 0;
    for bucket in histogram.iter_recorded() {
        count_to_here += bucket.count_at_value();
        last_value_ns = histogram.highest_equivalent(bucket.value_iterated_to());
        let percentile = 100.0 * count_to_here as f64 / total as f64;
        while level <= percentile {
            steps.push(Step {
                value_ns: last_value_ns,
                percentile: level,
                total_count: count_to_here,
            });
            let doublings = ((100.0 / (100.0 - level)).ln() / 2f64.ln()) as i32;
            level += 100.0 / (f64::from(TICKS_PER_HALF_DISTANCE) * 2f64.powi(doublings + 1));
            if count_to_here == total {
                break;
            }
        }
    }
    if total > 0 {
        steps.push(Step {
            value_ns: last_value_ns,
            percentile: 100.0,
            total_count: total,
        });
    }
    steps
}

/// Sub-buckets per bucket for `sigfig` digits: the power of two at or above 2 × 10^sigfig.
fn sub_buckets(sigfig: u8) -> u64 {
    (2 * 10u64.pow(u32::from(sigfig))).next_power_of_two()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsoak_testing::fixture::two_round_doc;

    fn text(file: &NamedFile) -> &str {
        std::str::from_utf8(&file.bytes).unwrap()
    }

    #[test]
    fn one_distribution_follows_the_java_layout() {
        let files = render(&two_round_doc());
        let delivery = files
            .iter()
            .find(|f| f.name == "eventfd.delivery.hgrm")
            .unwrap();
        insta::assert_snapshot!(text(delivery));
    }

    #[test]
    fn each_transport_and_reported_series_is_a_file_named_after_them() {
        let names: Vec<String> = render(&two_round_doc())
            .into_iter()
            .map(|f| f.name)
            .collect();
        let expected: Vec<String> = ["futex", "eventfd", "futex-syscall"]
            .into_iter()
            .flat_map(|transport| {
                Series::REPORTED
                    .into_iter()
                    // futex-syscall cannot tell its own wake apart: it has no own_wake series.
                    .filter(move |s| transport != "futex-syscall" || *s != Series::OwnWake)
                    .map(move |s| format!("{transport}.{}.hgrm", s.name()))
            })
            .collect();
        assert_eq!(names, expected, "signalfd never ran: no file of it");
    }

    #[test]
    fn every_file_holds_one_distribution_ending_at_100_percent_with_the_total_count() {
        for file in render(&two_round_doc()) {
            let text = text(&file);
            assert!(
                text.starts_with("       Value     Percentile TotalCount 1/(1-Percentile)\n\n")
            );
            assert_eq!(text.matches("Percentile").count(), 2, "{}", file.name);
            assert_eq!(text.matches("#[Max").count(), 1, "{}", file.name);
            let last_row = text
                .lines()
                .rfind(|l| !l.starts_with('#') && !l.trim().is_empty())
                .unwrap();
            let fields: Vec<&str> = last_row.split_whitespace().collect();
            assert_eq!(fields.len(), 3, "{}: {last_row}", file.name);
            assert_eq!(fields[1], "1.000000000000");
            let total = text
                .lines()
                .find(|l| l.starts_with("#[Max"))
                .and_then(|l| l.rsplit('=').next())
                .map(|t| t.trim_end_matches(']').trim())
                .unwrap();
            assert_eq!(fields[2], total, "{}", file.name);
        }
    }

    #[test]
    fn a_transport_name_from_a_file_cannot_name_a_path() {
        let mut doc = rtsoak_testing::fixture::one_run_doc();
        doc.runs[0].transport = "../../etc/x y".to_string();
        for file in render(&doc) {
            assert!(file.name.starts_with("______etc_x_y."), "{}", file.name);
            assert!(!file.name.contains('/'));
        }
    }

    #[test]
    fn numbers_are_rounded_as_java_rounds_them_half_up_from_the_shortest_decimal() {
        assert_eq!(java_fixed(3.215, 2), "3.22");
        assert_eq!(java_fixed(0.125, 2), "0.13");
        assert_eq!(java_fixed(99.97802734375 / 100.0, 12), "0.999780273438");
        assert_eq!(java_fixed(0.0, 12), "0.000000000000");
        assert_eq!(java_fixed(0.0004, 3), "0.000");
        assert_eq!(java_fixed(0.0005, 3), "0.001");
        assert_eq!(java_fixed(9.9996, 3), "10.000");
        assert_eq!(java_fixed(1398.783, 3), "1398.783");
        assert_eq!(java_fixed(4551.111111, 2), "4551.11");
        assert_eq!(java_fixed(1e7, 3), "10000000.000");
    }

    #[test]
    fn three_digit_histograms_have_2048_sub_buckets() {
        assert_eq!(sub_buckets(3), 2048);
    }
}
