//! How far the harness sits above its floor (`--floor`): for each transport (and ring setup),
//! the rounds in which both the harness's run and the floor pair's run completed are paired,
//! and per figure the median over those rounds of each side's p50 and p99 is compared as a
//! ratio, harness over floor. The over-threshold rates are compared on the counts summed over
//! the same rounds, with the exact two-sided rate test ([`super::rates`]). A figure whose run on
//! either side in some paired round cannot be shown (its histogram does not decode, its
//! summary contradicts itself: [`crate::consistent`]) is withheld with the reason, never
//! computed from what is left. Pure arithmetic over the result document, linear in its runs,
//! counts added saturating; `export::floor` shows it.

use std::collections::HashMap;

use crate::consistent::{self, Inconsistent};
use rtsoak_record::Summary;
use rtsoak_record::result::{ResultDoc, RunKey, RunResult, RunStatus};
use rtsoak_record::{Series, SeriesKey};

/// The figures the floor pair also takes, in the order shown.
pub const FIGURES: [Series; 3] = [Series::Delivery, Series::SendCall, Series::Timer];

/// One transport's (and ring setup's) harness against its floor.
#[derive(Debug, Clone, PartialEq)]
pub struct FloorRow {
    /// The row's label (`eventfd`, or `futex (defer-taskrun)` in a variant comparison).
    pub label: String,
    /// Rounds in which both sides completed, and so were paired.
    pub rounds: usize,
    /// Rounds left unpaired: one side did not complete or is missing.
    pub unpaired: usize,
    /// One entry per figure of [`FIGURES`] that both sides measured and that can be shown.
    pub figures: Vec<FigureOverhead>,
    /// The figures of [`FIGURES`] that both sides measured but that cannot be shown, and why.
    pub withheld: Vec<Withheld>,
}

/// A figure not shown: a run it rests on cannot be shown.
#[derive(Debug, Clone, PartialEq)]
pub struct Withheld {
    /// Which figure.
    pub series: Series,
    /// The paired round of the run.
    pub round: u32,
    /// `harness` or `floor`.
    pub side: &'static str,
    /// Why the run's figures cannot be shown.
    pub reason: Inconsistent,
}

impl FloorRow {
    /// The delivery figure, the one the headline reads.
    pub fn delivery(&self) -> Option<&FigureOverhead> {
        self.figures.iter().find(|f| f.series == Series::Delivery)
    }

    /// Why the delivery figure is withheld, if it is.
    pub fn delivery_withheld(&self) -> Option<&Withheld> {
        self.withheld.iter().find(|w| w.series == Series::Delivery)
    }
}

/// One figure, harness against floor.
#[derive(Debug, Clone, PartialEq)]
pub struct FigureOverhead {
    /// Which figure.
    pub series: Series,
    /// Median over the paired rounds of the harness's p50, ns.
    pub harness_p50_ns: u64,
    /// Median over the paired rounds of the floor's p50, ns.
    pub floor_p50_ns: u64,
    /// Median over the paired rounds of the harness's p99, ns.
    pub harness_p99_ns: u64,
    /// Median over the paired rounds of the floor's p99, ns.
    pub floor_p99_ns: u64,
    /// The lowest and highest of the floor's p99 over the paired rounds, ns: how far the floor
    /// itself moves from round to round on this machine, which a difference must exceed to be
    /// the harness's.
    pub floor_p99_spread_ns: (u64, u64),
    /// Over-threshold samples and samples of the harness, summed over the paired rounds.
    pub harness_over: (u64, u64),
    /// The same for the floor.
    pub floor_over: (u64, u64),
    /// Two-sided exact test that the two over-threshold rates differ (1.0: nothing to test).
    pub rates_differ_p: f64,
}

impl FigureOverhead {
    /// Harness p50 over floor p50 (`None` where the floor's is 0).
    pub fn p50_ratio(&self) -> Option<f64> {
        ratio(self.harness_p50_ns, self.floor_p50_ns)
    }

    /// Harness p99 over floor p99 (`None` where the floor's is 0).
    pub fn p99_ratio(&self) -> Option<f64> {
        ratio(self.harness_p99_ns, self.floor_p99_ns)
    }

    /// Whether the harness's p99 lies inside the floor's own round-to-round spread, so the two
    /// cannot be told apart here (a single round has no spread: told apart by nothing).
    pub fn p99_within_floor_spread(&self) -> bool {
        let (low, high) = self.floor_p99_spread_ns;
        (low..=high).contains(&self.harness_p99_ns)
    }
}

fn ratio(harness_ns: u64, floor_ns: u64) -> Option<f64> {
    (floor_ns > 0).then(|| harness_ns as f64 / floor_ns as f64)
}

