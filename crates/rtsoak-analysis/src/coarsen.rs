//! Keeping a long result small: a result document keeps at most [`MAX_INTERVALS`] intervals
//! over all its runs, each run an equal share ([`intervals_per_run`]). A run with more
//! intervals than its share has adjacent ones merged (histograms added, exact counters
//! combined) into fewer, longer ones. An 8-hour run at the default 10 s interval has 2,880
//! intervals and keeps 240 (120 s each); an 8-hour nightly of the eight transports in five
//! rounds has 40 runs of 72 intervals and keeps 6 of each (120 s). Pure: no I/O. The run-wide series
//! are untouched, so no figure changes; only the time resolution of the interval list
//! coarsens, and each merged interval says its real start and length.

use std::collections::BTreeMap;

use crate::stats::{decode_histogram, encode_histogram};
use rtsoak_record::SeriesKey;
use rtsoak_record::result::{Interval, IntervalSeries};

/// Most intervals a result document keeps, over all its runs.
/// An 8-hour run keeps 120 s intervals. At two significant digits a busy machine's interval of
/// every series takes about 8.7 KB, so the list stays near 2 MB however many runs share it.
pub(crate) const MAX_INTERVALS: usize = 240;

/// The intervals each run of a plan of `planned_runs` keeps: an equal share of
/// [`MAX_INTERVALS`], at least one.
pub fn intervals_per_run(planned_runs: usize) -> usize {
    (MAX_INTERVALS / planned_runs.max(1)).max(1)
}

/// Merge runs of adjacent intervals so that at most `max_intervals` remain (at least one).
/// Every group but the last holds the same number of intervals.
pub fn coarsen(intervals: Vec<Interval>, max_intervals: usize) -> Vec<Interval> {
    let max_intervals = max_intervals.max(1);
    if intervals.len() <= max_intervals {
        return intervals;
    }
    let group = intervals.len().div_ceil(max_intervals);
    intervals
        .chunks(group)
        .enumerate()
        .map(|(index, chunk)| merge(index as u32, chunk))
        .collect()
}

