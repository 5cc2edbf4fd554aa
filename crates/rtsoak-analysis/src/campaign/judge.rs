//! The judgement across boots: the gates of `bench compare` (signal, drift, CV, fixed in the
//! plan before the first boot) or the exact rate test of the soaks, plus what fresh boots add:
//! each point's boot-to-boot spread, the child beyond the parents' range, and the host
//! fingerprint, which must match on every boot (apart from what the plan varies) or the
//! verdict is INCONCLUSIVE naming the difference. A campaign that did not carry out its plan
//! (a planned boot without a result) or ran under emulation is INCONCLUSIVE too: no claim
//! either way.
//!
//! Pure: measured boots in, a [`Judgement`] out. The per-series arithmetic is in
//! [`super::judge_bench`] and [`super::judge_soak`]; wording is the renderer's.

use serde::{Deserialize, Serialize};

use super::fingerprint::{self, Difference, Fingerprint};
use super::judge_bench::BenchRow;
use super::judge_soak::SoakRow;
use super::plan::{CommandKind, Plan};
use super::sequence::{Column, Slot};
use crate::bench::compare::Verdict;
use rtsoak_record::bench::BenchDoc;
use rtsoak_record::result::ResultDoc;

/// One boot's saved result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BootResult {
    /// `bench.json` of `rtsoak bench`.
    Bench(Box<BenchDoc>),
    /// `result.json` of `rtsoak run` or `compare`.
    Soak(Box<ResultDoc>),
}

/// A planned boot that measured, as the judgement sees it.
#[derive(Debug, Clone, Copy)]
pub struct MeasuredBoot<'a> {
    /// The planned boot.
    pub slot: Slot,
    /// Its result.
    pub result: &'a BootResult,
    /// Its host fingerprint.
    pub fingerprint: &'a Fingerprint,
}

/// Why a whole campaign cannot make a claim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reason {
    /// Planned boots that saved no result (see each boot's attempts).
    BootsMissing {
        /// Their positions.
        seqs: Vec<usize>,
    },
    /// No boot of this column measured.
    ColumnMissing {
        /// Which.
        column: Column,
    },
    /// The host fingerprint differed between boots (`fingerprint_differences`).
    FingerprintDiffers,
    /// The guests ran under TCG, qemu's emulator: behaviour is real, timings are not.
    Emulated,
    /// A boot's result is not of the plan's command (a soak where a bench was planned).
    WrongResult {
        /// The boot.
        seq: usize,
    },
    /// Two boots' bench configurations differ (beyond the CPU).
    ConfigDiffers {
        /// The boot compared against.
        reference_seq: usize,
        /// The boot that differs.
        seq: usize,
    },
}

/// The campaign's judgement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    /// The worst verdict of any row, or inconclusive where `reasons` has any.
    pub verdict: Verdict,
    /// Why the whole campaign is inconclusive, if it is.
    pub reasons: Vec<Reason>,
    /// Where boots' fingerprints differ (the first measured boot is the reference).
    pub fingerprint_differences: Vec<Difference>,
    /// The command-line parameters on which the two points differ, left out of the
    /// fingerprint.
    pub varied_parameters: Vec<String>,
    /// Bench campaigns: one row per series.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bench: Vec<BenchRow>,
    /// Soak campaigns: one row per transport (and ring setup) and series.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub soak: Vec<SoakRow>,
}

/// What the judgement is told besides the boots.
pub struct Context<'a> {
    /// The plan (gates, order, kind).
    pub plan: &'a Plan,
    /// Every planned boot.
    pub planned: &'a [Slot],
    /// The parameters the points' command lines vary.
    pub varied_parameters: Vec<String>,
    /// The guests ran under TCG.
    pub emulated: bool,
}