/// Every row of the document's `--floor` comparison, in the order the harness's runs first
/// appear; empty without floor runs.
pub fn overhead(doc: &ResultDoc) -> Vec<FloorRow> {
    if doc.floor_runs.is_empty() {
        return Vec::new();
    }
    let floor = by_label(doc.floor_runs.iter());
    let harness = by_label(doc.runs.iter());
    let mut labels: Vec<String> = Vec::new();
    let mut listed = std::collections::HashSet::new();
    for run in doc
        .runs
        .iter()
        .filter(|r| r.status != RunStatus::Unsupported)
    {
        let label = RunKey::of(run).label();
        if listed.insert(label.clone()) {
            labels.push(label);
        }
    }
    labels
        .into_iter()
        .map(|label| {
            let floor = floor.get(&label).map_or(&[][..], Vec::as_slice);
            row(label.clone(), (harness[&label].as_slice(), floor))
        })
        .collect()
}

/// `runs` by their row's label, each label's runs in the order run.
fn by_label<'a>(runs: impl Iterator<Item = &'a RunResult>) -> HashMap<String, Vec<&'a RunResult>> {
    let mut out: HashMap<String, Vec<&RunResult>> = HashMap::new();
    for run in runs {
        out.entry(RunKey::of(run).label()).or_default().push(run);
    }
    out
}

fn row(label: String, (harness, floor): (&[&RunResult], &[&RunResult])) -> FloorRow {
    let rounds_run = harness.len().max(floor.len());
    // The first completed floor run of each round, found by round (not by a scan per run).
    let mut floor_by_round: HashMap<u32, &RunResult> = HashMap::new();
    for f in floor.iter().filter(|f| f.status == RunStatus::Completed) {
        floor_by_round.entry(f.round).or_insert(f);
    }
    let pairs: Vec<(&RunResult, &RunResult)> = harness
        .iter()
        .filter(|h| h.status == RunStatus::Completed)
        .filter_map(|h| Some((*h, *floor_by_round.get(&h.round)?)))
        .collect();
    let mut figures = Vec::new();
    let mut withheld = Vec::new();
    for series in FIGURES {
        match figure(series, &pairs) {
            Ok(Some(shown)) => figures.push(shown),
            Ok(None) => {}
            Err(why) => withheld.push(why),
        }
    }
    FloorRow {
        label,
        rounds: pairs.len(),
        unpaired: rounds_run - pairs.len(),
        figures,
        withheld,
    }
}

/// One figure over the paired rounds; `None` where a side has no sample of it in some round,
/// withheld where a side's run of it cannot be shown.
fn figure(
    series: Series,
    pairs: &[(&RunResult, &RunResult)],
) -> Result<Option<FigureOverhead>, Withheld> {
    let key = SeriesKey::Rt(series);
    let mut sides = Vec::with_capacity(pairs.len());
    for (harness, floor) in pairs {
        let (Some(h), Some(f)) = (harness.series.get(&key), floor.series.get(&key)) else {
            return Ok(None);
        };
        if h.summary.count == 0 || f.summary.count == 0 {
            return Ok(None);
        }
        for (side, run, s) in [("harness", harness, h), ("floor", floor, f)] {
            consistent::series(s).map_err(|reason| Withheld {
                series,
                round: run.round,
                side,
                reason,
            })?;
        }
        sides.push((h.summary, f.summary));
    }
    if sides.is_empty() {
        return Ok(None);
    }
    let median_of =
        |pick: fn(&(Summary, Summary)) -> u64| median_ns(sides.iter().map(pick).collect());
    let add = |(k, n): (u64, u64), s: &Summary| {
        (
            k.saturating_add(s.over_threshold),
            n.saturating_add(s.count),
        )
    };
    let harness_over = sides.iter().fold((0, 0), |total, (h, _)| add(total, h));
    let floor_over = sides.iter().fold((0, 0), |total, (_, f)| add(total, f));
    Ok(Some(FigureOverhead {
        series,
        harness_p50_ns: median_of(|(h, _)| h.p50_ns),
        floor_p50_ns: median_of(|(_, f)| f.p50_ns),
        harness_p99_ns: median_of(|(h, _)| h.p99_ns),
        floor_p99_ns: median_of(|(_, f)| f.p99_ns),
        floor_p99_spread_ns: sides.iter().fold((u64::MAX, 0), |(low, high), (_, f)| {
            (low.min(f.p99_ns), high.max(f.p99_ns))
        }),
        harness_over,
        floor_over,
        rates_differ_p: super::rates::rates_differ_p_value(
            floor_over.0,
            floor_over.1,
            harness_over.0,
            harness_over.1,
        ),
    }))
}

/// The median (the mean of the middle two for an even count); 0 for none.
fn median_ns(mut values: Vec<u64>) -> u64 {
    values.sort_unstable();
    let n = values.len();
    match n {
        0 => 0,
        _ if n % 2 == 1 => values[n / 2],
        // The mean of the middle two, rounded down, without their sum overflowing.
        _ => values[n / 2 - 1].midpoint(values[n / 2]),
    }
}

#[cfg(test)]
#[path = "floor_tests.rs"]
mod tests;
