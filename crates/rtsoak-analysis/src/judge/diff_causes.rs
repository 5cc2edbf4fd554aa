//! Why a comparison's spikes changed: where both results explained a transport's spikes, the
//! change in each cause between them (a kernel upgrade that regresses raises one cause, and
//! the first question RT engineers ask is which). Counts are estimated over all spikes: each
//! cause's share of the kept spikes times the spikes over the threshold, so runs that kept
//! different shares of their spikes still compare. Causes pair by identity, never by words; a
//! cause an older rtsoak stored in words this one does not recognise is listed as not paired,
//! never as gone.
//!
//! Pure: two merged transports in, their changes out.

use std::collections::HashMap;

use crate::merge::TransportRuns;
use rtsoak_record::result::cause::Cause;
use rtsoak_record::result::diff::{CauseChange, CauseChanges};
use rtsoak_record::result::explain::SeriesBlame;
use rtsoak_record::{Series, SeriesKey};

/// The changes of `series` between `b` (baseline) and `n` (new), if both were explained.
pub(super) fn changes(
    b: &TransportRuns<'_>,
    n: &TransportRuns<'_>,
    series: Series,
) -> Option<CauseChanges> {
    let (old, new) = (blame(b, series)?, blame(n, series)?);
    // `None` is the unexplained spikes, a row of its own.
    let mut causes: Vec<Option<&Cause>> = old
        .causes
        .iter()
        .chain(&new.causes)
        .map(|c| Some(&c.cause))
        .collect();
    causes.sort();
    causes.dedup();
    causes.push(None);
    let (old_counts, new_counts) = (counts(&old), counts(&new));
    let mut changes: Vec<CauseChange> = causes
        .into_iter()
        .map(|cause| {
            let (baseline_share_percent, baseline_count) = share(&old, &old_counts, cause);
            let (new_share_percent, new_count) = share(&new, &new_counts, cause);
            CauseChange {
                cause: cause.cloned(),
                unpaired: unpaired(cause, &old, &new),
                baseline_count,
                new_count,
                baseline_share_percent,
                new_share_percent,
            }
        })
        .filter(|c| c.baseline_count > 0.0 || c.new_count > 0.0)
        .collect();
    changes.sort_by(|a, b| {
        let delta = |c: &CauseChange| (c.new_count - c.baseline_count).abs();
        a.unpaired
            .cmp(&b.unpaired)
            .then_with(|| delta(b).total_cmp(&delta(a)))
            .then_with(|| a.cause.cmp(&b.cause))
    });
    Some(CauseChanges {
        transport: n.transport.to_string(),
        ring_setup: n.ring_setup.or(b.ring_setup),
        series,
        baseline_over_threshold: old.over_threshold,
        new_over_threshold: new.over_threshold,
        changes,
    })
}

/// Whether `cause` is one an older rtsoak stored in words this one does not recognise, found
/// on one side only: the other side may hold it under other words or as an identity, so a
/// count of 0 there would be a guess.
fn unpaired(cause: Option<&Cause>, old: &SeriesBlame, new: &SeriesBlame) -> bool {
    let held = |blame: &SeriesBlame| blame.causes.iter().any(|c| Some(&c.cause) == cause);
    matches!(cause, Some(Cause::Unknown { .. })) && held(old) != held(new)
}

/// The series' blame over the runs, if every run was traced.
fn blame(t: &TransportRuns<'_>, series: Series) -> Option<SeriesBlame> {
    let explanations: Vec<_> = t
        .runs
        .iter()
        .map(|r| r.explanation.as_ref())
        .collect::<Option<_>>()?;
    if explanations.iter().any(|e| e.tracing.unavailable.is_some()) {
        return None;
    }
    SeriesBlame::merged(explanations.iter().copied(), SeriesKey::Rt(series))
}

/// Each cause's count in `blame`: found once each, however many causes a result holds.
fn counts(blame: &SeriesBlame) -> HashMap<&Cause, u64> {
    blame.causes.iter().map(|c| (&c.cause, c.count)).collect()
}

/// A cause's share of the kept spikes, percent, and its count estimated over all spikes
/// (`None`: the unexplained ones).
fn share(blame: &SeriesBlame, counts: &HashMap<&Cause, u64>, cause: Option<&Cause>) -> (f64, f64) {
    if blame.kept == 0 {
        return (0.0, 0.0);
    }
    let count = match cause {
        None => blame.unexplained,
        Some(cause) => counts.get(cause).copied().unwrap_or(0),
    };
    let share = count as f64 / blame.kept as f64;
    (100.0 * share, share * blame.over_threshold as f64)
}
