//! Where the tail may start. Too low a threshold fits the body (or sits under a spike mode's
//! lower edge) and biases the shape; too high leaves too few clusters to fit. The candidates are
//! quantiles of the run's histogram, from the run's own threshold upward, each with about 0.7
//! times the exceedances of the one below. The choice among them (the lowest the fit test
//! accepts) is made in the module root, and every candidate's shape is recorded, so a reader
//! can see how stable the shape was.
//!
//! Owns: the candidates. Never fits, tests or extrapolates.

use hdrhistogram::Histogram;

/// Each candidate keeps about this share of the exceedances of the one below.
const STEP: f64 = 0.7;

/// Candidate thresholds, ns, lowest first: the recording threshold, then histogram quantiles
/// above it while at least `min_exceedances` samples are expected over them.
pub(super) fn candidates(
    histogram: &Histogram<u64>,
    recording_threshold_ns: u64,
    min_exceedances: u64,
) -> Vec<u64> {
    let total = histogram.len();
    let mut out = vec![recording_threshold_ns];
    if total == 0 {
        return out;
    }
    let above = histogram.count_between(recording_threshold_ns + 1, u64::MAX);
    let mut expected = above as f64 * STEP;
    while expected >= min_exceedances as f64 {
        let quantile = 1.0 - expected / total as f64;
        let value = histogram.value_at_quantile(quantile);
        if value > *out.last().expect("never empty") {
            out.push(value);
        }
        expected *= STEP;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_rise_from_the_recording_threshold() {
        let mut histogram = crate::stats::new_histogram();
        for v in 1..=100_000u64 {
            histogram.record(v).unwrap();
        }
        let list = candidates(&histogram, 90_000, 30);
        assert_eq!(list[0], 90_000);
        assert!(list.windows(2).all(|w| w[0] < w[1]));
        assert!(list.len() > 5);
    }
}
