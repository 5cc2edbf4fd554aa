//! What a result read from a file must hold before anything renders, judges or compares it,
//! beyond its shape (which serde checks): every run names a transport its plan ran, no series
//! counts more samples over the threshold than samples (every rate rtsoak shows divides the
//! one by the other), and every count rtsoak adds over runs adds up within 64 bits.
//!
//! The counts are the one rule of rtsoak's arithmetic on foreign input: rtsoak adds counts over
//! runs (merging rounds, pairing a floor, a transport's errors, the spikes of a cause), and a
//! sum that wrapped would turn 2^64 lost messages into none and a lossy result into a clean
//! one. So a document whose counts, added over all its runs and floor runs, do not fit in 64
//! bits is refused here (exit 2), naming the count; where rtsoak adds them later it saturates,
//! which on a document that passed this check never happens and on any other never wraps.
//!
//! Its runs' transports bound the work: a result of a registry's few transports in 16,000
//! rounds is 16,000 runs of a few rows, never 16,000 rows compared pairwise.
//!
//! Owns: the refusals and their words. Never reads a file; never changes the document.

use std::collections::BTreeMap;

use rtsoak_record::SeriesKey;
use rtsoak_record::result::{ResultDoc, RunResult};

/// Why a document that parsed is still not read.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    /// A run names a transport its plan did not run.
    #[error(
        "run {index} names the transport `{transport}`, which its plan did not run ({planned}): \
         the file is not a result as rtsoak wrote it; give the result.json rtsoak saved"
    )]
    TransportNotPlanned {
        /// Where the run is: `runs[3]` or `floor_runs[3]`.
        index: String,
        /// The name it gives, escaped.
        transport: String,
        /// The plan's transports.
        planned: String,
    },
    /// A series with more samples over the threshold than samples.
    #[error(
        "{series}.summary counts {over} samples over the threshold of {count} samples: the file \
         is not a result as rtsoak wrote it (edited or damaged); give the result.json rtsoak \
         saved"
    )]
    MoreOverThanSamples {
        /// Where the series is: `runs[3].series.delivery`.
        series: String,
        /// Its over-threshold count.
        over: u64,
        /// Its sample count.
        count: u64,
    },
    /// Counts that cannot be added.
    #[error(
        "its {count} added over its runs exceed 2^64 - 1: rtsoak adds them to merge rounds, and \
         no run counts that many; the file is not a result as rtsoak wrote it (edited or \
         damaged): give the result.json rtsoak saved"
    )]
    CountsOverflow {
        /// Which count, as the schema names it (`runs[].integrity.lost`).
        count: String,
    },
}

/// Check `doc` (see the module documentation).
pub(crate) fn check(doc: &ResultDoc) -> Result<(), Refused> {
    transports_planned(doc)?;
    let mut totals = Totals::default();
    for (list, index, run) in all_runs(doc) {
        rates_possible(list, index, run)?;
        totals.add_run(run)?;
    }
    Ok(())
}

/// Every run and floor run, with the list it is in and its index there.
fn all_runs(doc: &ResultDoc) -> impl Iterator<Item = (&'static str, usize, &RunResult)> {
    let runs = doc.runs.iter().enumerate().map(|(i, r)| ("runs", i, r));
    let floor = doc.floor_runs.iter().enumerate();
    runs.chain(floor.map(|(i, r)| ("floor_runs", i, r)))
}

/// No series of `run` counts more samples over the threshold than samples.
fn rates_possible(list: &str, index: usize, run: &RunResult) -> Result<(), Refused> {
    for (key, series) in &run.series {
        let s = &series.summary;
        if s.over_threshold > s.count {
            return Err(Refused::MoreOverThanSamples {
                series: format!("{list}[{index}].series.{}", key.name()),
                over: s.over_threshold,
                count: s.count,
            });
        }
    }
    Ok(())
}

