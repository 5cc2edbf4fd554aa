//! A new result against a baseline, per transport (and ring setup) and per series
//! (`send_call`, `delivery`): over-threshold rates by an exact test for rare counts, tail
//! percentiles (p99.9, p99.99 of the merged histograms) and the maximum, each with a tolerance,
//! so that noise is never called a regression. Rows pair by what they measured, the transport
//! and its ring setup ([`RunKey::measured`](rtsoak_record::result::RunKey::measured)), never by
//! a label. A comparison that could not compare what it should (nothing paired, a transport on
//! one side only, a side interrupted, failed, lossy or empty, figures that do not decode) is
//! inconclusive and says why: it never says "no regression" for what it did not compare.
//!
//! Pure: two [`ResultDoc`]s in, a [`Diff`] out; printing and exit codes belong to the commands.

use super::rates::rate_increase_p_value;
use crate::merge::{TransportRuns, by_transport};
use rtsoak_record::Summary;
use rtsoak_record::result::diff::{Diff, DiffRules, Figure, Finding};
use rtsoak_record::result::{ResultDoc, RunStatus};
use rtsoak_record::{RingSetup, Series, SeriesKey};

/// The series compared.
const SERIES: [Series; 2] = [Series::SendCall, Series::Delivery];

/// One row of a comparison: what it measured, and its name in findings.
struct Row<'d, 'a> {
    runs: &'d TransportRuns<'a>,
    measured: (&'a str, RingSetup),
}

fn rows<'d, 'a>(doc: &ResultDoc, merged: &'d [TransportRuns<'a>]) -> Vec<Row<'d, 'a>> {
    merged
        .iter()
        .map(|runs| Row {
            measured: runs.key().measured(doc.plan.ring_setup),
            runs,
        })
        .collect()
}

/// Compare `new` with `baseline` (named `baseline_name` in the findings) under `rules`.
pub fn diff(baseline_name: &str, baseline: &ResultDoc, new: &ResultDoc, rules: &DiffRules) -> Diff {
    let (old_merged, new_merged) = (by_transport(baseline), by_transport(new));
    let (old, now) = (rows(baseline, &old_merged), rows(new, &new_merged));
    // A row names its ring setup where either result compared several.
    let variants =
        !baseline.plan.ring_setup_variants.is_empty() || !new.plan.ring_setup_variants.is_empty();
    let mut findings = Vec::new();
    let mut inconclusive = incomplete("the baseline", baseline);
    inconclusive.extend(incomplete("the new result", new));
    let same_threshold = baseline.plan.threshold_ns == new.plan.threshold_ns;
    let mut paired = 0;
    let mut causes = Vec::new();
    for row in &now {
        let t = row.runs;
        let setup = variants.then_some(row.measured.1);
        let Some(b) = old
            .iter()
            .find(|b| b.measured == row.measured)
            .map(|b| b.runs)
        else {
            if t.status != RunStatus::Unsupported {
                inconclusive.push(format!(
                    "{} was measured now but not in the baseline: it is not compared; promote a \
                     baseline that has it",
                    name(row.measured, setup)
                ));
            }
            continue;
        };
        if let Some((reason, counts)) = not_comparable(b, t) {
            if counts {
                inconclusive.push(format!("{}: {reason}", name(row.measured, setup)));
            }
            findings.push(transport_finding(t.transport, setup, reason));
            continue;
        }
        paired += 1;
        let found = compare_series(b, t, setup, new.plan.threshold_ns, same_threshold, rules);
        findings.extend(found.findings);
        causes.extend(found.causes);
        inconclusive.extend(found.undecoded.iter().map(|series| {
            format!(
                "{} {series}: a histogram did not decode, so its percentiles are unknown \
                 and were not compared",
                name(row.measured, setup)
            )
        }));
    }
    for b in &old {
        let missing = !now.iter().any(|n| n.measured == b.measured);
        if missing && b.runs.status != RunStatus::Unsupported {
            inconclusive.push(format!(
                "{} was measured in the baseline but not now: it is not compared; run it, or \
                 promote a baseline without it",
                name(b.measured, variants.then_some(b.measured.1))
            ));
        }
    }
    if paired == 0 {
        inconclusive.push(
            "nothing was compared: no transport (and ring setup) was measured in both results"
                .to_string(),
        );
    }
    if !same_threshold {
        findings.push(thresholds_differ(baseline, new));
    }
    Diff {
        baseline: baseline_name.to_string(),
        baseline_started_at: baseline.started_at.clone(),
        rules: *rules,
        regression: findings.iter().any(|f| f.regression),
        inconclusive,
        findings,
        causes,
    }
}

/// What comparing one transport's series found.
struct SeriesFound {
    findings: Vec<Finding>,
    causes: Vec<rtsoak_record::result::diff::CauseChanges>,
    /// Series whose percentiles are unknown on a side (a histogram did not decode).
    undecoded: Vec<Series>,
}

