//! One transport's runs of a comparison (one per round) merged into one set of figures: the
//! histograms are added and the percentiles read from the sum; count, min, max and
//! over-threshold are combined exactly. Percentiles are never averaged.
//!
//! Pure: reads a [`ResultDoc`], writes nothing. Every exporter that reports per transport goes
//! through [`by_transport`], so the figures agree across formats. Counts add saturating: a
//! result that was read has counts that add up (`store::check` refuses one whose do not), and
//! no sum can ever wrap to a small number. Linear in the runs.

use std::collections::{BTreeMap, HashMap};

use hdrhistogram::Histogram;

use crate::stats::{decode_histogram, new_histogram};
use rtsoak_record::result::{ResultDoc, RunKey, RunResult, RunStatus};
use rtsoak_record::{Attribution, Integrity, SampleStats, Summary};
use rtsoak_record::{RingSetup, Series, SeriesKey};

/// One transport's runs, merged (one ring setup's, in a ring-setup comparison).
#[derive(Debug, Clone)]
pub struct TransportRuns<'a> {
    /// Registry name.
    pub transport: &'a str,
    /// The ring setup its runs asked for, in a ring-setup comparison.
    pub ring_setup: Option<RingSetup>,
    /// The row's name in tables: [`RunKey::label`].
    pub label: String,
    /// Its runs, in the order run (round 1 first).
    pub runs: Vec<&'a RunResult>,
    /// The worst status among the runs.
    pub status: RunStatus,
    /// Integrity counts added over the runs.
    pub integrity: Integrity,
    /// Per series name: the merged histogram and its summary.
    pub series: BTreeMap<SeriesKey, MergedSeries>,
}

/// One series merged over runs.
#[derive(Debug, Clone)]
pub struct MergedSeries {
    /// Figures of the merged histogram; count, min, max, over-threshold exact.
    pub summary: Summary,
    /// The sum of the runs' histograms (ns).
    pub histogram: Histogram<u64>,
    /// Runs whose histogram of this series did not decode (a damaged or hand-edited file):
    /// left out of `histogram`, so the percentiles are unknown while the exact counters stand.
    pub undecodable_runs: usize,
}

impl MergedSeries {
    /// True when every run's histogram went into the sum: only then are its percentiles the
    /// series' percentiles.
    pub fn percentiles_known(&self) -> bool {
        self.undecodable_runs == 0
    }
}

/// Every transport (and ring setup) of `doc` in the order it first ran, unsupported ones
/// last, with its runs merged. A histogram that does not decode (a hand-edited file) leaves
/// that run out of the series' merge rather than failing the whole report (its exact counters
/// still count), and the series is marked `undecodable`.
pub fn by_transport(doc: &ResultDoc) -> Vec<TransportRuns<'_>> {
    grouped(&doc.runs)
        .into_iter()
        .map(|(key, runs)| merge(key, runs))
        .collect()
}

/// `runs` grouped by their key in one pass: the keys in the order of their first supported
/// run, then those that only ever were unsupported; each key's runs in the order run.
pub fn grouped(runs: &[RunResult]) -> Vec<(RunKey<'_>, Vec<&RunResult>)> {
    fn id<'a>(key: RunKey<'a>) -> (&'a str, Option<&'static str>) {
        (key.transport, key.ring_setup.map(RingSetup::name))
    }
    let mut groups: Vec<(RunKey<'_>, Vec<&RunResult>)> = Vec::new();
    let mut index: HashMap<(&str, Option<&str>), usize> = HashMap::new();
    for unsupported in [false, true] {
        for run in runs {
            let key = RunKey::of(run);
            if (run.status == RunStatus::Unsupported) == unsupported {
                index.entry(id(key)).or_insert_with(|| {
                    groups.push((key, Vec::new()));
                    groups.len() - 1
                });
            }
        }
    }
    for run in runs {
        groups[index[&id(RunKey::of(run))]].1.push(run);
    }
    groups
}

