//! `verdict.max_expected_per_day_us`: the worst send call or delivery to expect once a day, from
//! the tail estimates. The limit is judged on the upper bound of the one-day return level's
//! 95 % interval: PASS says the data show the day's worst under the limit, not that a point
//! estimate (which lay below the true level in most trials of a tail that changed) did. A short
//! soak's wide interval therefore fails a tight limit: soak longer to narrow it. Where a plan
//! ran several rounds, the rounds' pooled estimate is judged (more clusters, a narrower
//! interval, and the rounds compared with each other by its checks); with one round, the run's.
//! Where the limit is set but the estimate was refused, or its figures contradict each other
//! ([`crate::consistent`], the rule the tail table shows them by), the verdict is
//! INCONCLUSIVE, never PASS.
//!
//! Pure: reads merged transports and pooled estimates, returns breaches and reasons.

use crate::consistent;
use crate::merge::TransportRuns;
use rtsoak_record::{PooledTail, ReturnSpan, Series, SeriesKey, TailEstimate};

/// The series the limit applies to, as the other latency limits.
pub(super) const SERIES: [Series; 2] = [Series::SendCall, Series::Delivery];

/// What one estimate says about a day.
pub(crate) enum Day {
    /// The one-day return level and the upper bound of its 95 % interval (infinite: open).
    Level {
        /// The estimate, ns.
        estimate: f64,
        /// The upper bound, ns.
        high: f64,
    },
    /// Fewer than one cluster over the fit's threshold (ns) is expected per day: the level is
    /// below it.
    BelowThreshold(u64),
    /// No estimate, and why.
    Refused(String),
}

/// What the limit judges for `series` of `t`: the estimate pooled over its rounds where
/// `pooled` holds one for it, else each run's, in round order.
pub(super) fn days(t: &TransportRuns<'_>, pooled: &[PooledTail], series: Series) -> Vec<Day> {
    let key = SeriesKey::Rt(series);
    let pool = pooled
        .iter()
        .find(|p| p.transport == t.transport && p.ring_setup == t.ring_setup);
    match pool {
        Some(pool) => vec![day(pool.tail.get(&key))],
        None => t.runs.iter().map(|run| day(run.tail.get(&key))).collect(),
    }
}

/// What one estimate says about a day: a model whose figures contradict each other is not
/// judged.
fn day(estimate: Option<&TailEstimate>) -> Day {
    match estimate {
        Some(TailEstimate::Estimated(model)) => {
            let level = model
                .return_levels
                .iter()
                .find(|l| l.span == ReturnSpan::Day);
            let consistent = consistent::tail_model(model)
                .and_then(|()| level.map_or(Ok(()), |l| consistent::return_level(model, l)));
            if let Err(reason) = consistent {
                return Day::Refused(reason.to_string());
            }
            match level.and_then(|l| Some((l.level_ns?, l.high_ns))) {
                Some((estimate, high)) => Day::Level {
                    estimate,
                    high: high.unwrap_or(f64::INFINITY),
                },
                None => Day::BelowThreshold(model.threshold_ns),
            }
        }
        Some(TailEstimate::HeavyTail { reason, .. })
        | Some(TailEstimate::NotEstimable { reason, .. }) => Day::Refused(reason.clone()),
        None => Day::Refused("the result holds no tail estimate".to_string()),
    }
}

/// A day level over the limit: the estimate and the upper bound, ns.
pub(super) struct DayBreach {
    /// The one-day level's point estimate (the threshold where it is below it).
    pub estimate: f64,
    /// The upper bound judged.
    pub high: f64,
}

/// The largest day level's upper bound over `limit_ns`, if one is.
pub(super) fn breach(
    t: &TransportRuns<'_>,
    pooled: &[PooledTail],
    series: Series,
    limit_ns: u64,
) -> Option<DayBreach> {
    days(t, pooled, series)
        .into_iter()
        .filter_map(|day| match day {
            Day::Level { estimate, high } if high > limit_ns as f64 => {
                Some(DayBreach { estimate, high })
            }
            Day::BelowThreshold(threshold) if threshold > limit_ns => Some(DayBreach {
                estimate: threshold as f64,
                high: threshold as f64,
            }),
            _ => None,
        })
        .max_by(|a, b| a.high.total_cmp(&b.high))
}

/// Why `t`'s day level of `series` cannot be judged, if it cannot: the first refusal's reason.
pub(crate) fn not_estimable(
    t: &TransportRuns<'_>,
    pooled: &[PooledTail],
    series: Series,
) -> Option<String> {
    days(t, pooled, series)
        .into_iter()
        .find_map(|day| match day {
            Day::Refused(reason) => Some(reason),
            _ => None,
        })
}

#[cfg(test)]
mod tests {
    use crate::judge::verdict::verdict;
    use rtsoak_record::result::ResultDoc;
    use rtsoak_record::result::verdict::{InconclusiveKind, Limit};
    use rtsoak_record::{
        PooledTail, ReturnSpan, Series, SeriesKey, Status, TailEstimate, TailRefusal,
    };
    use rtsoak_testing::fixture::{one_run_doc, two_round_doc};

    const LIMIT_US: f64 = 100.0;

