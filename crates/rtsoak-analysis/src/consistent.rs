//! Whether figures a result holds may be shown. A record whose figures contradict each other (an
//! interval that excludes its own estimate, a probability outside [0, 1], a level that is not a
//! number or lies below its own threshold, percentiles out of order, a histogram that does not
//! decode) is shown as `-` with the reason, in every format that shows it, and judged by
//! nothing: a result read from a file may hold anything, and an estimate made here may be
//! wrong. Every renderer of a tail estimate or a per-run summary (the tail block, the floor
//! table) and the verdict's tail limit read this one place.
//!
//! Owns: the rules and the reasons' words. Never changes a record.

use rtsoak_record::result::SeriesResult;
use rtsoak_record::{ReturnLevel, Summary, TailModel};

use crate::stats::decode_histogram;

/// Why a record's figures are not shown.
#[derive(Debug, Clone, PartialEq)]
pub enum Inconsistent {
    /// A figure is NaN or infinite.
    NotFinite {
        /// The figure, as the reader knows it (`the shape`).
        figure: &'static str,
    },
    /// A probability outside [0, 1].
    NotAProbability {
        /// The figure.
        figure: &'static str,
        /// Its value.
        value: f64,
    },
    /// An estimate outside its own interval (or an interval whose ends are swapped).
    OutsideItsInterval {
        /// The figure.
        figure: &'static str,
        /// The estimate.
        estimate: f64,
        /// The interval's lower end.
        low: f64,
        /// Its upper end (infinite: open above).
        high: f64,
    },
    /// A figure below a bound it cannot be below.
    Below {
        /// The figure.
        figure: &'static str,
        /// Its value.
        value: f64,
        /// What it must reach.
        bound: &'static str,
        /// Its value.
        bound_value: f64,
    },
    /// A histogram that does not decode, so its percentiles are unknown.
    Undecodable,
}

impl std::fmt::Display for Inconsistent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Inconsistent::NotFinite { figure } => write!(f, "{figure} is not a number"),
            Inconsistent::NotAProbability { figure, value } => {
                write!(f, "{figure} {value} is not a probability (outside 0 to 1)")
            }
            Inconsistent::OutsideItsInterval {
                figure,
                estimate,
                low,
                high,
            } => write!(
                f,
                "{figure} {estimate} lies outside its own 95 % interval [{low}, {high}]"
            ),
            Inconsistent::Below {
                figure,
                value,
                bound,
                bound_value,
            } => write!(f, "{figure} {value} is below {bound} {bound_value}"),
            Inconsistent::Undecodable => write!(f, "its histogram does not decode"),
        }
    }
}

impl Inconsistent {
    /// The reason, said of the record and what follows from it: `the fit p-value 2.5 is not a
    /// probability (outside 0 to 1): shown as -`.
    pub fn shown_as_dash(&self) -> String {
        format!("{self}: shown as -")
    }
}

/// `value` is finite.
fn finite(figure: &'static str, value: f64) -> Result<f64, Inconsistent> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(Inconsistent::NotFinite { figure })
    }
}

/// `value` is at least `bound_value`.
fn at_least(
    figure: &'static str,
    value: f64,
    bound: &'static str,
    bound_value: f64,
) -> Result<(), Inconsistent> {
    if value >= bound_value {
        Ok(())
    } else {
        Err(Inconsistent::Below {
            figure,
            value,
            bound,
            bound_value,
        })
    }
}

/// `estimate` is finite and within `[low, high]` (`high` absent: open above).
fn within(
    figure: &'static str,
    estimate: f64,
    low: f64,
    high: Option<f64>,
) -> Result<(), Inconsistent> {
    finite(figure, estimate)?;
    finite(figure, low)?;
    let high = match high {
        Some(high) => finite(figure, high)?,
        None => f64::INFINITY,
    };
    if low <= estimate && estimate <= high {
        Ok(())
    } else {
        Err(Inconsistent::OutsideItsInterval {
            figure,
            estimate,
            low,
            high,
        })
    }
}

/// A fitted tail's own figures, as the tail block shows them: a threshold and at least one
/// cluster, a finite shape inside its interval, a positive scale, a fit p-value that is a
/// probability.
pub fn tail_model(model: &TailModel) -> Result<(), Inconsistent> {
    at_least("the number of clusters", model.clusters as f64, "one", 1.0)?;
    within("the shape xi", model.xi, model.xi_low, model.xi_high)?;
    let sigma = finite("the scale sigma", model.sigma_ns)?;
    at_least("the scale sigma", sigma, "zero", 0.0)?;
    let p = finite("the fit p-value", model.fit_test.p_value)?;
    if !(0.0..=1.0).contains(&p) {
        return Err(Inconsistent::NotAProbability {
            figure: "the fit p-value",
            value: p,
        });
    }
    Ok(())
}

/// One return level of `model`: where present, a finite level at or above the model's
/// threshold (a level exists only where at least one cluster over it is expected), inside its
/// own interval; a finite extrapolation factor.
pub fn return_level(model: &TailModel, level: &ReturnLevel) -> Result<(), Inconsistent> {
    finite("the extrapolation", level.extrapolation)?;
    let Some(estimate) = level.level_ns else {
        return Ok(());
    };
    let figure = "the return level (ns)";
    finite(figure, estimate)?;
    at_least(figure, estimate, "its threshold", model.threshold_ns as f64)?;
    within(
        figure,
        estimate,
        level.low_ns.unwrap_or(estimate),
        level.high_ns,
    )
}