fn merge<'a>(key: RunKey<'a>, runs: Vec<&'a RunResult>) -> TransportRuns<'a> {
    let mut histograms: BTreeMap<SeriesKey, (Histogram<u64>, SampleStats, usize)> = BTreeMap::new();
    let mut integrity: Option<Integrity> = None;
    for run in &runs {
        integrity = Some(match integrity {
            None => run.integrity,
            Some(total) => add_integrity(total, &run.integrity),
        });
        for (&key, series) in &run.series {
            let (histogram, stats, undecodable) = histograms
                .entry(key)
                .or_insert_with(|| (new_histogram(), SampleStats::default(), 0));
            match decode_histogram(&series.histogram) {
                Ok(decoded) if histogram.add(&decoded).is_ok() => {}
                _ => *undecodable += 1,
            }
            stats.merge(&SampleStats {
                count: series.summary.count,
                min_ns: series.summary.min_ns,
                max_ns: series.summary.max_ns,
                over_threshold: series.summary.over_threshold,
            });
        }
    }
    let integrity = integrity.unwrap_or_default();
    // Rounds that told own wakes apart differently (or not at all) measured different things
    // under the name `own_wake`: their sum would mean neither, so the merged result has none.
    let series = histograms
        .into_iter()
        .filter(|(key, _)| {
            *key != SeriesKey::Rt(Series::OwnWake) || integrity.own_wake.attributable()
        })
        .map(|(key, (histogram, stats, undecodable_runs))| {
            let summary = crate::stats::summarise(&histogram, &stats);
            let merged = MergedSeries {
                summary,
                histogram,
                undecodable_runs,
            };
            (key, merged)
        })
        .collect();
    TransportRuns {
        transport: key.transport,
        ring_setup: key.ring_setup,
        label: key.label(),
        status: worst_status(&runs),
        runs,
        integrity,
        series,
    }
}

/// Two runs' integrity counts added (saturating). Own-wake figures add up only where both runs
/// could tell own wakes apart the same way; otherwise they are not attributable.
fn add_integrity(total: Integrity, run: &Integrity) -> Integrity {
    let same = total.own_wake == run.own_wake;
    let add = |a: Option<u64>, b: Option<u64>| {
        a.zip(b).filter(|_| same).map(|(a, b)| a.saturating_add(b))
    };
    Integrity {
        sent: total.sent.saturating_add(run.sent),
        delivered: total.delivered.saturating_add(run.delivered),
        lost: total.lost.saturating_add(run.lost),
        late: total.late.saturating_add(run.late),
        overrun: total.overrun.saturating_add(run.overrun),
        duplicated: total.duplicated.saturating_add(run.duplicated),
        reordered: total.reordered.saturating_add(run.reordered),
        planned_periods: total.planned_periods.saturating_add(run.planned_periods),
        missed_periods: total.missed_periods.saturating_add(run.missed_periods),
        wake_errors: total.wake_errors.saturating_add(run.wake_errors),
        cqe_errors: total.cqe_errors.saturating_add(run.cqe_errors),
        fallback_deliveries: total
            .fallback_deliveries
            .saturating_add(run.fallback_deliveries),
        own_wake: if same {
            total.own_wake
        } else {
            Attribution::None
        },
        own_wakes: add(total.own_wakes, run.own_wakes),
        wakes_missing: add(total.wakes_missing, run.wakes_missing),
        piggybacked: add(total.piggybacked, run.piggybacked),
    }
}

/// Failed beats interrupted beats completed; unsupported only when nothing ran.
fn worst_status(runs: &[&RunResult]) -> RunStatus {
    let rank = |status: RunStatus| match status {
        RunStatus::Unsupported => 0,
        RunStatus::Completed => 1,
        RunStatus::Interrupted => 2,
        RunStatus::Failed => 3,
    };
    runs.iter()
        .map(|r| r.status)
        .max_by_key(|s| rank(*s))
        .unwrap_or(RunStatus::Unsupported)
}

impl<'a> TransportRuns<'a> {
    /// The merged summary of a series (zeros if no run recorded it).
    pub fn summary(&self, key: impl Into<SeriesKey>) -> Summary {
        let key = key.into();
        self.series.get(&key).map(|s| s.summary).unwrap_or_default()
    }