/// Judge the measured `boots` of a campaign.
pub fn judge(context: &Context<'_>, boots: &[MeasuredBoot<'_>]) -> Judgement {
    let mut reasons = Vec::new();
    let missing: Vec<usize> = context
        .planned
        .iter()
        .filter(|slot| !boots.iter().any(|b| b.slot.seq == slot.seq))
        .map(|slot| slot.seq)
        .collect();
    if !missing.is_empty() {
        reasons.push(Reason::BootsMissing { seqs: missing });
    }
    let planned_columns = columns(context.planned.iter());
    let measured_columns = columns(boots.iter().map(|b| &b.slot));
    for column in planned_columns {
        if !measured_columns.contains(&column) {
            reasons.push(Reason::ColumnMissing { column });
        }
    }
    let prints: Vec<(usize, &Fingerprint)> =
        boots.iter().map(|b| (b.slot.seq, b.fingerprint)).collect();
    let differences = fingerprint::differences(&prints, &context.varied_parameters);
    if !differences.is_empty() {
        reasons.push(Reason::FingerprintDiffers);
    }
    if context.emulated {
        reasons.push(Reason::Emulated);
    }
    let (bench, soak) = match context.plan.command_kind() {
        CommandKind::Bench => (bench_rows(context, boots, &mut reasons), Vec::new()),
        CommandKind::Soak => (Vec::new(), soak_rows(context, boots, &mut reasons)),
    };
    let row_verdicts: Vec<Verdict> = bench
        .iter()
        .map(|r| r.verdict)
        .chain(soak.iter().map(|r| r.verdict))
        .collect();
    let verdict = if reasons.is_empty() {
        worst(&row_verdicts)
    } else {
        Verdict::Inconclusive
    };
    Judgement {
        verdict,
        reasons,
        fingerprint_differences: differences,
        varied_parameters: context.varied_parameters.clone(),
        bench,
        soak,
    }
}

fn columns<'a>(slots: impl Iterator<Item = &'a Slot>) -> Vec<Column> {
    let mut columns: Vec<Column> = slots
        .map(|s| s.column)
        .filter(|c| *c != Column::ParentMiddle)
        .collect();
    columns.sort();
    columns.dedup();
    columns
}

fn bench_rows(
    context: &Context<'_>,
    boots: &[MeasuredBoot<'_>],
    reasons: &mut Vec<Reason>,
) -> Vec<BenchRow> {
    let mut docs: Vec<(Slot, &BenchDoc)> = Vec::new();
    for boot in boots {
        match boot.result {
            BootResult::Bench(doc) => docs.push((boot.slot, doc)),
            BootResult::Soak(_) => reasons.push(Reason::WrongResult { seq: boot.slot.seq }),
        }
    }
    if let Some((first, reference)) = docs.first() {
        for (slot, doc) in &docs[1..] {
            let mut config = doc.config.clone();
            config.cpu = reference.config.cpu;
            if doc.bench != reference.bench || config != reference.config {
                reasons.push(Reason::ConfigDiffers {
                    reference_seq: first.seq,
                    seq: slot.seq,
                });
            }
        }
    }
    let three_way = context
        .planned
        .iter()
        .any(|slot| slot.column == Column::ParentB);
    super::judge_bench::rows(&context.plan.judge, &docs, three_way)
}

fn soak_rows(
    context: &Context<'_>,
    boots: &[MeasuredBoot<'_>],
    reasons: &mut Vec<Reason>,
) -> Vec<SoakRow> {
    let mut docs: Vec<(Slot, &ResultDoc)> = Vec::new();
    for boot in boots {
        match boot.result {
            BootResult::Soak(doc) => docs.push((boot.slot, doc)),
            BootResult::Bench(_) => reasons.push(Reason::WrongResult { seq: boot.slot.seq }),
        }
    }
    super::judge_soak::rows(&context.plan.judge, &docs)
}

/// A regression anywhere is a regression, then inconclusive, then an improvement (the order
/// of `bench compare`).
fn worst(verdicts: &[Verdict]) -> Verdict {
    [
        Verdict::Regression,
        Verdict::Inconclusive,
        Verdict::Improvement,
    ]
    .into_iter()
    .find(|v| verdicts.contains(v))
    .unwrap_or(if verdicts.is_empty() {
        Verdict::Inconclusive
    } else {
        Verdict::NoChange
    })
}

#[cfg(test)]
#[path = "judge_tests.rs"]
mod tests;
