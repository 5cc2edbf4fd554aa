//! The `[verdict]` profile section: pass/fail limits as a user writes them (microseconds,
//! counts, per-million rates, required conditions), checked and resolved into
//! [`rtsoak_record::plan::Limits`]. Owns the keys, their defaults and allowed ranges; never judges a
//! result (that is `result::verdict`).

use serde::{Deserialize, Serialize};

use super::error::{ProfileError, in_range, invalid};
use rtsoak_record::plan::Limits;

/// `[verdict]`. Every limit is optional: absent = not judged. A lost message always fails the
/// verdict, whatever this section says (`max_lost` may only be 0).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct VerdictSection {
    /// Longest RT send call allowed, microseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    max_send_call_us: Option<u64>,
    /// Longest RT delivery allowed, microseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    max_delivery_us: Option<u64>,
    /// Send calls (and, separately, deliveries) over `run.threshold_us` allowed per transport.
    #[serde(skip_serializing_if = "Option::is_none")]
    max_over_threshold: Option<u64>,
    /// The same as a rate: over-threshold samples per million samples.
    #[serde(skip_serializing_if = "Option::is_none")]
    max_over_threshold_per_million: Option<u64>,
    /// Lost messages allowed per transport: only 0 is accepted (kept so that profiles which
    /// spell the default out still load).
    #[serde(skip_serializing_if = "Option::is_none")]
    max_lost: Option<u64>,
    /// Worst send call (and, separately, delivery) to expect once a day, from the tail estimate
    /// (its one-day return level), microseconds. A run whose tail gives no estimate makes the
    /// verdict inconclusive.
    #[serde(skip_serializing_if = "Option::is_none")]
    max_expected_per_day_us: Option<u64>,
    /// Fewest messages each transport must have sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) min_messages: Option<u64>,
    /// Most measured periods each transport may miss (deadlines that passed before the
    /// publisher could send), its rounds added.
    #[serde(skip_serializing_if = "Option::is_none")]
    max_missed_periods: Option<u64>,
    /// More missed periods than this share of those planned make the verdict inconclusive
    /// (the figures stand for a much shorter run than was asked); absent: the default,
    /// [`DEFAULT_INCONCLUSIVE_MISSED_PERCENT`]; 100: never.
    #[serde(skip_serializing_if = "Option::is_none")]
    inconclusive_missed_percent: Option<u8>,
    /// Fail unless the kernel is PREEMPT_RT.
    require_preempt_rt: bool,
    /// Fail unless every RT worker got the real-time policy and priority it asked for.
    require_rt_priority: bool,
    /// Fail unless both RT CPUs are isolated.
    require_isolated_cpus: bool,
    /// Fail if noise ran on an RT CPU.
    require_noise_apart: bool,
    /// A development machine's profile: a kernel without PREEMPT_RT and noise on the RT CPUs
    /// are accepted (a PASS names them) instead of making the verdict inconclusive.
    pub(crate) development: bool,
}

/// The share of planned periods a run may miss before its verdict is inconclusive, percent.
/// Each missed period is a latency of at least one period that no histogram holds, so with a
/// share f missed every percentile above 1 - f is unknown: at 5 % the figures up to p95 still
/// stand, and a run that misses more (a publisher stopped for seconds, an emulated kernel that
/// cannot keep a 500 us period) describes a run much shorter than the one asked for. A quiet or
/// noisy run on a loaded 2-CPU development machine misses well under 1 %.
pub(crate) const DEFAULT_INCONCLUSIVE_MISSED_PERCENT: u8 = 5;

/// Longest latency limit a profile may give: 10 s, the histograms' range.
const MAX_LATENCY_US: u64 = 10_000_000;

