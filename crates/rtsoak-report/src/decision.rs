//! The decision in words: per series, one sentence made from the ranking and the claims the
//! analysis recorded (`rtsoak_analysis::judge::decision` decides; this module only words it).
//! Which transport has the fewest spikes over the threshold, which do not differ from it at
//! this run length, and which have significantly more, with the level the test used.
//!
//! A saved result keeps each sentence for readers of its JSON ([`worded`] fills them in before
//! it is saved), but rtsoak never reads one back: every view words the fields again, so
//! rewording a clause here changes what a reader sees and nothing a result means.

use rtsoak_record::result::decision::{Decision, Rate, SeriesDecision};

/// `decision` with each series' sentence written, as the result document keeps it.
pub fn worded(mut decision: Decision) -> Decision {
    let (threshold_ns, alpha) = (decision.threshold_ns, decision.alpha);
    for series in &mut decision.series {
        series.sentence = Some(sentence(series, threshold_ns, alpha));
    }
    decision
}

/// The sentence for one series: `send call: msg-ring has the fewest spikes over 100 us (20.0
/// per million), and futex does not differ from it significantly at this run length; futex has
/// significantly fewer than signalfd (p < 0.01).`
pub fn sentence(decision: &SeriesDecision, threshold_ns: u64, alpha: f64) -> String {
    let name = decision.series.name().replace('_', " ");
    let threshold = format!("{} us", threshold_ns as f64 / 1e3);
    let ranking = &decision.ranking;
    if ranking.is_empty() {
        return format!("{name}: no transport was measured.");
    }
    // The fewest group and the rest, each in ranking order, as the analysis split them.
    let (group, worse): (Vec<&Rate>, Vec<&Rate>) = ranking
        .iter()
        .partition(|r| decision.fewest.contains(&r.label));
    let mut text = opening(&name, &threshold, ranking, &decision.fewest);
    text += &worse_clauses(decision, &group, &worse, alpha);
    text.push('.');
    text
}

/// The first clause: which transport has the fewest spikes over `threshold` in `ranking` (best
/// first), and which of them (`fewest`) do not differ from it.
fn opening(name: &str, threshold: &str, ranking: &[Rate], fewest: &[String]) -> String {
    let best = &ranking[0];
    if ranking.len() == 1 {
        return format!(
            "{name}: only {} was measured ({} per million over {threshold})",
            best.label,
            per_million(best.per_million)
        );
    }
    if ranking.iter().all(|r| r.over_threshold == 0) {
        let bound = ranking
            .iter()
            .map(|r| r.high_per_million)
            .fold(0.0, f64::max);
        return format!(
            "{name}: no transport had a sample over {threshold}; at this run length that bounds \
             each rate below {} per million (95 %)",
            per_million(bound)
        );
    }
    if fewest.len() == ranking.len() {
        return format!(
            "{name}: {} do not differ significantly at this run length ({} has the fewest \
             spikes over {threshold}, {} per million)",
            and_list(fewest),
            best.label,
            per_million(best.per_million)
        );
    }
    let mut text = format!(
        "{name}: {} has the fewest spikes over {threshold} ({} per million)",
        best.label,
        per_million(best.per_million)
    );
    if fewest.len() > 1 {
        text += &format!(
            ", and {} {} not differ from it significantly at this run length",
            and_list(&fewest[1..]),
            if fewest.len() == 2 { "does" } else { "do" }
        );
    }
    text
}

/// The clauses for the transports significantly `worse` than some of the fewest `group`:
/// transports beaten by the same members of the group share one clause.
fn worse_clauses(
    decision: &SeriesDecision,
    group: &[&Rate],
    worse: &[&Rate],
    alpha: f64,
) -> String {
    let beats = |lower: &Rate, higher: &Rate| {
        decision
            .significant
            .iter()
            .any(|c| c.lower == lower.label && c.higher == higher.label)
    };
    // Each worse transport, with the members of the fewest group significantly below it.
    let mut clauses: Vec<(Vec<String>, Vec<String>)> = Vec::new();
    for w in worse {
        let lower: Vec<String> = group
            .iter()
            .filter(|g| beats(g, w))
            .map(|g| g.label.clone())
            .collect();
        match clauses.iter_mut().find(|(l, _)| *l == lower) {
            Some((_, higher)) => higher.push(w.label.clone()),
            None => clauses.push((lower, vec![w.label.clone()])),
        }
    }
    let mut text = String::new();
    for (lower, higher) in &clauses {
        let subject = if lower.len() == group.len() && group.len() > 1 {
            "each of them has".to_string()
        } else if lower.len() == 1 {
            format!("{} has", lower[0])
        } else {
            format!("{} have", and_list(lower))
        };
        text += &format!(
            "; {subject} significantly fewer than {} (p < {alpha})",
            and_list(higher)
        );
    }
    text
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// A rate per million as the decision and the journal say it: two decimals under 10, one under
/// 100, none above (`0`, `2.50`, `52.6`, `24300`).
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