    /// An estimated tail whose one-day level is `level_us` with upper bound `high_us`.
    fn estimated(level_us: f64, high_us: f64) -> TailEstimate {
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
            complete_over_ns: 20_000,
            period_ns: 500_000,
            fit_test: rtsoak_record::FitTestRecord {
                anderson_darling: 0.3,
                p_value: 0.5,
                resamples: 99,
            },
            stationarity: Vec::new(),
            held_out: Vec::new(),
            return_levels: Vec::new(),
            dispersion: 1.0,
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
            span: ReturnSpan::Day,
            span_s: 86_400,
            level_ns: Some(level_us * 1000.0),
            low_ns: Some(level_us * 900.0),
            high_ns: Some(high_us * 1000.0),
            exponential_ns: Some(level_us * 1000.0),
            extrapolation: 1.0,
        });
        TailEstimate::Estimated(Box::new(model))
    }

    /// `doc` with the limit set and every run's send call and `series` estimated as `tail`
    /// (the other series well under the limit).
    fn with_tail(mut doc: ResultDoc, series: Series, tail: &TailEstimate) -> ResultDoc {
        doc.plan.verdict.max_expected_per_day_ns = Some((LIMIT_US * 1000.0) as u64);
        for run in &mut doc.runs {
            for name in SERIES_JUDGED {
                let estimate = if name == series {
                    tail.clone()
                } else {
                    estimated(50.0, 60.0)
                };
                run.tail.insert(SeriesKey::Rt(name), estimate);
            }
        }
        doc
    }

    const SERIES_JUDGED: [Series; 2] = super::SERIES;

    fn breached(doc: &ResultDoc, series: &str) -> bool {
        verdict(doc).breaches.iter().any(|b| {
            b.what == Limit::MaxExpectedPerDay
                && b.series.map(rtsoak_record::Series::name) == Some(series)
        })
    }

    #[test]
    fn a_day_level_over_the_limit_fails() {
        let doc = with_tail(one_run_doc(), Series::Delivery, &estimated(150.0, 200.0));
        assert!(breached(&doc, "delivery"));
    }

    #[test]
    fn an_upper_bound_over_the_limit_fails_though_the_estimate_is_under_it() {
        let doc = with_tail(one_run_doc(), Series::Delivery, &estimated(90.0, 130.0));
        assert!(breached(&doc, "delivery"));
        let v = verdict(&doc);
        let breach = v
            .breaches
            .iter()
            .find(|b| b.what == Limit::MaxExpectedPerDay)
            .unwrap();
        assert_eq!(breach.figure, 130.0, "the upper bound is the figure judged");
        assert!(
            breach.message.contains("estimate 90.0 us"),
            "{}",
            breach.message
        );
    }

    #[test]
    fn a_day_level_whose_interval_is_under_the_limit_is_no_breach() {
        let doc = with_tail(one_run_doc(), Series::Delivery, &estimated(80.0, 95.0));
        assert!(!breached(&doc, "delivery"));
        assert!(!breached(&doc, "send_call"));
    }

    #[test]
    fn a_tail_that_is_not_estimable_makes_the_limit_inconclusive() {
        let refused = TailEstimate::refused(TailRefusal::TooFewClusters, "3 clusters".into());
        let doc = with_tail(one_run_doc(), Series::SendCall, &refused);
        let v = verdict(&doc);
        assert!(
            v.inconclusive
                .iter()
                .any(|i| i.kind == InconclusiveKind::TailNotEstimable),
            "{v:?}"
        );
        assert_ne!(v.status, Status::Pass);
    }

    /// A two-round document whose rounds' own estimates are `per_round` and whose pooled
    /// eventfd delivery estimate is `pooled`.
    fn pooled_doc(per_round: &TailEstimate, pooled: TailEstimate) -> ResultDoc {
        let mut doc = with_tail(two_round_doc(), Series::Delivery, per_round);
        let mut tail = std::collections::BTreeMap::new();
        tail.insert(SeriesKey::Rt(Series::Delivery), pooled);
        tail.insert(SeriesKey::Rt(Series::SendCall), estimated(50.0, 60.0));
        doc.tail_pooled.push(PooledTail {
            transport: "eventfd".to_string(),
            ring_setup: None,
            rounds: 2,
            tail,
        });
        doc
    }

    #[test]
    fn with_several_rounds_the_pooled_estimate_is_judged() {
        let under = estimated(60.0, 80.0);
        assert!(breached(
            &pooled_doc(&under, estimated(90.0, 120.0)),
            "delivery"
        ));
        // Rounds whose own (wider) intervals reach over the limit pass on a pooled one under it.
        let wide = estimated(80.0, 140.0);
        let doc = pooled_doc(&wide, estimated(85.0, 95.0));
        let over: Vec<_> = verdict(&doc)
            .breaches
            .into_iter()
            .filter(|b| b.what == Limit::MaxExpectedPerDay)
            .map(|b| b.transport.unwrap())
            .collect();
        assert!(!over.contains(&"eventfd".to_string()), "{over:?}");
        assert!(
            over.contains(&"futex".to_string()),
            "futex has no pooled estimate"
        );
    }

    #[test]
    fn a_refused_pooled_estimate_makes_the_limit_inconclusive() {
        let refused = TailEstimate::refused(TailRefusal::TailChanged, "the tail changed".into());
        let v = verdict(&pooled_doc(&estimated(60.0, 80.0), refused));
        assert!(
            v.inconclusive
                .iter()
                .any(|i| i.kind == InconclusiveKind::TailNotEstimable
                    && i.message.contains("the tail changed")),
            "{v:?}"
        );
    }

    #[test]
    fn a_day_level_that_contradicts_itself_is_judged_by_nothing_and_says_why() {
        // Under the limit, but below its own threshold and outside its own interval: no PASS.
        let mut tail = estimated(-5.0, 50.0);
        if let TailEstimate::Estimated(model) = &mut tail {
            let day = model
                .return_levels
                .iter_mut()
                .find(|l| l.span == ReturnSpan::Day);
            let day = day.expect("the fixture has a day level");
            day.low_ns = Some(9e12);
            day.high_ns = Some(0.0);
        }
        let doc = with_tail(one_run_doc(), Series::Delivery, &tail);
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
        assert!(!breached(&doc, "delivery"));
        assert_ne!(v.status, Status::Pass);
    }
}
