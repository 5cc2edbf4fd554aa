//! A bench campaign's rows: per series, `bench compare`'s arithmetic over the columns (parent
//! A, the child, parent B: each every measured round of its boots), the CV gate applied to each
//! boot's own rounds (boot-to-boot differences are judged by the ranges instead), each point's
//! boot-to-boot spread, and the child beyond the parents' range: a change is claimed only where
//! the child's mean (with `separate_ranges`, every child boot) lies beyond every parent boot.
//! With one boot per step the arithmetic is exactly `rtsoak bench compare A CHILD B`'s.
//!
//! Pure.

use serde::{Deserialize, Serialize};

use super::plan::JudgeSection;
use super::sequence::{Column, Role, Slot};
use crate::bench::compare::{self, Comparison, Gates, Point, Verdict};
use crate::bench::summary::{cv_pct, mean};
use rtsoak_record::bench::BenchDoc;

/// One boot's figure of one series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BootFigure {
    /// The planned boot.
    pub seq: usize,
    /// Its point.
    pub role: Role,
    /// Its column.
    pub column: Column,
    /// Mean ns/op of its measured rounds.
    pub mean_ns_per_op: f64,
    /// CV of its measured rounds, percent.
    pub cv_pct: f64,
    /// Measured rounds that failed a check.
    pub invalid_rounds: usize,
}

/// How one point's boots spread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// The point.
    pub role: Role,
    /// Its measured boots.
    pub boots: usize,
    /// The lowest boot mean, ns/op.
    pub min_ns_per_op: f64,
    /// The highest.
    pub max_ns_per_op: f64,
    /// (max − min) / mean of the boot means, percent; 0 with one boot.
    pub spread_pct: f64,
    /// CV of the boot means, percent (absent with one boot).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_cv_pct: Option<f64>,
}

/// Why a row's verdict is not the arithmetic's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RowReason {
    /// A boot's rounds vary more than the CV gate allows.
    BootCv {
        /// The boot.
        seq: usize,
        /// Its CV, percent.
        cv_pct: f64,
    },
    /// The series is missing from a boot's result.
    SeriesMissing {
        /// The boot.
        seq: usize,
    },
    /// The child does not lie beyond the parents' boot-to-boot range in the direction of the
    /// change (or, with `separate_ranges`, the two ranges overlap).
    WithinParentsRange,
    /// A column the plan has (parent A, the child, parent B) has no measured round: nothing
    /// to compare.
    NotCompared,
}

/// One series, judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchRow {
    /// The series (`futex-wait-wake`, `threads-4`).
    pub series: String,
    /// `bench compare`'s comparison of the columns (its `max_cv_pct` the largest boot's);
    /// absent where a column the plan has measured nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison: Option<Comparison>,
    /// Every boot's figure.
    pub boots: Vec<BootFigure>,
    /// Each point's boot-to-boot spread.
    pub spread: Vec<Spread>,
    /// The row's verdict.
    pub verdict: Verdict,
    /// What overrode the arithmetic's verdict.
    pub reasons: Vec<RowReason>,
}

/// Rows for every series of the first boot's result; `three_way`: the plan has a parent B.
pub fn rows(judge: &JudgeSection, docs: &[(Slot, &BenchDoc)], three_way: bool) -> Vec<BenchRow> {
    let Some((_, first)) = docs.first() else {
        return Vec::new();
    };
    first
        .series
        .iter()
        .map(|series| row(judge, docs, &series.name, three_way))
        .collect()
}

fn row(judge: &JudgeSection, docs: &[(Slot, &BenchDoc)], name: &str, three_way: bool) -> BenchRow {
    let Collected {
        boots,
        points,
        mut reasons,
    } = collect(judge, docs, name);
    let mut comparison = compare_columns(judge, &points, three_way);
    let spread = [Role::Parent, Role::Child]
        .into_iter()
        .filter_map(|role| spread(role, &boots))
        .collect();
    let arithmetic = match comparison.as_mut() {
        Some(comparison) => {
            comparison.max_cv_pct = boots.iter().map(|b| b.cv_pct).fold(0.0, f64::max);
            comparison.verdict
        }
        None => {
            reasons.push(RowReason::NotCompared);
            Verdict::Inconclusive
        }
    };
    let claimed = matches!(arithmetic, Verdict::Regression | Verdict::Improvement);
    if claimed && !beyond_parents(judge, &boots, arithmetic) {
        reasons.push(RowReason::WithinParentsRange);
    }
    let verdict = if reasons.is_empty() {
        arithmetic
    } else {
        Verdict::Inconclusive
    };
    BenchRow {
        series: name.to_string(),
        comparison,
        boots,
        spread,
        verdict,
        reasons,
    }
}

/// Series `name` of every boot: each boot's figure, each column's rounds, and the boots that
/// lack it or vary beyond the CV gate.
struct Collected {
    boots: Vec<BootFigure>,
    points: Vec<(Column, Point)>,
    reasons: Vec<RowReason>,
}

