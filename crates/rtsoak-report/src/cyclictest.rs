//! A cyclictest-compatible histogram file, byte for byte the layout of `cyclictest -h` in
//! rt-tests 2.4 (Debian 12 and 13 ship it): `# Histogram`; one row per 1 us bucket, the bucket
//! as `%06d` and a space, then the columns' counts as `%06lu` separated by TABs; then
//! `# Total:` (` %09llu` per column: samples in the buckets), `# Min Latencies:`,
//! `# Avg Latencies:`, `# Max Latencies:` and `# Histogram Overflows:` (` %05lu` per column),
//! `# Histogram Overflow at cycle number:` and one `# Thread N:` line per column (` %05lu` per
//! cycle, ` # %05lu others` for those not listed), and an empty last line. Where cyclictest has
//! one column per thread, this has one per transport (rounds merged) and series, named in the
//! comment line above `# Histogram`.
//!
//! Every bucket from 0 to the largest latency (at most [`MAX_BUCKETS`]) has its row, zero or not,
//! as cyclictest printed before 2.7, so scripts that assume one row per microsecond work. A test
//! compares the layout with the output of the real `cyclictest -h` (`tests/cyclictest_layout.rs`).

use std::fmt::Write;

use hdrhistogram::Histogram;

use rtsoak_analysis::merge::by_transport;
use rtsoak_record::result::ResultDoc;
use rtsoak_record::{Series, SeriesKey};

/// Most 1 us buckets written (10 ms); larger samples are overflows, as with `cyclictest -h`.
pub(crate) const MAX_BUCKETS: u64 = 10_000;
/// Most overflow cycle numbers listed per column (cyclictest lists as many as it has buckets).
const MAX_OVERFLOW_CYCLES: usize = 100;

struct Column {
    name: String,
    histogram: Histogram<u64>,
    min_ns: u64,
    max_ns: u64,
    /// Period numbers (since the measured phase began) of samples past the last bucket.
    overflow_cycles: Vec<u64>,
}

/// Render `doc` as a cyclictest histogram file.
pub(crate) fn render(doc: &ResultDoc) -> String {
    let columns = columns(doc);
    let buckets = columns
        .iter()
        .map(|c| c.max_ns / 1_000 + 1)
        .max()
        .unwrap_or(1)
        .min(MAX_BUCKETS);
    let mut out = String::new();
    let comment = format!(
        "# rtsoak {} {}: rt-tests 2.4 cyclictest -h layout, 1 us buckets; columns: {}",
        doc.tool.version,
        doc.command,
        columns
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    );
    // The one line that quotes the result (its version, command and tags): escaped.
    let _ = writeln!(out, "{}", super::escape::terminal(&comment));
    let _ = writeln!(out, "# Histogram");
    let counts: Vec<Vec<u64>> = columns.iter().map(|c| per_us(c, buckets)).collect();
    for bucket in 0..buckets as usize {
        let _ = write!(out, "{bucket:06} ");
        for (index, column) in counts.iter().enumerate() {
            let separator = if index == 0 { "" } else { "\t" };
            let _ = write!(out, "{separator}{:06}", column[bucket]);
        }
        let _ = writeln!(out);
    }
    footer(&mut out, &columns, &counts, buckets);
    out
}

fn columns(doc: &ResultDoc) -> Vec<Column> {
    let mut columns = Vec::new();
    for transport in by_transport(doc) {
        for name in Series::REPORTED.map(SeriesKey::Rt) {
            let Some(series) = transport.series.get(&name) else {
                continue;
            };
            if series.summary.count == 0 || !series.percentiles_known() {
                continue;
            }
            let overflow_cycles = transport
                .runs
                .iter()
                .filter_map(|run| run.series.get(&name))
                .flat_map(|s| &s.outliers)
                .filter(|o| o.value_ns / 1_000 >= MAX_BUCKETS)
                .map(|o| o.at_ns / doc.plan.period_ns.max(1))
                .take(MAX_OVERFLOW_CYCLES)
                .collect();
            columns.push(Column {
                name: format!("{}/{name}", transport.key().tag()),
                histogram: series.histogram.clone(),
                min_ns: series.summary.min_ns,
                max_ns: series.summary.max_ns,
                overflow_cycles,
            });
        }
    }
    columns
}

/// Counts per 1 us bucket; a sample belongs to the bucket of its HDR bucket's midpoint, kept
/// within the exact min and max (an HDR bucket can reach past the largest sample).
fn per_us(column: &Column, buckets: u64) -> Vec<u64> {
    let mut counts = vec![0u64; buckets as usize + 1];
    for step in column.histogram.iter_recorded() {
        let ns = column.histogram.median_equivalent(step.value_iterated_to());
        let us = ns.clamp(column.min_ns, column.max_ns) / 1_000;
        let count = &mut counts[us.min(buckets) as usize];
        *count = count.saturating_add(step.count_at_value());
    }
    counts
}