/// Every run and floor run names one of the plan's transports.
fn transports_planned(doc: &ResultDoc) -> Result<(), Refused> {
    let planned: Vec<&str> = doc.plan.transports.iter().map(|t| t.as_str()).collect();
    for (list, i, run) in all_runs(doc) {
        if !planned.contains(&run.transport.as_str()) {
            return Err(Refused::TransportNotPlanned {
                index: format!("{list}[{i}]"),
                transport: rtsoak_record::text::quote(&run.transport),
                planned: planned.join(", "),
            });
        }
    }
    Ok(())
}

/// One count as the schema names it, with the series key where it is one per series.
type Field = (&'static str, Option<SeriesKey>);

/// Sums over the runs so far, by field.
#[derive(Default)]
struct Totals {
    sums: BTreeMap<Field, u64>,
}

impl Totals {
    fn add(&mut self, field: Field, value: u64) -> Result<(), Refused> {
        let sum = self.sums.entry(field).or_insert(0);
        *sum = sum
            .checked_add(value)
            .ok_or_else(|| Refused::CountsOverflow {
                count: match field {
                    (name, Some(series)) => name.replace("{series}", series.name()),
                    (name, None) => name.to_string(),
                },
            })?;
        Ok(())
    }

    /// Add every count of `run` that rtsoak adds over runs.
    fn add_run(&mut self, run: &RunResult) -> Result<(), Refused> {
        let i = &run.integrity;
        let counts = [
            ("runs[].integrity.sent", i.sent),
            ("runs[].integrity.delivered", i.delivered),
            ("runs[].integrity.lost", i.lost),
            ("runs[].integrity.late", i.late),
            ("runs[].integrity.overrun", i.overrun),
            ("runs[].integrity.duplicated", i.duplicated),
            ("runs[].integrity.reordered", i.reordered),
            ("runs[].integrity.planned_periods", i.planned_periods),
            ("runs[].integrity.missed_periods", i.missed_periods),
            ("runs[].integrity.wake_errors", i.wake_errors),
            ("runs[].integrity.cqe_errors", i.cqe_errors),
            (
                "runs[].integrity.fallback_deliveries",
                i.fallback_deliveries,
            ),
            ("runs[].integrity.own_wakes", i.own_wakes.unwrap_or(0)),
            (
                "runs[].integrity.wakes_missing",
                i.wakes_missing.unwrap_or(0),
            ),
            ("runs[].integrity.piggybacked", i.piggybacked.unwrap_or(0)),
            ("runs[].measured_ns", run.measured_ns),
            ("runs[].noise.failures", run.noise.failures),
        ];
        for (name, value) in counts {
            self.add((name, None), value)?;
        }
        // A transport's failures are also reported as one count (the LAVA export's): their
        // sum is a field of its own, named by the fields it adds.
        let errors =
            "runs[].integrity.{wake_errors, cqe_errors, fallback_deliveries, wakes_missing}";
        for value in [i.wake_errors, i.cqe_errors, i.fallback_deliveries] {
            self.add((errors, None), value)?;
        }
        self.add((errors, None), i.wakes_missing.unwrap_or(0))?;
        // Over-threshold counts add up wherever the sample counts do: no run has more.
        for (&key, series) in &run.series {
            let count = ("runs[].series.{series}.summary.count", Some(key));
            self.add(count, series.summary.count)?;
        }
        self.add_explanation(run)
    }

    /// The explainer's counts of `run`'s spikes, which add over runs by series and cause.
    fn add_explanation(&mut self, run: &RunResult) -> Result<(), Refused> {
        let Some(explanation) = &run.explanation else {
            return Ok(());
        };
        for (&key, blame) in &explanation.series {
            let counts = [
                (
                    "runs[].explanation.series.{series}.over_threshold",
                    blame.over_threshold,
                ),
                ("runs[].explanation.series.{series}.kept", blame.kept),
                (
                    "runs[].explanation.series.{series}.explained",
                    blame.explained,
                ),
                (
                    "runs[].explanation.series.{series}.unexplained",
                    blame.unexplained,
                ),
                (
                    "runs[].explanation.series.{series}.unexplained_on_cpu",
                    blame.unexplained_on_cpu,
                ),
            ];
            for (name, value) in counts {
                self.add((name, Some(key)), value)?;
            }
            // Causes add by name; their counts together bound each name's sum.
            let causes = "runs[].explanation.series.{series}.causes[].count";
            for cause in &blame.causes {
                self.add((causes, Some(key)), cause.count)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{from_bytes, to_json};
    use rtsoak_record::Series;
    use rtsoak_testing::fixture::two_round_doc;

    /// The fixture's two futex rounds with `set` applied to each, read back from its bytes.
    fn read_with(set: impl Fn(&mut RunResult, u64)) -> anyhow::Result<ResultDoc> {
        let mut doc = two_round_doc();
        for run in doc.runs.iter_mut().filter(|r| r.transport == "futex") {
            set(run, u64::MAX / 2 + 1);
        }
        from_bytes(&to_json(&doc))
    }

    fn refusal(result: anyhow::Result<ResultDoc>) -> String {
        let error = result.expect_err("the document is refused");
        assert!(error.downcast_ref::<Refused>().is_some(), "{error:#}");
        format!("{error:#}")
    }

    #[test]
    fn two_rounds_whose_lost_messages_add_past_2_to_the_64_are_refused_not_wrapped_to_none() {
        let message = refusal(read_with(|run, n| run.integrity.lost = n));
        assert!(
            message.contains("its runs[].integrity.lost added over its runs exceed 2^64 - 1"),
            "{message}"
        );
        // With eventfd's 3 the document's total is exactly 2^64 - 1: it adds up, and the
        // merged count is the exact sum.
        let doc = read_with(|run, n| run.integrity.lost = n - 2).unwrap();
        let futex = &rtsoak_analysis::merge::by_transport(&doc)[0];
        assert_eq!(futex.integrity.lost, u64::MAX - 3);
        assert!(futex.integrity.loss().is_some());
    }

    #[test]
    fn every_count_rtsoak_adds_over_runs_is_checked() {
        type Set = fn(&mut RunResult, u64);
        let cases: [(&str, Set); 5] = [
            ("runs[].measured_ns", |run, n| run.measured_ns = n),
            ("runs[].integrity.piggybacked", |run, n| {
                run.integrity.piggybacked = Some(n)
            }),
            ("runs[].noise.failures", |run, n| run.noise.failures = n),
            ("runs[].series.delivery.summary.count", |run, n| {
                let s = &mut run
                    .series
                    .get_mut(&SeriesKey::Rt(Series::Delivery))
                    .unwrap();
                s.summary.count = n;
            }),
            ("wake_errors, cqe_errors, fallback_deliveries", |run, n| {
                run.integrity.cqe_errors = n / 2 + 1;
                run.integrity.wake_errors = n / 2 + 1;
            }),
        ];
        for (count, set) in cases {
            let message = refusal(read_with(set));
            assert!(message.contains(count), "{count}: {message}");
        }
    }

    #[test]
    fn a_run_of_a_transport_its_plan_did_not_run_is_refused_escaped() {
        let mut doc = two_round_doc();
        doc.runs[1].transport = "futex\u{1b}[2J".to_string();
        let message = refusal(from_bytes(&to_json(&doc)));
        assert!(
            message.contains("run runs[1] names the transport `futex\\x1b[2J`, which its plan"),
            "{message}"
        );
    }

    #[test]
    fn a_lone_surrogate_written_as_an_escape_is_no_text_and_the_file_no_json() {
        let json = String::from_utf8(to_json(&two_round_doc())).unwrap();
        let broken = json.replacen("\"ci\"", "\"ci\\ud800\"", 1);
        assert_ne!(broken, json);
        let error = from_bytes(broken.as_bytes()).unwrap_err();
        assert!(
            format!("{error:#}").contains("the file is not JSON"),
            "{error:#}"
        );
    }

    #[test]
    fn a_series_with_more_spikes_than_samples_is_refused() {
        let mut doc = two_round_doc();
        let delivery = SeriesKey::Rt(Series::Delivery);
        let s = &mut doc.runs[2].series.get_mut(&delivery).unwrap().summary;
        s.over_threshold = s.count + 1;
        let message = refusal(from_bytes(&to_json(&doc)));
        assert!(
            message.contains("runs[2].series.delivery.summary counts"),
            "{message}"
        );
    }
}