fn collect(judge: &JudgeSection, docs: &[(Slot, &BenchDoc)], name: &str) -> Collected {
    let mut collected = Collected {
        boots: Vec::new(),
        points: Vec::new(),
        reasons: Vec::new(),
    };
    for (slot, doc) in docs {
        let Some(series) = doc.series.iter().find(|s| s.name == name) else {
            collected
                .reasons
                .push(RowReason::SeriesMissing { seq: slot.seq });
            continue;
        };
        let rounds = series.measured_ns_per_op();
        if rounds.is_empty() {
            collected
                .reasons
                .push(RowReason::SeriesMissing { seq: slot.seq });
            continue;
        }
        let invalid = series
            .rounds
            .iter()
            .filter(|r| !r.warmup && !r.valid)
            .count();
        let figure = BootFigure {
            seq: slot.seq,
            role: slot.role,
            column: slot.column,
            mean_ns_per_op: mean(&rounds).unwrap_or(f64::NAN),
            cv_pct: cv_pct(&rounds).unwrap_or(0.0),
            invalid_rounds: invalid,
        };
        if figure.cv_pct > judge.cv_pct {
            collected.reasons.push(RowReason::BootCv {
                seq: slot.seq,
                cv_pct: figure.cv_pct,
            });
        }
        collected.boots.push(figure);
        if slot.column == Column::ParentMiddle {
            continue;
        }
        match collected.points.iter_mut().find(|(c, _)| *c == slot.column) {
            Some((_, point)) => {
                point.rounds_ns_per_op.extend(rounds);
                point.invalid_rounds += invalid;
            }
            None => collected.points.push((
                slot.column,
                Point {
                    rounds_ns_per_op: rounds,
                    invalid_rounds: invalid,
                },
            )),
        }
    }
    collected
}

/// `bench compare`'s arithmetic on the columns, its CV gate left to the boots; none where a
/// column the plan has has no rounds, or the figures are not finite (a JSON document holds no
/// NaN).
fn compare_columns(
    judge: &JudgeSection,
    points: &[(Column, Point)],
    three_way: bool,
) -> Option<Comparison> {
    let gates = Gates {
        signal_pct: judge.signal_pct,
        drift_pct: judge.drift_pct,
        cv_pct: f64::INFINITY,
    };
    let get = |column| {
        points
            .iter()
            .find(|(c, p)| *c == column && !p.rounds_ns_per_op.is_empty())
            .map(|(_, p)| p)
    };
    let (a, child) = (get(Column::ParentA)?, get(Column::Child)?);
    let comparison = if three_way {
        compare::three_way(a, child, get(Column::ParentB)?, &gates)
    } else {
        compare::two_way(a, child, &gates)
    };
    let finite = [
        comparison.reference_ns_per_op,
        comparison.change_pct,
        comparison.change_drop_first_pct,
        comparison.drift_pct.unwrap_or(0.0),
    ]
    .iter()
    .chain(&comparison.means_ns_per_op)
    .all(|v| v.is_finite());
    finite.then_some(comparison)
}

fn spread(role: Role, boots: &[BootFigure]) -> Option<Spread> {
    let means: Vec<f64> = boots
        .iter()
        .filter(|b| b.role == role)
        .map(|b| b.mean_ns_per_op)
        .collect();
    let min = means.iter().copied().fold(f64::INFINITY, f64::min);
    let max = means.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let centre = mean(&means)?;
    Some(Spread {
        role,
        boots: means.len(),
        min_ns_per_op: min,
        max_ns_per_op: max,
        spread_pct: (max - min) / centre * 100.0,
        boot_cv_pct: (means.len() > 1).then(|| cv_pct(&means)).flatten(),
    })
}

/// Whether the child lies beyond every parent boot in the direction of `verdict`.
fn beyond_parents(judge: &JudgeSection, boots: &[BootFigure], verdict: Verdict) -> bool {
    let of = |role| {
        boots
            .iter()
            .filter(move |b| b.role == role)
            .map(|b| b.mean_ns_per_op)
    };
    let parents_min = of(Role::Parent).fold(f64::INFINITY, f64::min);
    let parents_max = of(Role::Parent).fold(f64::NEG_INFINITY, f64::max);
    let child: Vec<f64> = of(Role::Child).collect();
    let Some(child_mean) = mean(&child) else {
        return false;
    };
    let (child_min, child_max) = (
        child.iter().copied().fold(f64::INFINITY, f64::min),
        child.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    );
    match (verdict, judge.separate_ranges) {
        (Verdict::Regression, true) => child_min > parents_max,
        (Verdict::Regression, false) => child_mean > parents_max,
        (Verdict::Improvement, true) => child_max < parents_min,
        (Verdict::Improvement, false) => child_mean < parents_min,
        _ => false,
    }
}
