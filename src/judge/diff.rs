//! A new result against a baseline, per transport and per series (`send_call`, `delivery`):
//! over-threshold rates by an exact test for rare counts, tail percentiles (p99.9, p99.99 of the
//! merged histograms) and the maximum, each with a tolerance, so that noise is never called a
//! regression. Pure: two [`ResultDoc`]s in, a [`Diff`] out; printing and exit codes belong to
//! the commands.

use super::rates::rate_increase_p_value;
use crate::record::{Series, series_names};
use crate::result::diff::{Diff, DiffRules, Figure, Finding};
use crate::result::merge::{TransportRuns, by_transport};
use crate::result::{ResultDoc, RunStatus};
use crate::stats::Summary;

/// The series compared.
const SERIES: [&str; 2] = series_names([Series::SendCall, Series::Delivery]);

/// Compare `new` with `baseline` (named `baseline_name` in the findings) under `rules`.
pub fn diff(baseline_name: &str, baseline: &ResultDoc, new: &ResultDoc, rules: &DiffRules) -> Diff {
    let old = by_transport(baseline);
    let mut findings = Vec::new();
    let same_threshold = baseline.plan.threshold_ns == new.plan.threshold_ns;
    for t in by_transport(new) {
        let Some(b) = old.iter().find(|b| b.transport == t.transport) else {
            continue;
        };
        if let Some(reason) = not_comparable(b, &t) {
            findings.push(transport_finding(&t, reason));
            continue;
        }
        for series in SERIES {
            let (sb, sn) = (b.summary(series), t.summary(series));
            if same_threshold {
                findings.push(rate(t.transport, series, &sb, &sn, rules));
            }
            findings.push(percentile(
                t.transport,
                series,
                Figure::P99_9,
                &sb,
                &sn,
                rules,
            ));
            findings.push(percentile(
                t.transport,
                series,
                Figure::P99_99,
                &sb,
                &sn,
                rules,
            ));
            let threshold_ns = new.plan.threshold_ns;
            findings.push(maximum(t.transport, series, &sb, &sn, threshold_ns, rules));
        }
    }
    if !same_threshold {
        findings.push(Finding {
            transport: "*".to_string(),
            series: None,
            figure: Figure::OverThresholdRate,
            baseline: baseline.plan.threshold_ns as f64,
            new: new.plan.threshold_ns as f64,
            p_value: None,
            regression: false,
            reason: format!(
                "over-threshold rates not compared: the threshold was {} us in the baseline and \
                 {} us now; use the same threshold",
                baseline.plan.threshold_ns as f64 / 1e3,
                new.plan.threshold_ns as f64 / 1e3
            ),
        });
    }
    Diff {
        baseline: baseline_name.to_string(),
        baseline_started_at: baseline.started_at.clone(),
        rules: *rules,
        regression: findings.iter().any(|f| f.regression),
        findings,
    }
}

fn not_comparable(b: &TransportRuns<'_>, t: &TransportRuns<'_>) -> Option<String> {
    let measured = |r: &TransportRuns<'_>| r.status != RunStatus::Unsupported;
    match (measured(b), measured(t)) {
        (true, true) => None,
        (false, _) => Some("not measured in the baseline; not compared".to_string()),
        (true, false) => Some("unsupported now, measured in the baseline; not compared".into()),
    }
}

fn transport_finding(t: &TransportRuns<'_>, reason: String) -> Finding {
    Finding {
        transport: t.transport.to_string(),
        series: None,
        figure: Figure::Transport,
        baseline: 0.0,
        new: 0.0,
        p_value: None,
        regression: false,
        reason,
    }
}

fn per_million(s: &Summary) -> f64 {
    if s.count == 0 {
        0.0
    } else {
        s.over_threshold as f64 * 1e6 / s.count as f64
    }
}

fn rate(transport: &str, series: &str, b: &Summary, n: &Summary, rules: &DiffRules) -> Finding {
    let (rate_b, rate_n) = (per_million(b), per_million(n));
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
        transport: transport.to_string(),
        series: Some(series.to_string()),
        figure: Figure::OverThresholdRate,
        baseline: rate_b,
        new: rate_n,
        p_value: Some(p),
        regression,
        reason,
    }
}

fn percentile(
    transport: &str,
    series: &str,
    figure: Figure,
    b: &Summary,
    n: &Summary,
    rules: &DiffRules,
) -> Finding {
    let (name, tail, value): (&str, f64, fn(&Summary) -> u64) = match figure {
        Figure::P99_9 => ("p99.9", 1e-3, |s| s.p99_9_ns),
        _ => ("p99.99", 1e-4, |s| s.p99_99_ns),
    };
    let (vb, vn) = (value(b), value(n));
    let enough = |s: &Summary| s.count as f64 * tail >= rules.min_tail_samples;
    let (regression, reason) = if !enough(b) || !enough(n) {
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
    Finding {
        transport: transport.to_string(),
        series: Some(series.to_string()),
        figure,
        baseline: vb as f64,
        new: vn as f64,
        p_value: None,
        regression,
        reason,
    }
}

/// The longest sample is one sample: it regresses only when it grew beyond the tolerance and
/// is over the threshold (a longest sample within the threshold is within the specification).
fn maximum(
    transport: &str,
    series: &str,
    b: &Summary,
    n: &Summary,
    threshold_ns: u64,
    rules: &DiffRules,
) -> Finding {
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
    Finding {
        transport: transport.to_string(),
        series: Some(series.to_string()),
        figure: Figure::Max,
        baseline: b.max_ns as f64,
        new: n.max_ns as f64,
        p_value: None,
        regression,
        reason,
    }
}

/// Did `new` grow beyond `baseline` by more than `tolerance` (a fraction) and `floor_ns`?
fn grew(name: &str, baseline: u64, new: u64, tolerance: f64, floor_ns: u64) -> (bool, String) {
    let allowed = (baseline as f64 * (1.0 + tolerance)).max((baseline + floor_ns) as f64);
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
