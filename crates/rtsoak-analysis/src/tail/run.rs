//! Each run's tail estimates: the series an RT engineer gates on, estimated from what the run
//! kept (the exact outlier list and the merged histogram), once, after the run.

use std::collections::BTreeMap;

use crate::stats::decode_histogram;
use crate::tail::{TailInput, estimate};
use rtsoak_record::result::RunResult;
use rtsoak_record::{Series, SeriesKey, TailEstimate};

/// The series given a tail estimate, in the order tables show them.
pub(crate) const TAIL_SERIES: [Series; 4] = [
    Series::SendCall,
    Series::Delivery,
    Series::OwnWake,
    Series::Timer,
];

/// The tail estimate of every [`TAIL_SERIES`] series `run` holds, at the run's `period_ns`
/// with outliers kept over `threshold_ns`.
pub fn estimate_run(
    run: &RunResult,
    period_ns: u64,
    threshold_ns: u64,
) -> BTreeMap<SeriesKey, TailEstimate> {
    let mut out = BTreeMap::new();
    for series in TAIL_SERIES.map(SeriesKey::Rt) {
        let Some(kept) = run.series.get(&series) else {
            continue;
        };
        let estimate = match decode_histogram(&kept.histogram) {
            Ok(histogram) => estimate(&TailInput {
                outliers: &kept.outliers,
                outliers_dropped: kept.outliers_dropped,
                histogram: &histogram,
                measured_ns: run.measured_ns,
                period_ns,
                threshold_ns,
            }),
            Err(error) => TailEstimate::NotEstimable {
                reason: format!("the series' histogram does not decode ({error}): re-run"),
            },
        };
        out.insert(series, estimate);
    }
    out
}