    /// The key the runs were recorded under.
    pub fn key(&self) -> RunKey<'a> {
        RunKey {
            transport: self.transport,
            ring_setup: self.ring_setup,
        }
    }

    /// True when the series' percentiles are known (every run's histogram decoded); a series
    /// no run recorded has none.
    pub fn percentiles_known(&self, key: impl Into<SeriesKey>) -> bool {
        self.series
            .get(&key.into())
            .is_some_and(MergedSeries::percentiles_known)
    }

    /// The series whose histograms did not all decode, with how many runs' did not.
    pub fn undecodable(&self) -> impl Iterator<Item = (SeriesKey, usize)> {
        self.series
            .iter()
            .filter(|(_, s)| !s.percentiles_known())
            .map(|(&key, s)| (key, s.undecodable_runs))
    }

    /// Measured time of the runs added, ns (saturating, as every sum here).
    pub fn measured_ns(&self) -> u64 {
        self.runs
            .iter()
            .fold(0, |total: u64, run| total.saturating_add(run.measured_ns))
    }

    /// Runs that measured something (not unsupported).
    pub fn measured_runs(&self) -> usize {
        self.runs
            .iter()
            .filter(|r| r.status != RunStatus::Unsupported)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsoak_testing::fixture::two_round_doc;

    #[test]
    fn rounds_of_one_transport_merge_into_one_row_in_first_run_order() {
        let doc = two_round_doc();
        let merged = by_transport(&doc);
        let names: Vec<&str> = merged.iter().map(|m| m.transport).collect();
        assert_eq!(names, ["futex", "eventfd", "futex-syscall", "signalfd"]);
        assert_eq!(merged[0].runs.len(), 2);
        assert_eq!(merged[0].measured_runs(), 2);
        assert_eq!(
            merged[0].integrity.sent,
            doc.runs[0].integrity.sent + doc.runs[4].integrity.sent
        );
    }

    #[test]
    fn merged_percentiles_come_from_the_summed_histogram_not_an_average() {
        let doc = two_round_doc();
        let futex = &by_transport(&doc)[0];
        let delivery = futex.summary(Series::Delivery);
        let (a, b) = (
            doc.runs[0].series["delivery"].summary,
            doc.runs[4].series["delivery"].summary,
        );
        assert_eq!(delivery.count, a.count + b.count);
        assert_eq!(delivery.max_ns, a.max_ns.max(b.max_ns));
        assert_eq!(delivery.over_threshold, a.over_threshold + b.over_threshold);
        // The fixture's rounds differ: round 1 fast, round 2 slow. The merged median is the
        // median of all samples, which no average of the two medians gives.
        assert_ne!(delivery.p50_ns, (a.p50_ns + b.p50_ns) / 2);
        assert_eq!(
            delivery.p50_ns,
            futex.series["delivery"].histogram.value_at_quantile(0.5)
        );
    }

    #[test]
    fn integrity_counts_add_up_over_rounds_and_own_wake_figures_only_where_attributable() {
        let doc = two_round_doc();
        let merged = by_transport(&doc);
        let futex = &merged[0].integrity;
        assert_eq!(futex.missed_periods, 5);
        assert_eq!(futex.planned_periods, futex.sent + 5);
        assert_eq!(futex.fallback_deliveries, 12);
        assert_eq!(futex.own_wake, Attribution::Covering);
        assert_eq!(futex.piggybacked, Some(41 + 42));
        let syscall = &merged[2].integrity;
        assert_eq!(syscall.own_wake, Attribution::None);
        assert_eq!((syscall.own_wakes, syscall.piggybacked), (None, None));
    }

    #[test]
    fn rounds_that_told_own_wakes_apart_differently_are_not_attributable_merged() {
        let mut doc = two_round_doc();
        doc.runs[4].integrity.own_wake = Attribution::Exact;
        let futex = by_transport(&doc)[0].integrity;
        assert_eq!(futex.own_wake, Attribution::None);
        assert_eq!((futex.own_wakes, futex.piggybacked), (None, None));
        assert!(!by_transport(&doc)[0].series.contains_key("own_wake"));
        assert_eq!(
            futex.sent,
            doc.runs[0].integrity.sent + doc.runs[4].integrity.sent
        );
    }

    #[test]
    fn a_failed_round_makes_the_transport_failed_and_unsupported_stays_unsupported() {
        let doc = two_round_doc();
        let merged = by_transport(&doc);
        assert_eq!(merged[1].status, RunStatus::Failed);
        assert_eq!(merged[3].status, RunStatus::Unsupported);
        assert_eq!(merged[3].measured_runs(), 0);
    }
}
