//! HdrHistogram interval log (the Java `HistogramLogWriter` format, version 1.3): header lines
//! (`#[Histogram log format version 1.3]`, `#[StartTime: ...]`, `#[BaseTime: ...]`, the legend),
//! then one line per interval, run and series, tagged `<transport>/<series>`, or
//! `<transport>/<ring setup>/<series>` in a ring-setup comparison:
//! `Tag=futex/delivery,<start s>,<length s>,<max ms>,<base64 V2+DEFLATE histogram>`.
//! A tag never holds a space or a comma: the Java `HistogramLogScanner` splits a line at both,
//! and the `hdrhistogram` crate's `Tag` refuses them. Read one tag's lines with
//! `HistogramLogProcessor -i intervals.hlog -tag futex/delivery` (`-listtags` lists them;
//! without `-tag` it reads only untagged lines, and rtsoak writes none).
//!
//! The histograms are the result's own interval histograms, copied as saved (they are already
//! in the log's compressed encoding), so adding a tag's lines gives the run histogram exactly.
//! Times are seconds since the invocation's start; a run's intervals are placed at its
//! wall-clock start (whole seconds, as saved) plus the warm-up. The `hdrhistogram` crate's
//! writer writes neither the version line nor the legend, and would re-encode every histogram,
//! hence this small writer; its output is read back by the crate's parser and by the Python
//! `hdrhistogram` package in the tests.

use std::fmt::Write;

use rtsoak_analysis::stats::decode_histogram;
use rtsoak_record::result::{ResultDoc, RunKey};
use rtsoak_record::{Series, SeriesKey};

/// Divisor of the max column: ns to ms, the Java writer's default.
const MAX_VALUE_UNIT_RATIO: f64 = 1e6;

/// Render `doc`'s interval histograms as an interval log.
pub(crate) fn render(doc: &ResultDoc) -> String {
    let base_s = epoch_seconds(&doc.started_at).unwrap_or(0.0);
    let mut out = String::new();
    // The comments quote what the result holds (tool version, command, start): one line each,
    // escaped; tags are made of safe characters only (`RunKey::tag`).
    let comment = |out: &mut String, text: String| {
        let _ = writeln!(out, "{}", super::escape::terminal(&text));
    };
    comment(
        &mut out,
        format!(
            "#rtsoak {} {}: latencies in ns; tags are <transport>[/<ring setup>]/<series>",
            doc.tool.version, doc.command
        ),
    );
    let _ = writeln!(out, "#[Histogram log format version 1.3]");
    comment(
        &mut out,
        format!(
            "#[StartTime: {base_s:.3} (seconds since epoch), {}]",
            doc.started_at
        ),
    );
    let _ = writeln!(out, "#[BaseTime: {base_s:.3} (seconds since epoch)]");
    let _ = writeln!(
        out,
        "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\""
    );
    for run in &doc.runs {
        let run_start_s = epoch_seconds(&run.started_at).map_or(0.0, |s| s - base_s)
            + doc.plan.warmup_ns as f64 / 1e9;
        let key = RunKey::of(run).tag();
        for interval in &run.intervals {
            for name in Series::REPORTED.map(SeriesKey::Rt) {
                // A series the run leaves out (an own wake its transport cannot tell apart)
                // gets no tag, even where its intervals hold an empty histogram for it.
                let Some(series) = interval.series.get(&name) else {
                    continue;
                };
                // A diagnostic series keeps no histogram per interval (only its counters), so
                // it has no line to write.
                let Some(histogram) = &series.histogram else {
                    continue;
                };
                if !run.series.contains_key(&name) {
                    continue;
                }
                // A histogram that does not decode (a damaged or edited file) has no line: the
                // log's readers would stop at it. A comment says which one is left out.
                let Ok(decoded) = decode_histogram(histogram) else {
                    let _ = writeln!(
                        out,
                        "#rtsoak: {key}/{name} interval {} does not decode: left out",
                        interval.index
                    );
                    continue;
                };
                // The max column is the histogram's (as the Java writer's), not the exact max.
                let _ = writeln!(
                    out,
                    "Tag={key}/{name},{:.3},{:.3},{:.3},{}",
                    run_start_s + interval.start_ns as f64 / 1e9,
                    interval.length_ns as f64 / 1e9,
                    decoded.max() as f64 / MAX_VALUE_UNIT_RATIO,
                    histogram.trim()
                );
            }
        }
    }
    out
}

