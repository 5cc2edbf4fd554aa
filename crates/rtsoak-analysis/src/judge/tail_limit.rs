//! `verdict.max_expected_per_day_us`: the worst send call or delivery to expect once a day, from
//! each run's tail estimate. The point estimate of the one-day return level is judged against
//! the limit (its interval is in the table: a limit on the upper bound would fail every short
//! soak for being short, which is what the rate's own interval and "soak longer" already say).
//! Where the limit is set but a run's tail gave no estimate, or one whose figures contradict
//! each other ([`crate::consistent`], the rule the tail table shows them by), the
//! verdict is INCONCLUSIVE, never PASS.
//!
//! Pure: reads merged transports, returns breaches and reasons.

use crate::consistent;
use crate::merge::TransportRuns;
use rtsoak_record::{Series, SeriesKey, TailEstimate};

/// The series the limit applies to, as the other latency limits.
pub(super) const SERIES: [Series; 2] = [Series::SendCall, Series::Delivery];

/// What one run's tail says about a day.
pub(crate) enum Day {
    /// The one-day return level, ns.
    Level(f64),
    /// Fewer than one cluster over the fit's threshold (ns) is expected per day: the level is
    /// below it.
    BelowThreshold(u64),
    /// No estimate, and why.
    Refused(String),
}

/// The day level of `series` in every run of `t`, in round order.
pub(super) fn days(t: &TransportRuns<'_>, series: Series) -> Vec<Day> {
    t.runs
        .iter()
        .map(|run| match run.tail.get(&SeriesKey::Rt(series)) {
            Some(TailEstimate::Estimated(model)) => {
                let day = model.return_levels.iter().find(|l| l.span == "day");
                let consistent = consistent::tail_model(model)
                    .and_then(|()| day.map_or(Ok(()), |l| consistent::return_level(model, l)));
                match (consistent, day.and_then(|l| l.level_ns)) {
                    (Err(reason), _) => Day::Refused(reason.to_string()),
                    (Ok(()), Some(level)) => Day::Level(level),
                    (Ok(()), None) => Day::BelowThreshold(model.threshold_ns),
                }
            }
            Some(TailEstimate::HeavyTail { reason, .. })
            | Some(TailEstimate::NotEstimable { reason }) => Day::Refused(reason.clone()),
            None => Day::Refused("the result holds no tail estimate".to_string()),
        })
        .collect()
}

/// The largest day level over `t`'s runs of `series` above `limit_ns`, if one is.
pub(super) fn breach(t: &TransportRuns<'_>, series: Series, limit_ns: u64) -> Option<f64> {
    days(t, series)
        .into_iter()
        .filter_map(|day| match day {
            Day::Level(level) if level > limit_ns as f64 => Some(level),
            Day::BelowThreshold(threshold) if threshold > limit_ns => Some(threshold as f64),
            _ => None,
        })
        .reduce(f64::max)
}