/// Compare each judged series of a transport measured on both sides: the over-threshold rate
/// (where both used the same threshold), p99.9, p99.99 and the maximum, and the causes.
fn compare_series(
    b: &TransportRuns<'_>,
    t: &TransportRuns<'_>,
    setup: Option<RingSetup>,
    threshold_ns: u64,
    same_threshold: bool,
    rules: &DiffRules,
) -> SeriesFound {
    let mut found = SeriesFound {
        findings: Vec::new(),
        causes: Vec::new(),
        undecoded: Vec::new(),
    };
    for series in SERIES {
        if let Some(mut changes) = super::diff_causes::changes(b, t, series) {
            changes.ring_setup = setup;
            found.causes.push(changes);
        }
        let pair = Pair {
            transport: t.transport,
            ring_setup: setup,
            series,
            b: b.summary(series),
            n: t.summary(series),
        };
        if same_threshold {
            found.findings.push(rate(&pair, rules));
        }
        let known = b.percentiles_known(series) && t.percentiles_known(series);
        let key = SeriesKey::Rt(series);
        if !known && (b.series.contains_key(&key) || t.series.contains_key(&key)) {
            found.undecoded.push(series);
        }
        for figure in [Figure::P99_9, Figure::P99_99] {
            found.findings.push(percentile(&pair, figure, known, rules));
        }
        found.findings.push(maximum(&pair, threshold_ns, rules));
    }
    found
}

/// The finding that over-threshold rates were not compared: the thresholds differ.
fn thresholds_differ(baseline: &ResultDoc, new: &ResultDoc) -> Finding {
    Finding {
        transport: "*".to_string(),
        ring_setup: None,
        series: None,
        figure: Figure::OverThresholdRate,
        baseline: baseline.plan.threshold_ns as f64,
        new: new.plan.threshold_ns as f64,
        p_value: None,
        regression: false,
        reason: format!(
            "over-threshold rates not compared: the threshold was {} us in the baseline and {} \
             us now; use the same threshold",
            baseline.plan.threshold_ns as f64 / 1e3,
            new.plan.threshold_ns as f64 / 1e3
        ),
    }
}

/// A row's name in a sentence: `futex`, or `futex (defer-taskrun)`.
fn name((transport, _): (&str, RingSetup), setup: Option<RingSetup>) -> String {
    rtsoak_record::result::RunKey {
        transport,
        ring_setup: setup,
    }
    .label()
}

/// Why one side's figures cannot stand for it: interrupted, a failed run, lost messages or a
/// transport failure, or no run measured at all. Each makes the comparison inconclusive.
fn incomplete(side: &str, doc: &ResultDoc) -> Vec<String> {
    let mut reasons = Vec::new();
    let runs = |status: RunStatus| doc.runs.iter().filter(|r| r.status == status).count();
    if doc.interrupted || runs(RunStatus::Interrupted) > 0 {
        reasons.push(format!(
            "{side} was interrupted: its figures cover only part of what it planned"
        ));
    }
    if runs(RunStatus::Failed) > 0 {
        reasons.push(format!(
            "{side} has {} failed run(s): their figures are incomplete",
            runs(RunStatus::Failed)
        ));
    }
    let lossy: Vec<String> = by_transport(doc)
        .iter()
        .filter(|t| t.integrity.loss().is_some() || !t.integrity.transport_failures().is_empty())
        .map(|t| t.label.clone())
        .collect();
    if !lossy.is_empty() {
        reasons.push(format!(
            "{side} lost messages or had a transport failure ({}): its latencies are not the \
             whole story",
            lossy.join(", ")
        ));
    }
    if doc.runs.iter().all(|r| r.status == RunStatus::Unsupported) {
        reasons.push(format!("{side} measured nothing (no run has figures)"));
    }
    reasons
}

/// Why two rows cannot be compared, and whether that leaves the comparison inconclusive (a
/// transport measured on one side only does; one unsupported on both does not).
fn not_comparable(b: &TransportRuns<'_>, t: &TransportRuns<'_>) -> Option<(String, bool)> {
    let measured = |r: &TransportRuns<'_>| r.status != RunStatus::Unsupported;
    match (measured(b), measured(t)) {
        (true, true) => None,
        (false, false) => Some((
            "not measured on either side; not compared".to_string(),
            false,
        )),
        (false, true) => Some((
            "measured now, not in the baseline; not compared".to_string(),
            true,
        )),
        (true, false) => Some((
            "not measured now, measured in the baseline; not compared".into(),
            true,
        )),
    }
}

fn transport_finding(transport: &str, ring_setup: Option<RingSetup>, reason: String) -> Finding {
    Finding {
        transport: transport.to_string(),
        ring_setup,
        series: None,
        figure: Figure::Transport,
        baseline: 0.0,
        new: 0.0,
        p_value: None,
        regression: false,
        reason,
    }
}

/// One series of one row, baseline (`b`) and new (`n`).
struct Pair<'a> {
    transport: &'a str,
    ring_setup: Option<RingSetup>,
    series: Series,
    b: Summary,
    n: Summary,
}

