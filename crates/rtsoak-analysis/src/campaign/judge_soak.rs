//! A soak campaign's rows: per transport (and ring setup) and series (send call, delivery),
//! the over-threshold counts of every boot, added per column, and the exact conditional rate
//! test the soaks already use (`judge::rates`): parent drift is parent A against parent B
//! (two-sided), the child is tested against every parent boot together (one-sided, each way),
//! and a change must be significant at `alpha` and at least `min_rate_ratio` times and
//! `min_rate_change_per_million` apart, as `rtsoak diff` asks of a regression. With
//! `separate_ranges`, every child boot's rate must also lie beyond every parent boot's.
//!
//! A message lost or a transport failure is no latency figure: on child boots only it is a
//! regression of the child, on a parent boot the row is inconclusive.
//!
//! Pure.

use serde::{Deserialize, Serialize};

use super::plan::JudgeSection;
use super::sequence::{Column, Role, Slot};
use crate::bench::compare::Verdict;
use crate::judge::rates::{rate_increase_p_value, rates_differ_p_value};
use crate::merge::by_transport;
use rtsoak_record::result::{ResultDoc, RunStatus};
use rtsoak_record::{RingSetup, Series};

/// The series a soak campaign judges.
const SERIES: [Series; 2] = [Series::SendCall, Series::Delivery];

/// Over-threshold samples among samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    /// Samples over the threshold.
    pub over_threshold: u64,
    /// Samples.
    pub samples: u64,
    /// The longest sample, ns.
    pub max_ns: u64,
}

impl Rate {
    /// Per million samples (0 without samples).
    pub fn per_million(&self) -> f64 {
        if self.samples == 0 {
            0.0
        } else {
            self.over_threshold as f64 * 1e6 / self.samples as f64
        }
    }

    fn add(&mut self, other: &Rate) {
        self.over_threshold += other.over_threshold;
        self.samples += other.samples;
        self.max_ns = self.max_ns.max(other.max_ns);
    }
}

/// One boot's figures of one row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BootRate {
    /// The planned boot.
    pub seq: usize,
    /// Its point.
    pub role: Role,
    /// Its column.
    pub column: Column,
    /// Its counts.
    pub rate: Rate,
    /// It lost messages, had a transport failure, or a run failed or was interrupted.
    pub failed: bool,
}

/// Why a row's verdict is what it is, beyond the rate test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RowReason {
    /// Not measured on this boot (unsupported, or missing).
    NotMeasured {
        /// The boot.
        seq: usize,
    },
    /// A boot of the parent lost messages or failed.
    ParentFailed {
        /// The boot.
        seq: usize,
    },
    /// Only child boots lost messages or failed.
    ChildFailed {
        /// The boots.
        seqs: Vec<usize>,
    },
    /// Boots ran with different thresholds.
    ThresholdsDiffer,
    /// Parent A and parent B differ (two-sided p below alpha, by the minimum effect).
    ParentsDiffer {
        /// The p-value.
        p_value: f64,
    },
    /// The change is significant but a child boot lies within the parents' range.
    WithinParentsRange,
}

/// One transport's series, judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SoakRow {
    /// Transport registry name.
    pub transport: String,
    /// Its ring setup where boots compared several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ring_setup: Option<RingSetup>,
    /// `send_call` or `delivery`.
    pub series: Series,
    /// Parent A's boots added.
    pub parent_a: Rate,
    /// The child's boots added.
    pub child: Rate,
    /// Parent B's boots added (absent in a two-step order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_b: Option<Rate>,
    /// Every parent boot added: what the child is tested against.
    pub parents: Rate,
    /// One-sided p that the child's rate is higher than the parents'.
    pub p_higher: f64,
    /// One-sided p that it is lower.
    pub p_lower: f64,
    /// Two-sided p that parent A and parent B differ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift_p: Option<f64>,
    /// Every boot's figures.
    pub boots: Vec<BootRate>,
    /// The verdict.
    pub verdict: Verdict,
    /// Why, beyond the rate test.
    pub reasons: Vec<RowReason>,
}

/// What a row is of.
type Key = (String, Option<RingSetup>);

/// Rows for every transport any boot measured, in the first boot's order.
pub fn rows(judge: &JudgeSection, docs: &[(Slot, &ResultDoc)]) -> Vec<SoakRow> {
    let mut keys: Vec<Key> = Vec::new();
    for (_, doc) in docs {
        for runs in by_transport(doc) {
            let key = (runs.transport.to_string(), runs.ring_setup);
            if runs.status != RunStatus::Unsupported && !keys.contains(&key) {
                keys.push(key);
            }
        }
    }
    let thresholds_differ = docs
        .windows(2)
        .any(|pair| pair[0].1.plan.threshold_ns != pair[1].1.plan.threshold_ns);
    keys.iter()
        .flat_map(|key| SERIES.iter().map(move |series| (key, *series)))
        .map(|(key, series)| row(judge, docs, key, series, thresholds_differ))
        .collect()
}

/// One boot's figures of `key`'s `series`, if it measured it.
fn boot_rate(slot: &Slot, doc: &ResultDoc, key: &Key, series: Series) -> Option<BootRate> {
    let merged = by_transport(doc);
    let runs = merged.iter().find(|r| {
        r.transport == key.0 && r.ring_setup == key.1 && r.status != RunStatus::Unsupported
    })?;
    let summary = runs.summary(series);
    Some(BootRate {
        seq: slot.seq,
        role: slot.role,
        column: slot.column,
        rate: Rate {
            over_threshold: summary.over_threshold,
            samples: summary.count,
            max_ns: summary.max_ns,
        },
        failed: runs.status != RunStatus::Completed
            || runs.integrity.loss().is_some()
            || !runs.integrity.transport_failures().is_empty(),
    })
}

