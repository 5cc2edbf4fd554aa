//! The A/B/A arithmetic: a child point against the midpoint of its two parent points, the
//! parents' drift, and the verdict against gates fixed before the run. Pure functions over
//! ns/op figures; loading, matching and printing live in `commands::bench`.
//!
//! Definitions (the conventions of kernel regression reports on the mailing lists):
//! - midpoint = (parent A + parent B) / 2 of the points' mean ns/op;
//! - change = (child - midpoint) / midpoint × 100 %; positive is slower;
//! - drift = (parent B - parent A) / parent A × 100 %;
//! - the same change after dropping each point's first measured round ("drop-first");
//! - the largest CV of the points compared.
//!
//! A two-way comparison (A → B) uses A as the reference: change = (B - A) / A, no drift.

use serde::{Deserialize, Serialize};

use super::summary::{cv_pct, mean};

/// Gates fixed in advance; a verdict is only as good as gates chosen before seeing the data.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Gates {
    /// A change beyond this (either way) is a signal, percent.
    pub signal_pct: f64,
    /// Parent drift beyond this (either way) makes the comparison inconclusive, percent.
    pub drift_pct: f64,
    /// A point with a CV above this makes the comparison inconclusive, percent.
    pub cv_pct: f64,
}

impl Default for Gates {
    fn default() -> Self {
        Gates {
            signal_pct: 5.0,
            drift_pct: 2.0,
            cv_pct: 2.0,
        }
    }
}

/// One point: the measured rounds' ns/op of one series in one result, and whether every
/// measured round passed its checks.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// ns per op of each measured round, in order.
    pub rounds_ns_per_op: Vec<f64>,
    /// Measured rounds that failed a check.
    pub invalid_rounds: usize,
}

impl Point {
    /// Mean of all measured rounds.
    pub fn mean(&self) -> f64 {
        mean(&self.rounds_ns_per_op).unwrap_or(f64::NAN)
    }

    /// Mean without the first measured round (the mean of all if there is only one).
    pub(crate) fn mean_drop_first(&self) -> f64 {
        match self.rounds_ns_per_op.split_first() {
            Some((_, rest)) if !rest.is_empty() => mean(rest).unwrap_or(f64::NAN),
            _ => self.mean(),
        }
    }

    /// CV of all measured rounds, percent.
    pub fn cv_pct(&self) -> f64 {
        cv_pct(&self.rounds_ns_per_op).unwrap_or(0.0)
    }
}

/// `(value - reference) / reference` in percent.
pub fn change_pct(reference: f64, value: f64) -> f64 {
    (value - reference) / reference * 100.0
}

/// The midpoint of two parents.
pub fn midpoint(parent_a: f64, parent_b: f64) -> f64 {
    (parent_a + parent_b) / 2.0
}

/// What the comparison says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Slower beyond the signal gate, in all rounds and after dropping the first, with drift
    /// and CV within their gates.
    Regression,
    /// Faster beyond the signal gate, same conditions.
    Improvement,
    /// Within the signal gate (or the two analyses disagree), drift and CV within their gates.
    NoChange,
    /// A gate on drift or CV failed, or a point has invalid rounds: no claim either way.
    Inconclusive,
}

impl Verdict {
    /// The spelling printed and saved.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Regression => "regression",
            Verdict::Improvement => "improvement",
            Verdict::NoChange => "no change",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

/// The comparison of one series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Mean ns/op of each point in the order given (A, child, B or A, B).
    pub means_ns_per_op: Vec<f64>,
    /// The reference: the parents' midpoint (three-way) or A (two-way).
    pub reference_ns_per_op: f64,
    /// Change of the child (or B) against the reference, percent.
    pub change_pct: f64,
    /// The same with each point's first measured round dropped, percent.
    pub change_drop_first_pct: f64,
    /// Parent drift B vs A, percent (three-way only).
    pub drift_pct: Option<f64>,
    /// Largest CV among the points, percent.
    pub max_cv_pct: f64,
    /// The verdict against the gates.
    pub verdict: Verdict,
    /// Why the verdict is what it is, in words.
    pub reasons: Vec<String>,
}