/// One interval spanning `chunk` (adjacent, in order, non-empty).
fn merge(index: u32, chunk: &[Interval]) -> Interval {
    let start_ns = chunk.first().map_or(0, |i| i.start_ns);
    let end_ns = chunk
        .iter()
        .map(|i| i.start_ns.saturating_add(i.length_ns))
        .max()
        .unwrap_or(start_ns);
    let mut series: BTreeMap<SeriesKey, IntervalSeries> = BTreeMap::new();
    let mut histograms = BTreeMap::new();
    for interval in chunk {
        for (&key, part) in &interval.series {
            series
                .entry(key)
                .or_insert_with(|| IntervalSeries {
                    stats: Default::default(),
                    histogram: None,
                })
                .stats
                .merge(&part.stats);
            // A histogram that does not decode (never written by rtsoak itself) is left out of
            // the merged one; its exact counters above still count. A diagnostic series has
            // none (`IntervalSeries::histogram`), and its merged interval none either.
            if let Some(Ok(histogram)) = part.histogram.as_deref().map(decode_histogram) {
                let merged = histograms
                    .entry(key)
                    .or_insert_with(crate::stats::new_coarse_histogram);
                let _ = merged.add(&histogram);
            }
        }
    }
    for (key, histogram) in histograms {
        if let Some(entry) = series.get_mut(&key) {
            entry.histogram = Some(encode_histogram(&histogram));
        }
    }
    Interval {
        index,
        start_ns,
        length_ns: end_ns.saturating_sub(start_ns),
        series,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::new_histogram;
    use rtsoak_record::SampleStats;
    use rtsoak_record::Series;

    const SECOND_NS: u64 = 1_000_000_000;

    /// A synthetic run: `count` intervals of 10 s, each with the `delivery` series holding
    /// the samples `index * 1000 + 1` and `index * 1000 + 2` ns.
    fn intervals(count: u32) -> Vec<Interval> {
        (0..count)
            .map(|index| {
                let mut histogram = new_histogram();
                let mut stats = SampleStats::default();
                for value in [u64::from(index) * 1000 + 1, u64::from(index) * 1000 + 2] {
                    histogram.record(value).unwrap();
                    stats.add(value, 100_000);
                }
                let series = IntervalSeries {
                    stats,
                    histogram: Some(encode_histogram(&histogram)),
                };
                Interval {
                    index,
                    start_ns: u64::from(index) * 10 * SECOND_NS,
                    length_ns: 10 * SECOND_NS,
                    series: BTreeMap::from([(SeriesKey::Rt(Series::Delivery), series)]),
                }
            })
            .collect()
    }

    #[test]
    fn a_run_under_the_cap_keeps_its_intervals_as_they_are() {
        let original = intervals(5);
        assert_eq!(coarsen(original.clone(), 5), original);
    }

    #[test]
    fn an_eight_hour_run_is_merged_to_the_cap_losing_no_sample() {
        let eight_hours = intervals(8 * 360);
        let merged = coarsen(eight_hours, MAX_INTERVALS);
        assert_eq!(merged.len(), MAX_INTERVALS);
        // Twelve 10 s intervals per merged one, back to back, numbered again from 0.
        for (i, interval) in merged.iter().enumerate() {
            assert_eq!(interval.index, i as u32);
            assert_eq!(interval.start_ns, i as u64 * 120 * SECOND_NS);
            assert_eq!(interval.length_ns, 120 * SECOND_NS);
        }
        let first = &merged[0].series["delivery"];
        assert_eq!(
            first.stats,
            SampleStats {
                count: 24,
                min_ns: 1,
                max_ns: 11002,
                over_threshold: 0
            }
        );
        let histogram = decode_histogram(first.histogram.as_deref().unwrap()).unwrap();
        assert_eq!(histogram.len(), 24);
        // Kept at the interval precision: 11002 ns within its two-digit bucket.
        assert_eq!(
            histogram.max(),
            crate::stats::new_coarse_histogram().highest_equivalent(11002)
        );
        let total: u64 = merged
            .iter()
            .map(|i| i.series["delivery"].stats.count)
            .sum();
        assert_eq!(total, 2 * 8 * 360);
    }

    #[test]
    fn an_uneven_split_leaves_a_shorter_last_interval() {
        let merged = coarsen(intervals(10), 4);
        let shape: Vec<(u64, u64)> = merged
            .iter()
            .map(|i| (i.start_ns / SECOND_NS, i.length_ns / SECOND_NS))
            .collect();
        assert_eq!(shape, [(0, 30), (30, 30), (60, 30), (90, 10)]);
    }

    #[test]
    fn an_eight_hour_result_stays_small_once_merged() {
        let eight_hours = intervals(8 * 360);
        let before = serde_json::to_vec(&eight_hours).unwrap().len();
        let after = serde_json::to_vec(&coarsen(eight_hours, MAX_INTERVALS))
            .unwrap()
            .len();
        eprintln!("8 h of one series' intervals: {before} bytes, merged: {after} bytes");
        assert!(after * 3 < before, "{after} vs {before}");
    }

    #[test]
    fn a_histogram_that_does_not_decode_is_left_out_without_a_panic() {
        let mut broken = intervals(4);
        broken[1].series.get_mut("delivery").unwrap().histogram = Some("not base64 !".into());
        let merged = coarsen(broken, 1);
        let series = &merged[0].series["delivery"];
        assert_eq!(series.stats.count, 8);
        assert_eq!(
            decode_histogram(series.histogram.as_deref().unwrap())
                .unwrap()
                .len(),
            6
        );
    }

    #[test]
    fn a_series_without_interval_histograms_keeps_its_counters_and_gets_none_merged() {
        let mut diagnostic = intervals(4);
        for interval in &mut diagnostic {
            interval.series.get_mut("delivery").unwrap().histogram = None;
        }
        let merged = coarsen(diagnostic, 1);
        let series = &merged[0].series["delivery"];
        assert_eq!(series.stats.count, 8);
        assert_eq!(series.histogram, None);
    }

    #[test]
    fn a_document_shares_its_intervals_among_its_planned_runs() {
        assert_eq!(intervals_per_run(1), MAX_INTERVALS);
        assert_eq!(intervals_per_run(0), MAX_INTERVALS);
        // An 8-hour nightly: the eight transports in five rounds.
        assert_eq!(intervals_per_run(40), 6);
        assert_eq!(intervals_per_run(MAX_INTERVALS * 3), 1);
    }

    #[test]
    fn a_cap_of_zero_is_taken_as_one() {
        assert_eq!(coarsen(intervals(3), 0).len(), 1);
    }
}