fn row(
    judge: &JudgeSection,
    docs: &[(Slot, &ResultDoc)],
    key: &Key,
    series: Series,
    thresholds_differ: bool,
) -> SoakRow {
    let mut reasons = Vec::new();
    if thresholds_differ {
        reasons.push(RowReason::ThresholdsDiffer);
    }
    let mut boots = Vec::new();
    for (slot, doc) in docs {
        match boot_rate(slot, doc, key, series) {
            Some(rate) => boots.push(rate),
            None => reasons.push(RowReason::NotMeasured { seq: slot.seq }),
        }
    }
    let has_b = docs.iter().any(|(s, _)| s.column == Column::ParentB);
    let mut row = SoakRow {
        transport: key.0.clone(),
        ring_setup: key.1,
        series,
        parent_a: sum(&boots, |b| b.column == Column::ParentA),
        child: sum(&boots, |b| b.role == Role::Child),
        parent_b: has_b.then(|| sum(&boots, |b| b.column == Column::ParentB)),
        parents: sum(&boots, |b| b.role == Role::Parent),
        p_higher: 1.0,
        p_lower: 1.0,
        drift_p: None,
        boots,
        verdict: Verdict::Inconclusive,
        reasons: Vec::new(),
    };
    let (parents, child) = (&row.parents, &row.child);
    row.p_higher = rate_increase_p_value(
        parents.over_threshold,
        parents.samples,
        child.over_threshold,
        child.samples,
    );
    row.p_lower = rate_increase_p_value(
        child.over_threshold,
        child.samples,
        parents.over_threshold,
        parents.samples,
    );
    let (a, b) = (row.parent_a, row.parent_b);
    row.drift_p =
        b.map(|b| rates_differ_p_value(a.over_threshold, a.samples, b.over_threshold, b.samples));
    failures(&row.boots, &mut reasons);
    if let (Some(p), Some(b)) = (row.drift_p, b)
        && p < judge.alpha
        && (apart(judge, &a, &b) || apart(judge, &b, &a))
    {
        reasons.push(RowReason::ParentsDiffer { p_value: p });
    }
    row.verdict = verdict(judge, &row, &mut reasons);
    row.reasons = reasons;
    row
}

/// The boots that `keep` takes, added.
fn sum(boots: &[BootRate], keep: impl Fn(&BootRate) -> bool) -> Rate {
    let mut total = Rate::default();
    boots
        .iter()
        .filter(|b| keep(b))
        .for_each(|b| total.add(&b.rate));
    total
}

/// Failed boots: the child's alone are its regression, a parent's make the row inconclusive.
fn failures(boots: &[BootRate], reasons: &mut Vec<RowReason>) {
    for boot in boots.iter().filter(|b| b.failed && b.role == Role::Parent) {
        reasons.push(RowReason::ParentFailed { seq: boot.seq });
    }
    let child: Vec<usize> = boots
        .iter()
        .filter(|b| b.failed && b.role == Role::Child)
        .map(|b| b.seq)
        .collect();
    if !child.is_empty() {
        reasons.push(RowReason::ChildFailed { seqs: child });
    }
}

/// Whether `high` is above `low` by the minimum effect (ratio and per million).
fn apart(judge: &JudgeSection, low: &Rate, high: &Rate) -> bool {
    high.per_million() >= low.per_million() * judge.min_rate_ratio
        && high.per_million() - low.per_million() >= judge.min_rate_change_per_million
}

fn verdict(judge: &JudgeSection, row: &SoakRow, reasons: &mut Vec<RowReason>) -> Verdict {
    let child_failed = reasons
        .iter()
        .any(|r| matches!(r, RowReason::ChildFailed { .. }));
    let blocking = reasons
        .iter()
        .any(|r| !matches!(r, RowReason::ChildFailed { .. }));
    if blocking {
        return Verdict::Inconclusive;
    }
    if child_failed {
        return Verdict::Regression;
    }
    let direction = if row.p_higher < judge.alpha && apart(judge, &row.parents, &row.child) {
        Verdict::Regression
    } else if row.p_lower < judge.alpha && apart(judge, &row.child, &row.parents) {
        Verdict::Improvement
    } else {
        return Verdict::NoChange;
    };
    if judge.separate_ranges && !ranges_separate(&row.boots, direction) {
        reasons.push(RowReason::WithinParentsRange);
        return Verdict::Inconclusive;
    }
    direction
}

fn ranges_separate(boots: &[BootRate], direction: Verdict) -> bool {
    let rates = |role| {
        boots
            .iter()
            .filter(move |b| b.role == role)
            .map(|b| b.rate.per_million())
    };
    let (parent_min, parent_max) = (
        rates(Role::Parent).fold(f64::INFINITY, f64::min),
        rates(Role::Parent).fold(f64::NEG_INFINITY, f64::max),
    );
    match direction {
        Verdict::Regression => rates(Role::Child).all(|r| r > parent_max),
        _ => rates(Role::Child).all(|r| r < parent_min),
    }
}