/// Child against the midpoint of parent A and parent B.
pub fn three_way(parent_a: &Point, child: &Point, parent_b: &Point, gates: &Gates) -> Comparison {
    let reference = midpoint(parent_a.mean(), parent_b.mean());
    let reference_drop = midpoint(parent_a.mean_drop_first(), parent_b.mean_drop_first());
    let points = [parent_a, child, parent_b];
    judge(
        &points,
        reference,
        change_pct(reference, child.mean()),
        change_pct(reference_drop, child.mean_drop_first()),
        Some(change_pct(parent_a.mean(), parent_b.mean())),
        gates,
    )
}

/// B against A.
pub fn two_way(a: &Point, b: &Point, gates: &Gates) -> Comparison {
    judge(
        &[a, b],
        a.mean(),
        change_pct(a.mean(), b.mean()),
        change_pct(a.mean_drop_first(), b.mean_drop_first()),
        None,
        gates,
    )
}

fn judge(
    points: &[&Point],
    reference: f64,
    change: f64,
    change_drop_first: f64,
    drift: Option<f64>,
    gates: &Gates,
) -> Comparison {
    let max_cv = points.iter().map(|p| p.cv_pct()).fold(0.0, f64::max);
    let mut reasons = Vec::new();
    let invalid: usize = points.iter().map(|p| p.invalid_rounds).sum();
    if invalid > 0 {
        reasons.push(format!("{invalid} measured round(s) failed their checks"));
    }
    if let Some(drift) = drift
        && drift.abs() > gates.drift_pct
    {
        reasons.push(format!(
            "parent drift {drift:+.3}% exceeds the {:.3}% drift gate",
            gates.drift_pct
        ));
    }
    if max_cv > gates.cv_pct {
        reasons.push(format!(
            "largest CV {max_cv:.3}% exceeds the {:.3}% CV gate",
            gates.cv_pct
        ));
    }
    let verdict = if !reasons.is_empty() || !change.is_finite() {
        Verdict::Inconclusive
    } else if change > gates.signal_pct && change_drop_first > gates.signal_pct {
        reasons.push(format!(
            "{change:+.3}% (drop-first {change_drop_first:+.3}%) is beyond the {:.3}% signal gate",
            gates.signal_pct
        ));
        Verdict::Regression
    } else if change < -gates.signal_pct && change_drop_first < -gates.signal_pct {
        reasons.push(format!(
            "{change:+.3}% (drop-first {change_drop_first:+.3}%) is beyond the {:.3}% signal gate",
            gates.signal_pct
        ));
        Verdict::Improvement
    } else {
        reasons.push(format!(
            "{change:+.3}% (drop-first {change_drop_first:+.3}%) is not beyond the {:.3}% \
             signal gate in both analyses",
            gates.signal_pct
        ));
        Verdict::NoChange
    };
    Comparison {
        means_ns_per_op: points.iter().map(|p| p.mean()).collect(),
        reference_ns_per_op: reference,
        change_pct: change,
        change_drop_first_pct: change_drop_first,
        drift_pct: drift,
        max_cv_pct: max_cv,
        verdict,
        reasons,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(rounds: &[f64]) -> Point {
        Point {
            rounds_ns_per_op: rounds.to_vec(),
            invalid_rounds: 0,
        }
    }

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() < tolerance
    }

    #[test]
    fn the_scalar_report_of_seed_000_computes_to_its_published_figures() {
        // Parent A 180.079, child 196.647, parent B 179.856 ns/pair: midpoint 179.9675,
        // change 16.6795 / 179.9675 = +9.268 %, drift -0.223 / 180.079 = -0.124 %.
        let c = three_way(
            &point(&[180.079]),
            &point(&[196.647]),
            &point(&[179.856]),
            &Gates::default(),
        );
        assert!(close(c.reference_ns_per_op, 179.9675, 1e-9));
        assert!(close(c.change_pct, 9.2680, 5e-4), "{}", c.change_pct);
        assert!(close(c.drift_pct.unwrap(), -0.1238, 5e-4));
        assert_eq!(c.verdict, Verdict::Regression);
    }

    #[test]
    fn the_waitv_report_of_seed_001_computes_to_its_published_figures() {
        // 1045.687 / 1128.704 / 1042.755: midpoint 1044.221, +8.0905 %, drift -0.2804 %.
        let c = three_way(
            &point(&[1045.687]),
            &point(&[1128.704]),
            &point(&[1042.755]),
            &Gates::default(),
        );
        assert!(close(c.change_pct, 8.0905, 5e-4), "{}", c.change_pct);
        assert!(close(c.drift_pct.unwrap(), -0.2804, 5e-4));
    }

    #[test]
    fn drop_first_removes_each_points_first_measured_round() {
        // A: 110 then 100, 100 → mean 103.333, drop-first 100.
        // child: 121 then 110, 110 → drop-first 110. B: 100, 100, 100.
        // All rounds: midpoint (103.333 + 100) / 2 = 101.6667, child 113.6667 → +11.803 %.
        // Drop-first: midpoint 100, child 110 → +10 %.
        let c = three_way(
            &point(&[110.0, 100.0, 100.0]),
            &point(&[121.0, 110.0, 110.0]),
            &point(&[100.0, 100.0, 100.0]),
            &Gates {
                cv_pct: 100.0,
                drift_pct: 100.0,
                ..Gates::default()
            },
        );
        assert!(close(c.change_drop_first_pct, 10.0, 1e-9));
        assert!(close(
            c.change_pct,
            (113.0 + 2.0 / 3.0) / (101.0 + 2.0 / 3.0) * 100.0 - 100.0,
            1e-9
        ));
        assert!(close(
            c.drift_pct.unwrap(),
            (100.0 / (103.0 + 1.0 / 3.0) - 1.0) * 100.0,
            1e-9
        ));
    }

    #[test]
    fn the_largest_cv_of_the_points_is_reported() {
        // [99, 101]: mean 100, sample sd sqrt(2) → CV 1.4142 %; [100, 100]: 0 %.
        let c = two_way(
            &point(&[99.0, 101.0]),
            &point(&[100.0, 100.0]),
            &Gates::default(),
        );
        assert!(close(c.max_cv_pct, 2f64.sqrt(), 1e-9));
        assert_eq!(c.drift_pct, None);
        assert_eq!(c.verdict, Verdict::NoChange);
    }

    #[test]
    fn drift_beyond_its_gate_makes_a_large_change_inconclusive() {
        // Drift (103 - 100) / 100 = +3 % > 2 %.
        let c = three_way(
            &point(&[100.0]),
            &point(&[120.0]),
            &point(&[103.0]),
            &Gates::default(),
        );
        assert_eq!(c.verdict, Verdict::Inconclusive);
        assert!(c.reasons[0].contains("drift"), "{:?}", c.reasons);
    }

    #[test]
    fn a_cv_beyond_its_gate_makes_the_comparison_inconclusive() {
        let c = two_way(
            &point(&[90.0, 110.0]),
            &point(&[200.0, 200.0]),
            &Gates::default(),
        );
        assert_eq!(c.verdict, Verdict::Inconclusive);
    }

    #[test]
    fn invalid_rounds_make_the_comparison_inconclusive() {
        let mut child = point(&[150.0]);
        child.invalid_rounds = 1;
        let c = two_way(&point(&[100.0]), &child, &Gates::default());
        assert_eq!(c.verdict, Verdict::Inconclusive);
    }

    #[test]
    fn a_faster_child_beyond_the_gate_is_an_improvement() {
        // (90 - 100) / 100 = -10 %.
        let c = two_way(&point(&[100.0]), &point(&[90.0]), &Gates::default());
        assert!(close(c.change_pct, -10.0, 1e-9));
        assert_eq!(c.verdict, Verdict::Improvement);
    }

    #[test]
    fn a_regression_must_hold_after_dropping_the_first_round_too() {
        // All rounds: A 100, B (130 + 100 + 100) / 3 = 110 → +10 %; drop-first: 100 → 0 %.
        let c = two_way(
            &point(&[100.0, 100.0, 100.0]),
            &point(&[130.0, 100.0, 100.0]),
            &Gates {
                cv_pct: 100.0,
                ..Gates::default()
            },
        );
        assert!(close(c.change_pct, 10.0, 1e-9));
        assert!(close(c.change_drop_first_pct, 0.0, 1e-9));
        assert_eq!(c.verdict, Verdict::NoChange);
    }
}