/// A run's summary of one series: with samples, percentiles in order between the smallest and
/// the longest sample, and no more samples over the threshold than samples.
pub fn summary(s: &Summary) -> Result<(), Inconsistent> {
    if s.count == 0 {
        return Ok(());
    }
    let order = [
        ("the shortest sample (ns)", s.min_ns),
        ("p50 (ns)", s.p50_ns),
        ("p90 (ns)", s.p90_ns),
        ("p99 (ns)", s.p99_ns),
        ("p99.9 (ns)", s.p99_9_ns),
        ("p99.99 (ns)", s.p99_99_ns),
        ("the longest sample (ns)", s.max_ns),
    ];
    for pair in order.windows(2) {
        let [(low_name, low), (name, value)] = pair else {
            continue;
        };
        at_least(name, *value as f64, low_name, *low as f64)?;
    }
    at_least(
        "the number of samples",
        s.count as f64,
        "the samples over the threshold",
        s.over_threshold as f64,
    )
}

/// A run's series as a per-run figure shows it: a histogram that decodes, and a consistent
/// [`summary`].
pub fn series(s: &SeriesResult) -> Result<(), Inconsistent> {
    decode_histogram(&s.histogram).map_err(|_| Inconsistent::Undecodable)?;
    summary(&s.summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsoak_record::{FitTestRecord, OverThreshold};

    fn model() -> TailModel {
        TailModel {
            threshold_ns: 30_000,
            thresholds_tried: Vec::new(),
            xi: 0.1,
            xi_low: -0.2,
            xi_high: Some(0.4),
            sigma_ns: 2_000.0,
            exceedances: 120,
            clusters: 80,
            extremal_index: 0.7,
            run_length_samples: 10,
            samples: 1_000_000,
            span_ns: 500_000_000_000,
            complete_over_ns: 30_000,
            period_ns: 500_000,
            fit_test: FitTestRecord {
                anderson_darling: 0.4,
                p_value: 0.6,
                resamples: 200,
            },
            stationarity: Vec::new(),
            held_out: Vec::new(),
            return_levels: Vec::new(),
            dispersion: 1.0,
            over_threshold: OverThreshold {
                threshold_ns: 100_000,
                clusters: 0,
                probability_per_hour: 0.0,
                low: 0.0,
                high: 0.1,
                soak_to_rule_out_s: 3600.0,
            },
            cluster_maxima_ns: Vec::new(),
        }
    }

    fn level(level_ns: f64, low_ns: f64, high_ns: Option<f64>) -> ReturnLevel {
        ReturnLevel {
            span: rtsoak_record::ReturnSpan::Day,
            span_s: 86_400,
            level_ns: Some(level_ns),
            low_ns: Some(low_ns),
            high_ns,
            exponential_ns: None,
            extrapolation: 172.8,
        }
    }

    #[test]
    fn a_sound_model_and_its_levels_are_shown() {
        let m = model();
        assert_eq!(tail_model(&m), Ok(()));
        assert_eq!(return_level(&m, &level(45_000.0, 40_000.0, None)), Ok(()));
        let below = ReturnLevel {
            level_ns: None,
            low_ns: None,
            ..level(0.0, 0.0, None)
        };
        assert_eq!(return_level(&m, &below), Ok(()), "below the threshold");
    }

    #[test]
    fn a_level_outside_its_interval_or_below_its_threshold_is_not_shown() {
        let m = model();
        let reason = return_level(&m, &level(-5_000.0, 9e12, Some(0.0))).unwrap_err();
        assert_eq!(
            reason.to_string(),
            "the return level (ns) -5000 is below its threshold 30000"
        );
        let reason = return_level(&m, &level(50_000.0, 9e12, Some(0.0))).unwrap_err();
        assert!(
            matches!(reason, Inconsistent::OutsideItsInterval { .. }),
            "{reason}"
        );
        let reason = return_level(&m, &level(f64::NAN, 0.0, None)).unwrap_err();
        assert_eq!(reason.to_string(), "the return level (ns) is not a number");
    }

    #[test]
    fn a_fit_p_value_that_is_no_probability_or_a_shape_outside_its_interval_is_not_shown() {
        let mut m = model();
        m.fit_test.p_value = 2.5;
        assert_eq!(
            tail_model(&m).unwrap_err().shown_as_dash(),
            "the fit p-value 2.5 is not a probability (outside 0 to 1): shown as -"
        );
        let mut m = model();
        m.xi_low = 0.5;
        assert!(matches!(
            tail_model(&m),
            Err(Inconsistent::OutsideItsInterval { .. })
        ));
        m = model();
        m.clusters = 0;
        assert!(tail_model(&m).is_err());
    }

    #[test]
    fn percentiles_out_of_order_or_more_spikes_than_samples_are_inconsistent() {
        let s = Summary {
            count: 100,
            min_ns: 1_000,
            p50_ns: 2_000,
            p90_ns: 3_000,
            p99_ns: 4_000,
            p99_9_ns: 5_000,
            p99_99_ns: 5_000,
            max_ns: 6_000,
            over_threshold: 3,
        };
        assert_eq!(summary(&s), Ok(()));
        assert_eq!(
            summary(&Summary::default()),
            Ok(()),
            "no samples, no figure"
        );
        let swapped = Summary { p99_ns: 1_500, ..s };
        assert_eq!(
            summary(&swapped).unwrap_err().to_string(),
            "p99 (ns) 1500 is below p90 (ns) 3000"
        );
        let more = Summary {
            over_threshold: 101,
            ..s
        };
        assert!(summary(&more).is_err());
    }
}