/// Check the section's ranges and convert it to nanoseconds.
pub(super) fn resolve_limits(section: &VerdictSection) -> Result<Limits, ProfileError> {
    let latency = |key: &str, value: Option<u64>| match value {
        Some(us @ 1..=MAX_LATENCY_US) => Ok(Some(us * 1_000)),
        Some(us) => Err(invalid(
            key,
            us.to_string(),
            format!("1..={MAX_LATENCY_US} (microseconds), or leave it out to not judge it"),
        )),
        None => Ok(None),
    };
    if let Some(rate) = section.max_over_threshold_per_million {
        in_range(
            "verdict.max_over_threshold_per_million",
            rate,
            (0, 1_000_000),
            " (samples per million samples)",
        )?;
    }
    if let Some(lost) = section.max_lost.filter(|lost| *lost > 0) {
        return Err(invalid(
            "verdict.max_lost",
            lost.to_string(),
            "0: a lost message always fails the run (the delivery timeout, run.delivery_timeout_ms, \
             decides when a message counts as lost); remove the key"
                .to_string(),
        ));
    }
    let inconclusive_missed_percent = match section.inconclusive_missed_percent {
        None => DEFAULT_INCONCLUSIVE_MISSED_PERCENT,
        Some(percent) => in_range(
            "verdict.inconclusive_missed_percent",
            percent,
            (0, 100),
            " (percent of the planned periods; 100: never inconclusive for missed periods)",
        )?,
    };
    Ok(Limits {
        max_send_call_ns: latency("verdict.max_send_call_us", section.max_send_call_us)?,
        max_delivery_ns: latency("verdict.max_delivery_us", section.max_delivery_us)?,
        max_over_threshold: section.max_over_threshold,
        max_expected_per_day_ns: latency(
            "verdict.max_expected_per_day_us",
            section.max_expected_per_day_us,
        )?,
        max_over_threshold_per_million: section.max_over_threshold_per_million,
        min_messages: section.min_messages,
        max_missed_periods: section.max_missed_periods,
        inconclusive_missed_percent: Some(inconclusive_missed_percent),
        require_preempt_rt: section.require_preempt_rt,
        require_rt_priority: section.require_rt_priority,
        require_isolated_cpus: section.require_isolated_cpus,
        require_noise_apart: section.require_noise_apart,
        development: section.development,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::parse;

    #[test]
    fn an_absent_section_sets_no_limit_but_keeps_the_missed_period_bound() {
        let limits = resolve_limits(&parse("x", "").unwrap().verdict).unwrap();
        assert_eq!(
            limits,
            Limits {
                inconclusive_missed_percent: Some(DEFAULT_INCONCLUSIVE_MISSED_PERCENT),
                ..Limits::default()
            }
        );
    }

    #[test]
    fn the_missed_period_bound_is_a_percent_and_more_than_100_is_refused() {
        let text = "[verdict]\ninconclusive_missed_percent = 20\n";
        let limits = resolve_limits(&parse("x", text).unwrap().verdict).unwrap();
        assert_eq!(limits.inconclusive_missed_percent, Some(20));
        let text = "[verdict]\ninconclusive_missed_percent = 101\n";
        let error = resolve_limits(&parse("x", text).unwrap().verdict).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("verdict.inconclusive_missed_percent"),
            "{error}"
        );
    }

    #[test]
    fn max_lost_may_only_spell_out_zero() {
        let zero = parse("x", "[verdict]\nmax_lost = 0\n").unwrap();
        let none = parse("x", "").unwrap();
        assert_eq!(
            resolve_limits(&zero.verdict).unwrap(),
            resolve_limits(&none.verdict).unwrap()
        );
        let some = parse("x", "[verdict]\nmax_lost = 3\n").unwrap();
        let text = resolve_limits(&some.verdict).unwrap_err().to_string();
        assert!(text.contains("verdict.max_lost"), "{text}");
        assert!(text.contains("a lost message always fails"), "{text}");
    }

    #[test]
    fn latency_limits_are_resolved_to_nanoseconds() {
        let text = "[verdict]\nmax_send_call_us = 50\nmax_delivery_us = 120\n\
                    max_over_threshold_per_million = 2\nrequire_preempt_rt = true\n";
        let limits = resolve_limits(&parse("x", text).unwrap().verdict).unwrap();
        assert_eq!(limits.max_send_call_ns, Some(50_000));
        assert_eq!(limits.max_delivery_ns, Some(120_000));
        assert_eq!(limits.max_over_threshold_per_million, Some(2));
        assert!(limits.require_preempt_rt);
        assert!(!limits.require_isolated_cpus);
    }

    #[test]
    fn max_missed_periods_is_a_count_and_zero_is_a_limit_not_absence() {
        let zero = parse("x", "[verdict]\nmax_missed_periods = 0\n").unwrap();
        assert_eq!(
            resolve_limits(&zero.verdict).unwrap().max_missed_periods,
            Some(0)
        );
        let absent = parse("x", "[verdict]\n").unwrap();
        assert_eq!(
            resolve_limits(&absent.verdict).unwrap().max_missed_periods,
            None
        );
    }

    #[test]
    fn a_zero_latency_limit_is_an_error_naming_the_key_and_the_range() {
        let profile = parse("x", "[verdict]\nmax_delivery_us = 0\n").unwrap();
        let text = resolve_limits(&profile.verdict).unwrap_err().to_string();
        assert!(text.contains("verdict.max_delivery_us"), "{text}");
        assert!(text.contains("1..=10000000"), "{text}");
    }

    #[test]
    fn a_rate_above_one_million_per_million_is_refused() {
        let profile = parse("x", "[verdict]\nmax_over_threshold_per_million = 2000000\n").unwrap();
        let text = resolve_limits(&profile.verdict).unwrap_err().to_string();
        assert!(text.contains("max_over_threshold_per_million"), "{text}");
    }

    #[test]
    fn an_unknown_verdict_key_is_an_error_naming_it() {
        let text = parse("x", "[verdict]\nmax_latency_us = 5\n")
            .unwrap_err()
            .to_string();
        assert!(text.contains("max_latency_us"), "{text}");
    }

    #[test]
    fn the_nightly_profile_sets_every_limit_and_requires_a_real_rt_setup() {
        let (_, profile) = crate::profile::load("nightly").unwrap();
        let limits = resolve_limits(&profile.verdict).unwrap();
        assert_eq!(limits.max_send_call_ns, Some(100_000));
        assert_eq!(limits.max_delivery_ns, Some(200_000));
        assert_eq!(limits.max_over_threshold_per_million, Some(1));
        assert_eq!(limits.min_messages, Some(1_000_000));
        assert_eq!(limits.max_missed_periods, Some(0));
        assert!(limits.require_preempt_rt && limits.require_rt_priority);
        assert!(limits.require_isolated_cpus);
    }

    #[test]
    fn every_builtin_profile_requires_rt_conditions_or_says_it_is_for_a_development_machine() {
        for name in crate::profile::builtin_names() {
            let (_, profile) = crate::profile::load(name).unwrap();
            let limits = resolve_limits(&profile.verdict).unwrap();
            let requires_rt = limits.require_preempt_rt
                && limits.require_rt_priority
                && limits.require_isolated_cpus
                && limits.require_noise_apart;
            assert!(
                requires_rt != limits.development,
                "{name}: a profile either requires what its RT figures need or is a development \
                 machine's, never both or neither"
            );
        }
        let development = |name| {
            let (_, profile) = crate::profile::load(name).unwrap();
            resolve_limits(&profile.verdict).unwrap().development
        };
        assert!(!development("jetson-orin-nano") && !development("nightly"));
        assert!(development("default") && development("ci"));
    }
}