fn footer(out: &mut String, columns: &[Column], counts: &[Vec<u64>], buckets: u64) {
    let line = |out: &mut String, label: &str, values: Vec<u64>| {
        let _ = write!(out, "# {label}:");
        for value in values {
            let _ = write!(out, " {value:05}");
        }
        let _ = writeln!(out);
    };
    let _ = write!(out, "# Total:");
    for column in counts {
        let _ = write!(
            out,
            " {:09}",
            column[..buckets as usize]
                .iter()
                .fold(0u64, |total, &n| total.saturating_add(n))
        );
    }
    let _ = writeln!(out);
    line(
        out,
        "Min Latencies",
        columns.iter().map(|c| c.min_ns / 1_000).collect(),
    );
    line(
        out,
        "Avg Latencies",
        columns
            .iter()
            .map(|c| (c.histogram.mean() / 1e3).round() as u64)
            .collect(),
    );
    line(
        out,
        "Max Latencies",
        columns.iter().map(|c| c.max_ns / 1_000).collect(),
    );
    line(
        out,
        "Histogram Overflows",
        counts.iter().map(|c| c[buckets as usize]).collect(),
    );
    let _ = writeln!(out, "# Histogram Overflow at cycle number:");
    for (index, column) in columns.iter().enumerate() {
        let overflows = counts[index][buckets as usize];
        let others = overflows.saturating_sub(column.overflow_cycles.len() as u64);
        let _ = write!(out, "# Thread {index}:");
        for cycle in &column.overflow_cycles {
            let _ = write!(out, " {cycle:05}");
        }
        if others > 0 {
            let _ = write!(out, " # {others:05} others");
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsoak_testing::fixture::two_round_doc;

    #[test]
    fn the_histogram_file_has_the_cyclictest_layout() {
        insta::assert_snapshot!(render(&two_round_doc()));
    }

    #[test]
    fn there_is_one_row_per_microsecond_and_the_footer_lines_follow() {
        let doc = two_round_doc();
        let text = render(&doc);
        let rows: Vec<&str> = text
            .lines()
            .skip_while(|l| *l != "# Histogram")
            .skip(1)
            .take_while(|l| !l.starts_with('#'))
            .collect();
        // The largest sample is the fixture's 250 us delivery spike: buckets 0..=250.
        assert_eq!(rows.len(), 251);
        for (i, row) in rows.iter().enumerate() {
            // The bucket ends with a space, the counts are TAB-separated (as cyclictest's).
            let (bucket, counts) = row.split_once(' ').unwrap();
            assert_eq!(bucket, format!("{i:06}"));
            let fields: Vec<&str> = std::iter::once(bucket).chain(counts.split('\t')).collect();
            assert_eq!(
                fields.len(),
                1 + 7 + 7 + 6,
                "futex and eventfd × seven series, futex-syscall × six (no own wake)"
            );
        }
        assert!(
            text.ends_with(":\n\n") || text.ends_with("others\n\n"),
            "an empty last line"
        );
        for footer in [
            "# Total: ",
            "# Min Latencies: ",
            "# Avg Latencies: ",
            "# Max Latencies: ",
            "# Histogram Overflows: ",
            "# Histogram Overflow at cycle number:",
            "# Thread 0:",
            "# Thread 5:",
        ] {
            assert!(text.contains(footer), "missing {footer}");
        }
    }

    #[test]
    fn the_largest_sample_lands_in_the_last_row_not_the_overflow() {
        let mut histogram = rtsoak_analysis::stats::new_histogram();
        histogram.record(5_252_000).unwrap();
        let column = Column {
            name: "eventfd/timer".to_string(),
            histogram,
            min_ns: 5_252_000,
            max_ns: 5_252_000,
            overflow_cycles: Vec::new(),
        };
        let counts = per_us(&column, 5_253);
        assert_eq!(counts[5_252], 1);
        assert_eq!(counts[5_253], 0, "no overflow");
    }

    #[test]
    fn every_sample_lands_in_exactly_one_bucket_or_the_overflow() {
        let doc = two_round_doc();
        let text = render(&doc);
        let mut sums = Vec::new();
        for row in text
            .lines()
            .skip_while(|l| *l != "# Histogram")
            .skip(1)
            .take_while(|l| !l.starts_with('#'))
        {
            for (i, field) in row.split_whitespace().skip(1).enumerate() {
                if sums.len() <= i {
                    sums.push(0);
                }
                sums[i] += field.parse::<u64>().unwrap();
            }
        }
        let merged = by_transport(&doc);
        let expected: Vec<u64> = merged
            .iter()
            .filter(|t| !t.series.is_empty())
            .flat_map(|t| {
                Series::REPORTED
                    .iter()
                    .filter_map(|&n| t.series.get(&SeriesKey::Rt(n)))
            })
            .map(|s| s.summary.count)
            .collect();
        assert_eq!(sums, expected);
        let total = text.lines().find(|l| l.starts_with("# Total:")).unwrap();
        let totals: Vec<u64> = total[8..]
            .split_whitespace()
            .map(|v| v.parse().unwrap())
            .collect();
        assert_eq!(
            totals, sums,
            "# Total: is each column's samples in the buckets"
        );
    }
}