/// Why `t`'s day level of `series` cannot be judged, if it cannot: the first refusal's reason.
pub(crate) fn not_estimable(t: &TransportRuns<'_>, series: Series) -> Option<String> {
    days(t, series).into_iter().find_map(|day| match day {
        Day::Refused(reason) => Some(reason),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use crate::judge::verdict::verdict;
    use rtsoak_record::result::verdict::{InconclusiveKind, Limit};
    use rtsoak_record::{Series, SeriesKey, Status, TailEstimate};
    use rtsoak_testing::fixture::one_run_doc;

    /// An estimated tail for `series` whose one-day level is `level_us`.
    fn with_day_level(series: Series, level_us: f64) -> rtsoak_record::result::ResultDoc {
        let mut doc = one_run_doc();
        doc.plan.verdict.max_expected_per_day_ns = Some(100_000);
        let mut model = rtsoak_record::TailModel {
            threshold_ns: 20_000,
            thresholds_tried: Vec::new(),
            xi: 0.0,
            xi_low: -0.1,
            xi_high: Some(0.1),
            sigma_ns: 1000.0,
            exceedances: 50,
            clusters: 50,
            extremal_index: 1.0,
            run_length_samples: 4,
            samples: 1000,
            span_ns: 1,
            period_ns: 500_000,
            fit_test: rtsoak_record::FitTestRecord {
                anderson_darling: 0.3,
                p_value: 0.5,
                resamples: 99,
            },
            return_levels: Vec::new(),
            over_threshold: rtsoak_record::OverThreshold {
                threshold_ns: 20_000,
                clusters: 50,
                probability_per_hour: 1.0,
                low: 1.0,
                high: 1.0,
                soak_to_rule_out_s: 1.0,
            },
            cluster_maxima_ns: Vec::new(),
        };
        model.return_levels.push(rtsoak_record::ReturnLevel {
            span: "day".to_string(),
            span_s: 86_400,
            level_ns: Some(level_us * 1000.0),
            low_ns: None,
            high_ns: None,
            extrapolation: 1.0,
        });
        for run in &mut doc.runs {
            for name in [Series::SendCall, Series::Delivery] {
                let estimate = if name == series {
                    TailEstimate::Estimated(Box::new(model.clone()))
                } else {
                    let mut quiet = model.clone();
                    quiet.return_levels[0].level_ns = Some(50_000.0);
                    TailEstimate::Estimated(Box::new(quiet))
                };
                run.tail.insert(SeriesKey::Rt(name), estimate);
            }
        }
        doc
    }

    #[test]
    fn a_day_level_over_the_limit_fails() {
        let v = verdict(&with_day_level(Series::Delivery, 150.0));
        assert!(
            v.breaches
                .iter()
                .any(|b| b.what == Limit::MaxExpectedPerDay
                    && b.series.as_deref() == Some("delivery")),
            "{v:?}"
        );
    }

    #[test]
    fn a_day_level_under_the_limit_is_no_breach() {
        let v = verdict(&with_day_level(Series::Delivery, 90.0));
        assert!(
            !v.breaches
                .iter()
                .any(|b| b.what == Limit::MaxExpectedPerDay),
            "{v:?}"
        );
    }

    #[test]
    fn a_tail_that_is_not_estimable_makes_the_limit_inconclusive() {
        let mut doc = with_day_level(Series::Delivery, 90.0);
        for run in &mut doc.runs {
            run.tail.insert(
                SeriesKey::Rt(Series::SendCall),
                TailEstimate::NotEstimable {
                    reason: "3 clusters".to_string(),
                },
            );
        }
        let v = verdict(&doc);
        assert!(
            v.inconclusive
                .iter()
                .any(|i| i.kind == InconclusiveKind::TailNotEstimable),
            "{v:?}"
        );
        assert_ne!(v.status, Status::Pass);
    }

    #[test]
    fn a_day_level_that_contradicts_itself_is_judged_by_nothing_and_says_why() {
        // Under the limit, but below its own threshold and outside its own interval: no PASS.
        let mut doc = with_day_level(Series::Delivery, -5.0);
        for run in &mut doc.runs {
            if let Some(TailEstimate::Estimated(model)) =
                run.tail.get_mut(&SeriesKey::Rt(Series::Delivery))
            {
                model.return_levels[0].low_ns = Some(9e12);
                model.return_levels[0].high_ns = Some(0.0);
            }
        }
        let v = verdict(&doc);
        let reason = v
            .inconclusive
            .iter()
            .find(|i| i.kind == InconclusiveKind::TailNotEstimable)
            .unwrap_or_else(|| panic!("{v:?}"));
        assert!(
            reason
                .message
                .contains("-5000 is below its threshold 20000"),
            "{}",
            reason.message
        );
        assert!(
            !v.breaches
                .iter()
                .any(|b| b.what == Limit::MaxExpectedPerDay)
        );
        assert_ne!(v.status, Status::Pass);
    }
}
