//! The figures of one series of rounds: mean, median, coefficient of variation. Pure functions
//! over ns/op values, so every definition is unit-tested with hand-computed numbers.
//!
//! Definitions (also in `docs/result-schema.md`): the mean is the arithmetic mean; the median
//! of an even count is the mean of the two middle values; the CV is the *sample* standard
//! deviation (n - 1 in the denominator) divided by the mean, in percent, and 0 for fewer than
//! two values.

use rtsoak_record::bench::RoundsSummary;

/// Arithmetic mean; `None` for no values.
pub fn mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    Some(values.iter().sum::<f64>() / values.len() as f64)
}

/// Median; `None` for no values.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let middle = sorted.len() / 2;
    Some(if sorted.len().is_multiple_of(2) {
        (sorted[middle - 1] + sorted[middle]) / 2.0
    } else {
        sorted[middle]
    })
}

/// Sample standard deviation over the mean, percent; `None` for no values, 0 for one.
pub fn cv_pct(values: &[f64]) -> Option<f64> {
    let mean = mean(values)?;
    if values.len() < 2 || mean == 0.0 {
        return Some(0.0);
    }
    let variance =
        values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (values.len() - 1) as f64;
    Some(variance.sqrt() / mean * 100.0)
}

/// Summarise measured rounds given as (ns per op, valid).
pub fn summarise(measured: &[(f64, bool)]) -> RoundsSummary {
    let values: Vec<f64> = measured.iter().map(|(v, _)| *v).collect();
    RoundsSummary {
        measured_rounds: measured.len(),
        valid_rounds: measured.iter().filter(|(_, valid)| *valid).count(),
        mean_ns_per_op: mean(&values).unwrap_or(0.0),
        median_ns_per_op: median(&values).unwrap_or(0.0),
        cv_pct: cv_pct(&values).unwrap_or(0.0),
        min_ns_per_op: if values.is_empty() {
            0.0
        } else {
            values.iter().copied().fold(f64::INFINITY, f64::min)
        },
        max_ns_per_op: values.iter().copied().fold(0.0, f64::max),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn the_mean_of_three_values_is_their_sum_over_three() {
        assert!(close(mean(&[1.0, 2.0, 6.0]).unwrap(), 3.0));
        assert_eq!(mean(&[]), None);
    }

    #[test]
    fn the_median_of_an_even_count_averages_the_two_middle_values() {
        assert!(close(median(&[4.0, 1.0, 3.0, 2.0]).unwrap(), 2.5));
        assert!(close(median(&[9.0, 1.0, 5.0]).unwrap(), 5.0));
    }

    #[test]
    fn the_cv_uses_the_sample_standard_deviation() {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, squared deviations sum 32, sample variance 32/7.
        let values = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        let expected = (32.0f64 / 7.0).sqrt() / 5.0 * 100.0; // 42.76 %
        assert!(close(cv_pct(&values).unwrap(), expected));
        assert!(close(cv_pct(&[100.0]).unwrap(), 0.0));
    }

    #[test]
    fn a_summary_counts_valid_rounds_and_keeps_extremes() {
        let summary = summarise(&[(10.0, true), (12.0, false), (11.0, true)]);
        assert_eq!(summary.measured_rounds, 3);
        assert_eq!(summary.valid_rounds, 2);
        assert!(close(summary.mean_ns_per_op, 11.0));
        assert!(close(summary.median_ns_per_op, 11.0));
        assert!(close(summary.cv_pct, 1.0 / 11.0 * 100.0));
        assert!(close(summary.min_ns_per_op, 10.0));
        assert!(close(summary.max_ns_per_op, 12.0));
    }
}