/// An RFC 3339 time as seconds since the epoch.
fn epoch_seconds(text: &str) -> Option<f64> {
    let time = humantime::parse_rfc3339_weak(text).ok()?;
    Some(
        time.duration_since(std::time::UNIX_EPOCH)
            .ok()?
            .as_secs_f64(),
    )
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

    use super::*;
    use rtsoak_analysis::stats::new_histogram;
    use rtsoak_record::RingSetup;
    use rtsoak_record::result::IntervalSeries;
    use rtsoak_testing::fixture::two_round_doc;

    #[test]
    fn the_interval_log_has_the_java_header_lines_and_one_tag_per_transport_and_series() {
        insta::assert_snapshot!(render(&two_round_doc()));
    }

    #[test]
    fn the_crates_log_parser_reads_back_every_tag_with_the_runs_counts_and_max() {
        let doc = two_round_doc();
        let text = render(&doc);
        let mut per_tag: BTreeMap<String, hdrhistogram::Histogram<u64>> = BTreeMap::new();
        let mut start_time = None;
        for entry in IntervalLogIterator::new(text.as_bytes()) {
            match entry.expect("every line parses") {
                LogEntry::StartTime(t) => start_time = Some(t),
                LogEntry::BaseTime(_) => {}
                LogEntry::Interval(interval) => {
                    let tag = interval.tag().expect("every interval is tagged").as_str();
                    let histogram = decode_histogram(interval.encoded_histogram()).unwrap();
                    per_tag
                        .entry(tag.to_string())
                        .or_insert_with(new_histogram)
                        .add(&histogram)
                        .unwrap();
                }
            }
        }
        assert!(start_time.is_some());
        let expected = rtsoak_testing::python_check::histograms_by_tag(&doc);
        assert_eq!(
            per_tag.keys().collect::<Vec<_>>(),
            expected.keys().collect::<Vec<_>>()
        );
        for (tag, histogram) in &per_tag {
            assert_eq!(histogram.len(), expected[tag].len(), "{tag}");
            assert_eq!(histogram.max(), expected[tag].max(), "{tag}");
        }
    }

    #[test]
    fn the_python_hdrhistogram_package_decodes_the_log_to_the_same_counts_and_max() {
        rtsoak_testing::python_check::hdr_log(&two_round_doc(), &render(&two_round_doc()));
    }

    /// Every interval line split as Java's `HistogramLogScanner` splits it (at spaces and
    /// commas): exactly `Tag=<tag>`, three numbers and the histogram, the tag one the crate's
    /// `Tag` accepts. Returns the tags.
    pub(crate) fn read_like_java(text: &str) -> Vec<String> {
        use hdrhistogram::serialization::interval_log::Tag;
        let mut tags = Vec::new();
        for line in text.lines().filter(|l| l.starts_with("Tag=")) {
            let tokens: Vec<&str> = line.split([' ', ',']).collect();
            assert_eq!(
                tokens.len(),
                5,
                "a Java reader splits {line:?} into {tokens:?}"
            );
            let tag = tokens[0].strip_prefix("Tag=").unwrap();
            assert!(Tag::new(tag).is_some(), "the crate refuses the tag {tag:?}");
            for number in &tokens[1..4] {
                number.parse::<f64>().unwrap();
            }
            decode_histogram(tokens[4]).unwrap();
            tags.push(tag.to_string());
        }
        tags
    }

    #[test]
    fn a_ring_setup_comparison_tags_the_setup_as_a_part_of_its_own_without_spaces() {
        let mut doc = two_round_doc();
        for (run, setup) in doc.runs.iter_mut().zip(
            [RingSetup::DeferTaskrun, RingSetup::None]
                .into_iter()
                .cycle(),
        ) {
            let transport = run.transport.clone();
            RunKey {
                transport: &transport,
                ring_setup: Some(setup),
            }
            .apply(run);
            assert_eq!(
                run.transport, transport,
                "the result keeps the registry name"
            );
        }
        let text = render(&doc);
        let tags = read_like_java(&text);
        assert!(!tags.is_empty());
        assert!(
            tags.iter().any(|t| t.contains("/defer-taskrun/")),
            "{tags:?}"
        );
        assert!(tags.iter().all(|t| t.split('/').count() == 3), "{tags:?}");
        // The crate's own reader takes every line too.
        for entry in IntervalLogIterator::new(text.as_bytes()) {
            entry.expect("every line parses");
        }
    }

    #[test]
    fn a_series_the_run_leaves_out_gets_no_tag_even_with_an_interval_histogram() {
        let mut doc = two_round_doc();
        let run = doc
            .runs
            .iter_mut()
            .find(|r| !r.intervals.is_empty() && !r.series.contains_key("own_wake"))
            .expect("the fixture has a run with intervals and no own-wake figure");
        let tag = format!("{}/own_wake", RunKey::of(run).tag());
        for interval in &mut run.intervals {
            let empty = IntervalSeries {
                stats: Default::default(),
                histogram: Some(rtsoak_analysis::stats::encode_histogram(&new_histogram())),
            };
            interval
                .series
                .insert(SeriesKey::Rt(Series::OwnWake), empty);
        }
        let tags = read_like_java(&render(&doc));
        assert!(!tags.contains(&tag), "{tag} in {tags:?}");
    }

    #[test]
    fn a_plain_comparison_keeps_its_two_part_tags() {
        let tags = read_like_java(&render(&two_round_doc()));
        assert!(tags.iter().all(|t| t.split('/').count() == 2), "{tags:?}");
    }
}
