//! HdrHistogram percentile distribution (`outputPercentileDistribution`, ".hgrm") for every
//! transport (rounds merged) and reported series, values in microseconds, 5 ticks per half
//! distance, with the Java writer's header and footer lines. One block per transport and
//! series, each introduced by a `#` comment naming it; split the file at those lines to feed one
//! block to a plotter that takes one distribution per file.

use std::fmt::Write;

use hdrhistogram::Histogram;

use rtsoak_analysis::merge::by_transport;
use rtsoak_record::result::ResultDoc;
use rtsoak_record::{Series, SeriesKey};

/// Values are printed in us: ns divided by this.
const VALUE_UNIT_RATIO: f64 = 1e3;
/// Percentile ticks per half distance to 100 %, as HdrHistogram's examples use.
const TICKS_PER_HALF_DISTANCE: u32 = 5;

/// Render every merged series of `doc` as percentile distributions.
pub(crate) fn render(doc: &ResultDoc) -> String {
    let mut out = String::new();
    for transport in by_transport(doc) {
        for name in Series::REPORTED.map(SeriesKey::Rt) {
            let Some(series) = transport.series.get(&name) else {
                continue;
            };
            if series.histogram.is_empty() || !series.percentiles_known() {
                continue;
            }
            let comment = format!(
                "# rtsoak {}: transport {}, series {name}, {} runs, values in us",
                doc.command,
                transport.label,
                transport.measured_runs()
            );
            // The comment names what the result holds: one line, escaped.
            let _ = writeln!(out, "{}", super::escape::terminal(&comment));
            distribution(&mut out, &series.histogram);
        }
    }
    out
}

/// One histogram's distribution in the Java writer's layout.
fn distribution(out: &mut String, histogram: &Histogram<u64>) {
    let digits = usize::from(histogram.sigfig());
    let scaled = |ns: u64| ns as f64 / VALUE_UNIT_RATIO;
    let _ = writeln!(
        out,
        "{:>12} {:>14} {:>10} {:>14}\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    );
    let mut total = 0u64;
    for step in histogram.iter_quantiles(TICKS_PER_HALF_DISTANCE) {
        total = total.saturating_add(step.count_since_last_iteration());
        let quantile = step.quantile_iterated_to();
        let value = scaled(histogram.highest_equivalent(step.value_iterated_to()));
        if quantile < 1.0 {
            let _ = writeln!(
                out,
                "{value:12.digits$} {quantile:2.12} {total:10} {:14.2}",
                1.0 / (1.0 - quantile)
            );
        } else {
            let _ = writeln!(out, "{value:12.digits$} {quantile:2.12} {total:10}");
        }
    }
    let _ = writeln!(
        out,
        "#[Mean    = {:12.digits$}, StdDeviation   = {:12.digits$}]",
        histogram.mean() / VALUE_UNIT_RATIO,
        histogram.stdev() / VALUE_UNIT_RATIO
    );
    let _ = writeln!(
        out,
        "#[Max     = {:12.digits$}, Total count    = {:12}]",
        scaled(histogram.max()),
        histogram.len()
    );
    let _ = writeln!(
        out,
        "#[Buckets = {:12}, SubBuckets     = {:12}]",
        histogram.buckets(),
        sub_buckets(histogram.sigfig())
    );
}

/// Sub-buckets per bucket for `sigfig` digits: the power of two at or above 2 × 10^sigfig.
fn sub_buckets(sigfig: u8) -> u64 {
    (2 * 10u64.pow(u32::from(sigfig))).next_power_of_two()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsoak_testing::fixture::two_round_doc;

    #[test]
    fn distributions_follow_the_java_layout_per_transport_and_series() {
        insta::assert_snapshot!(render(&two_round_doc()));
    }

    #[test]
    fn the_last_row_of_each_block_is_100_percent_with_the_total_count() {
        let text = render(&two_round_doc());
        let blocks: Vec<&str> = text.split("# rtsoak").skip(1).collect();
        assert_eq!(
            blocks.len(),
            7 + 7 + 6,
            "futex and eventfd × seven series, futex-syscall × six (no own wake)"
        );
        for block in blocks {
            let last_row = block
                .lines()
                .rfind(|l| !l.starts_with('#') && !l.trim().is_empty())
                .unwrap();
            let fields: Vec<&str> = last_row.split_whitespace().collect();
            assert_eq!(fields.len(), 3, "{last_row}");
            assert_eq!(fields[1], "1.000000000000");
            let total = block
                .lines()
                .find(|l| l.starts_with("#[Max"))
                .unwrap()
                .rsplit('=')
                .next()
                .unwrap()
                .trim_end_matches(']')
                .trim()
                .to_string();
            assert_eq!(fields[2], total);
        }
    }

    #[test]
    fn three_digit_histograms_have_2048_sub_buckets() {
        assert_eq!(sub_buckets(3), 2048);
    }
}