impl Pair<'_> {
    fn finding(
        &self,
        figure: Figure,
        values: (f64, f64),
        regression: bool,
        reason: String,
    ) -> Finding {
        Finding {
            transport: self.transport.to_string(),
            ring_setup: self.ring_setup,
            series: Some(self.series),
            figure,
            baseline: values.0,
            new: values.1,
            p_value: None,
            regression,
            reason,
        }
    }
}

fn rate(pair: &Pair<'_>, rules: &DiffRules) -> Finding {
    let (b, n) = (&pair.b, &pair.n);
    let rate_b = b.over_threshold_per_million();
    let rate_n = n.over_threshold_per_million();
    let p = rate_increase_p_value(b.over_threshold, b.count, n.over_threshold, n.count);
    let big_enough = rate_n >= rate_b * rules.min_rate_ratio
        && rate_n - rate_b >= rules.min_rate_increase_per_million;
    let regression = p < rules.alpha && big_enough;
    let counts = format!(
        "{} of {} → {} of {}",
        b.over_threshold, b.count, n.over_threshold, n.count
    );
    let reason = if regression {
        format!(
            "over-threshold rate rose from {rate_b:.1} to {rate_n:.1} per million ({counts}), \
             p = {p:.2e} < {}",
            rules.alpha
        )
    } else if p < rules.alpha {
        format!(
            "over-threshold rate {rate_b:.1} → {rate_n:.1} per million ({counts}): significant \
             but below the minimum effect ({}x and +{} per million)",
            rules.min_rate_ratio, rules.min_rate_increase_per_million
        )
    } else {
        format!(
            "over-threshold rate {rate_b:.1} → {rate_n:.1} per million ({counts}), p = {p:.2}: \
             no significant increase"
        )
    };
    Finding {
        p_value: Some(p),
        ..pair.finding(
            Figure::OverThresholdRate,
            (rate_b, rate_n),
            regression,
            reason,
        )
    }
}

/// A tail percentile, judged only with enough samples beyond it on both sides, and only where
/// every histogram decoded (`known`).
fn percentile(pair: &Pair<'_>, figure: Figure, known: bool, rules: &DiffRules) -> Finding {
    let (name, tail, value): (&str, f64, fn(&Summary) -> u64) = match figure {
        Figure::P99_9 => ("p99.9", 1e-3, |s| s.p99_9_ns),
        _ => ("p99.99", 1e-4, |s| s.p99_99_ns),
    };
    let (b, n) = (&pair.b, &pair.n);
    let (vb, vn) = (value(b), value(n));
    let enough = |s: &Summary| s.count as f64 * tail >= rules.min_tail_samples;
    let (regression, reason) = if !known {
        (
            false,
            format!("{name} not judged: a histogram did not decode"),
        )
    } else if !enough(b) || !enough(n) {
        let needed = (rules.min_tail_samples / tail).ceil();
        (
            false,
            format!(
                "{name} not judged: {} and {} samples, {needed} needed on each side",
                b.count, n.count
            ),
        )
    } else {
        grew(
            name,
            vb,
            vn,
            rules.percentile_tolerance,
            rules.percentile_floor_ns,
        )
    };
    pair.finding(figure, (vb as f64, vn as f64), regression, reason)
}

/// The longest sample is one sample: it regresses only when it grew beyond the tolerance and
/// is over the threshold (a longest sample within the threshold is within the specification).
fn maximum(pair: &Pair<'_>, threshold_ns: u64, rules: &DiffRules) -> Finding {
    let (b, n) = (&pair.b, &pair.n);
    let (mut regression, mut reason) = grew(
        "longest",
        b.max_ns,
        n.max_ns,
        rules.max_tolerance,
        rules.max_floor_ns,
    );
    if regression && n.max_ns <= threshold_ns {
        regression = false;
        reason = format!("{reason}, but within the threshold");
    }
    pair.finding(
        Figure::Max,
        (b.max_ns as f64, n.max_ns as f64),
        regression,
        reason,
    )
}

/// Did `new` grow beyond `baseline` by more than `tolerance` (a fraction) and `floor_ns`?
fn grew(name: &str, baseline: u64, new: u64, tolerance: f64, floor_ns: u64) -> (bool, String) {
    let allowed =
        (baseline as f64 * (1.0 + tolerance)).max(baseline.saturating_add(floor_ns) as f64);
    let (b_us, n_us) = (baseline as f64 / 1e3, new as f64 / 1e3);
    if new as f64 > allowed {
        (
            true,
            format!(
                "{name} rose from {b_us:.1} to {n_us:.1} us, beyond the tolerance of {:.1} us",
                allowed / 1e3
            ),
        )
    } else {
        (
            false,
            format!(
                "{name} {b_us:.1} → {n_us:.1} us, within {:.1} us",
                allowed / 1e3
            ),
        )
    }
}

#[cfg(test)]
#[path = "diff_tests.rs"]
mod tests;
