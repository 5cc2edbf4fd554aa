//! The decision a comparison exists for, stated from its figures: for the send call and for the
//! delivery, which transport has the fewest spikes over the threshold, which do not differ from
//! it at this run length, and which have significantly more (the exact two-sided test of two
//! rates, p < [`ALPHA`]); and, where the explainer ran, each transport's main cause of spikes.
//! The record keeps every claim with its p-value, so a reader (or a test) can check each one
//! against the figures; the report crate words the claims (`rtsoak_report::decision`).
//!
//! Pure: reads a [`ResultDoc`], returns a [`Decision`]; never words or prints it.

use super::rates::rates_differ_p_value;
use crate::merge::{TransportRuns, by_transport};
use crate::stats::clopper_pearson_95;
use rtsoak_record::result::decision::{Claim, Decision, MainCause, Rate, SeriesDecision};
use rtsoak_record::result::explain::SeriesBlame;
use rtsoak_record::result::{ResultDoc, RunStatus};
use rtsoak_record::{Series, SeriesKey};

/// Significance level of every claim a decision makes.
pub(crate) const ALPHA: f64 = 0.01;

/// The series a decision ranks.
const DECIDED: [Series; 2] = [Series::SendCall, Series::Delivery];

/// The decision of `doc`.
pub fn decide(doc: &ResultDoc) -> Decision {
    let merged = by_transport(doc);
    let measured: Vec<&TransportRuns<'_>> = merged
        .iter()
        .filter(|t| t.status != RunStatus::Unsupported)
        .collect();
    Decision {
        threshold_ns: doc.plan.threshold_ns,
        alpha: ALPHA,
        series: DECIDED
            .iter()
            .map(|&series| decide_series(series, &measured))
            .collect(),
        causes: measured.iter().filter_map(|t| main_cause(t)).collect(),
    }
}

fn rate_of(t: &TransportRuns<'_>, series: Series) -> Option<Rate> {
    let s = t.series.get(&SeriesKey::Rt(series))?.summary;
    let interval = clopper_pearson_95(s.over_threshold, s.count)?;
    Some(Rate {
        transport: t.transport.to_string(),
        ring_setup: t.ring_setup,
        label: t.label.clone(),
        over_threshold: s.over_threshold,
        count: s.count,
        per_million: s.over_threshold_per_million(),
        low_per_million: interval.low * 1e6,
        high_per_million: interval.high * 1e6,
    })
}

fn p_value(a: &Rate, b: &Rate) -> f64 {
    rates_differ_p_value(a.over_threshold, a.count, b.over_threshold, b.count)
}

fn decide_series(series: Series, measured: &[&TransportRuns<'_>]) -> SeriesDecision {
    let mut ranking: Vec<Rate> = measured.iter().filter_map(|t| rate_of(t, series)).collect();
    ranking.sort_by(|a, b| a.per_million.total_cmp(&b.per_million));
    let mut decision = SeriesDecision {
        series,
        ranking: Vec::new(),
        fewest: Vec::new(),
        significant: Vec::new(),
        not_significant: Vec::new(),
        sentence: None,
    };
    let Some(best) = ranking.first().cloned() else {
        return decision;
    };
    let (group, worse): (Vec<&Rate>, Vec<&Rate>) = ranking
        .iter()
        .partition(|r| r.label == best.label || p_value(&best, r) >= ALPHA);
    decision.fewest = group.iter().map(|r| r.label.clone()).collect();
    decision.not_significant = group[1..].iter().map(|r| claim(&best, r)).collect();
    // Each worse transport against every member of the fewest group, in ranking order.
    decision.significant = worse
        .iter()
        .flat_map(|w| {
            group
                .iter()
                .filter(|g| p_value(g, w) < ALPHA)
                .map(|g| claim(g, w))
        })
        .collect();
    decision.ranking = ranking;
    decision
}

fn claim(lower: &Rate, higher: &Rate) -> Claim {
    Claim {
        lower: lower.label.clone(),
        higher: higher.label.clone(),
        p_value: p_value(lower, higher),
    }
}

/// The series with the most spikes of an explained transport, and what held it back most
/// often: its top cause, or none where the unexplained spikes are the larger share.
fn main_cause(t: &TransportRuns<'_>) -> Option<MainCause> {
    let explanations: Vec<_> = t
        .runs
        .iter()
        .filter_map(|r| r.explanation.as_ref())
        .collect();
    if explanations.is_empty() || explanations.iter().any(|e| e.tracing.unavailable.is_some()) {
        return None;
    }
    let (series, blame) = DECIDED
        .iter()
        .filter_map(|s| {
            Some((
                *s,
                SeriesBlame::merged(explanations.iter().copied(), SeriesKey::Rt(*s))?,
            ))
        })
        .filter(|(_, b)| b.kept > 0)
        .max_by_key(|(_, b)| b.over_threshold)?;
    let unexplained = 100.0 * blame.unexplained as f64 / blame.kept as f64;
    let (cause, share_percent, median_us) = match blame.causes.first() {
        Some(c) if c.share_percent >= unexplained => {
            (Some(c.cause.clone()), c.share_percent, Some(c.median_us))
        }
        _ => (None, unexplained, None),
    };
    Some(MainCause {
        label: t.label.clone(),
        series,
        over_threshold: blame.over_threshold,
        kept: blame.kept,
        cause,
        share_percent,
        median_us,
        sentence: None,
    })
}

#[cfg(test)]
#[path = "decision_tests.rs"]
mod tests;
