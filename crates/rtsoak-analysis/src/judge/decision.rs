//! The decision a comparison exists for, stated from its figures: for the send call and for the
//! delivery, which transport has the fewest spikes over the threshold, which do not differ from
//! it at this run length, and which have significantly more (the exact two-sided test of two
//! rates, p < [`ALPHA`]); and, where the explainer ran, each transport's main cause of spikes.
//! Every sentence is made from claims the record keeps with their p-values, so a reader (or a
//! test) can check each one against the figures.
//!
//! Pure: reads a [`ResultDoc`], returns a [`Decision`]; never prints.

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
    let threshold = format!("{} us", doc.plan.threshold_ns as f64 / 1e3);
    Decision {
        threshold_ns: doc.plan.threshold_ns,
        alpha: ALPHA,
        series: DECIDED
            .iter()
            .map(|&series| decide_series(series, &measured, &threshold))
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

fn decide_series(
    series: Series,
    measured: &[&TransportRuns<'_>],
    threshold: &str,
) -> SeriesDecision {
    let mut ranking: Vec<Rate> = measured.iter().filter_map(|t| rate_of(t, series)).collect();
    ranking.sort_by(|a, b| a.per_million.total_cmp(&b.per_million));
    let name = series_words(series.name());
    let mut decision = SeriesDecision {
        series,
        ranking: Vec::new(),
        fewest: Vec::new(),
        significant: Vec::new(),
        not_significant: Vec::new(),
        sentence: String::new(),
    };
    let Some(best) = ranking.first().cloned() else {
        decision.sentence = format!("{name}: no transport was measured");
        return decision;
    };
    let (group, worse): (Vec<&Rate>, Vec<&Rate>) = ranking
        .iter()
        .partition(|r| r.label == best.label || p_value(&best, r) >= ALPHA);
    decision.fewest = group.iter().map(|r| r.label.clone()).collect();
    decision.not_significant = group[1..].iter().map(|r| claim(&best, r)).collect();
    let mut sentence = opening(&name, threshold, &ranking, &group, &decision.fewest);
    sentence += &worse_clauses(&group, &worse, &mut decision.significant);
    sentence.push('.');
    decision.sentence = sentence;
    decision.ranking = ranking;
    decision
}

/// The decision's first clause: which transport has the fewest spikes over `threshold` in
/// `ranking` (best first), and which of them (`group`, named `fewest`) do not differ from it.
fn opening(
    name: &str,
    threshold: &str,
    ranking: &[Rate],
    group: &[&Rate],
    fewest: &[String],
) -> String {
    let best = &ranking[0];
    let worse_exist = group.len() < ranking.len();
    if ranking.len() == 1 {
        format!(
            "{name}: only {} was measured ({} per million over {threshold})",
            best.label,
            per_million(best.per_million)
        )
    } else if ranking.iter().all(|r| r.over_threshold == 0) {
        format!(
            "{name}: no transport had a sample over {threshold}; at this run length that bounds \
             each rate below {} per million (95 %)",
            per_million(
                ranking
                    .iter()
                    .map(|r| r.high_per_million)
                    .fold(0.0, f64::max)
            )
        )
    } else if !worse_exist {
        format!(
            "{name}: {} do not differ significantly at this run length ({} has the fewest \
             spikes over {threshold}, {} per million)",
            and_list(fewest),
            best.label,
            per_million(best.per_million)
        )
    } else {
        let mut text = format!(
            "{name}: {} has the fewest spikes over {threshold} ({} per million)",
            best.label,
            per_million(best.per_million)
        );
        if group.len() > 1 {
            text += &format!(
                ", and {} {} not differ from it significantly at this run length",
                and_list(&fewest[1..]),
                if group.len() == 2 { "does" } else { "do" }
            );
        }
        text
    }
}

/// The clauses for the transports significantly `worse` than some of the fewest `group`,
/// each claim kept in `significant`.
fn worse_clauses(group: &[&Rate], worse: &[&Rate], significant: &mut Vec<Claim>) -> String {
    let mut sentence = String::new();
    // Each worse transport, with the members of the fewest group significantly below it;
    // transports with the same such members share one clause.
    let mut clauses: Vec<(Vec<String>, Vec<String>)> = Vec::new();
    for w in worse {
        let lower: Vec<&&Rate> = group.iter().filter(|g| p_value(g, w) < ALPHA).collect();
        for g in &lower {
            significant.push(claim(g, w));
        }
        let lower: Vec<String> = lower.iter().map(|g| g.label.clone()).collect();
        match clauses.iter_mut().find(|(l, _)| *l == lower) {
            Some((_, higher)) => higher.push(w.label.clone()),
            None => clauses.push((lower, vec![w.label.clone()])),
        }
    }
    for (lower, higher) in &clauses {
        let subject = if lower.len() == group.len() && group.len() > 1 {
            "each of them has".to_string()
        } else if lower.len() == 1 {
            format!("{} has", lower[0])
        } else {
            format!("{} have", and_list(lower))
        };
        sentence += &format!(
            "; {subject} significantly fewer than {} (p < {ALPHA})",
            and_list(higher)
        );
    }
    sentence
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

/// `send call`, `delivery`.
fn series_words(series: &str) -> String {
    series.replace('_', " ")
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// A rate per million: two decimals under 10, one under 100, none above (`0`, `2.50`, `52.6`,
/// `24300`).
pub fn per_million(value: f64) -> String {
    if value == 0.0 {
        "0".to_string()
    } else if value < 10.0 {
        format!("{value:.2}")
    } else if value < 100.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.0}")
    }
}

#[cfg(test)]
#[path = "decision_tests.rs"]
mod tests;
