//! The `[actions]` section (`--on-threshold`, `--on-end` and their options): its keys and how
//! they resolve, with the flags, into the plan's [`ActionPlan`].
//!
//! Owns: the keys, their defaults and allowed values, and which flag wins. Never checks the
//! system (a program to run, a process to signal, tracefs): the coordinator's responder does,
//! before the first run.

use serde::{Deserialize, Serialize};

use super::action_spelling::parse_action;
use super::error::{FROM_CLI, ProfileError, invalid};
use super::overrides::Overrides;
use rtsoak_record::Series;
use rtsoak_record::action::{Action, ActionKind, ActionPlan};

/// An `exec` still running this long is stopped, unless `timeout_s` says otherwise.
const DEFAULT_TIMEOUT_S: u64 = 10;
/// The series watched unless `series` says otherwise.
const DEFAULT_SERIES: Series = Series::Delivery;

/// `[actions]`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct ActionSection {
    /// Actions done, in order, when a watched sample crosses the limit (as `--on-threshold`).
    pub(crate) on_threshold: Vec<String>,
    /// Actions done, in order, at the end (as `--on-end`).
    pub(crate) on_end: Vec<String>,
    /// The limit, microseconds; absent: `run.threshold_us`.
    limit_us: Option<u64>,
    /// The series watched; absent: `["delivery"]`.
    pub(crate) series: Option<Vec<Series>>,
    /// Fire on every crossing, at most once per this many milliseconds; absent: the first
    /// crossing of each run only.
    every_ms: Option<u64>,
    /// Seconds an `exec` may run before it is stopped; absent: 10.
    pub(crate) timeout_s: Option<u64>,
}

/// The plan's actions from `section` and the flags in `ov`, a flag winning over its key;
/// `threshold_ns` is the run's threshold, the limit unless one is given.
pub(super) fn resolve_actions(
    section: &ActionSection,
    ov: &Overrides,
    threshold_ns: u64,
) -> Result<ActionPlan, ProfileError> {
    let on_threshold = list(
        "actions.on_threshold",
        &section.on_threshold,
        &ov.on_threshold,
    )?;
    let on_end = list("actions.on_end", &section.on_end, &ov.on_end)?;
    let options = Options::of(section, ov)?;
    if on_threshold.is_empty()
        && let Some((key, value)) = options.threshold_option()
    {
        return Err(invalid(
            key,
            value,
            "an on-threshold action for it to apply to: add `--on-threshold ACTION` (or \
             `actions.on_threshold`), or drop it"
                .to_string(),
        ));
    }
    let execs = on_threshold
        .iter()
        .chain(&on_end)
        .any(|a| a.kind() == ActionKind::Exec);
    if let (false, Some(timeout_ns)) = (execs, options.timeout_ns) {
        return Err(invalid(
            "actions.timeout_s",
            format!("{} s", timeout_ns / 1_000_000_000),
            "an exec action for it to limit: add one, or drop the timeout".to_string(),
        ));
    }
    if on_threshold.is_empty() && on_end.is_empty() {
        return Ok(ActionPlan::default());
    }
    Ok(ActionPlan {
        on_threshold,
        on_end,
        limit_ns: options.limit_ns.unwrap_or(threshold_ns),
        series: options.series.unwrap_or_else(|| vec![DEFAULT_SERIES]),
        every_ns: options.every_ns,
        timeout_ns: options
            .timeout_ns
            .unwrap_or(DEFAULT_TIMEOUT_S * 1_000_000_000),
    })
}

/// The flag's actions if it was given, else the key's, parsed.
fn list(key: &str, spelled: &[String], flag: &[Action]) -> Result<Vec<Action>, ProfileError> {
    if !flag.is_empty() {
        return Ok(flag.to_vec());
    }
    spelled
        .iter()
        .map(|text| parse_action(text).map_err(|why| invalid(key, format!("{text:?}"), why)))
        .collect()
}

/// The options of the actions, each from its flag or its key, checked; `None`: not given.
struct Options {
    limit_ns: Option<u64>,
    series: Option<Vec<Series>>,
    every_ns: Option<u64>,
    timeout_ns: Option<u64>,
}

impl Options {
    fn of(section: &ActionSection, ov: &Overrides) -> Result<Options, ProfileError> {
        Ok(Options {
            limit_ns: ranged(
                "actions.limit_us",
                ov.on_threshold_limit_ns,
                section.limit_us,
                1_000,
                (1, 10_000_000, "microseconds"),
            )?,
            series: series(ov.on_threshold_series.as_ref(), section.series.as_ref())?,
            every_ns: ranged(
                "actions.every_ms",
                ov.on_threshold_every_ns,
                section.every_ms,
                1_000_000,
                (1, 3_600_000, "milliseconds"),
            )?,
            timeout_ns: ranged(
                "actions.timeout_s",
                ov.action_timeout_ns,
                section.timeout_s,
                1_000_000_000,
                (1, 3_600, "seconds"),
            )?,
        })
    }

    /// The first option given that only an on-threshold action uses, with its value.
    fn threshold_option(&self) -> Option<(&'static str, String)> {
        if let Some(ns) = self.limit_ns {
            return Some(("actions.limit_us", format!("{} us", ns as f64 / 1e3)));
        }
        if let Some(series) = &self.series {
            return Some(("actions.series", format!("{series:?}")));
        }
        self.every_ns
            .map(|ns| ("actions.every_ms", format!("{} ms", ns as f64 / 1e6)))
    }
}

/// A duration from its flag (ns) or its key (in units of `unit_ns`), within `low..=high` units.
fn ranged(
    key: &str,
    flag_ns: Option<u64>,
    key_value: Option<u64>,
    unit_ns: u64,
    (low, high, unit): (u64, u64, &str),
) -> Result<Option<u64>, ProfileError> {
    let allowed = || format!("{low}..={high} ({unit})");
    match (flag_ns, key_value) {
        (Some(ns), _) if (low * unit_ns..=high * unit_ns).contains(&ns) => Ok(Some(ns)),
        (Some(ns), _) => Err(invalid(
            key,
            format!("{}{FROM_CLI}", ns as f64 / unit_ns as f64),
            allowed(),
        )),
        (None, Some(value)) if (low..=high).contains(&value) => Ok(Some(value * unit_ns)),
        (None, Some(value)) => Err(invalid(key, value.to_string(), allowed())),
        (None, None) => Ok(None),
    }
}

/// The watched series from the flag or the key: `delivery`, `send_call`, or both.
fn series(
    flag: Option<&Vec<Series>>,
    key: Option<&Vec<Series>>,
) -> Result<Option<Vec<Series>>, ProfileError> {
    let (given, source) = match (flag, key) {
        (Some(flag), _) => (flag, FROM_CLI),
        (None, Some(key)) => (key, ""),
        (None, None) => return Ok(None),
    };
    let allowed = "`delivery`, `send_call` or both: the RT pair's headline series".to_string();
    let mut watched = Vec::new();
    for series in given {
        if !matches!(series, Series::Delivery | Series::SendCall) {
            return Err(invalid(
                "actions.series",
                format!("{series}{source}"),
                allowed,
            ));
        }
        if !watched.contains(series) {
            watched.push(*series);
        }
    }
    if watched.is_empty() {
        return Err(invalid("actions.series", format!("[]{source}"), allowed));
    }
    Ok(Some(watched))
}

/// `--on-threshold-series`: `delivery`, `send-call` (or `send_call`).
pub(crate) fn parse_series(text: &str) -> Result<Series, String> {
    match text {
        "delivery" => Ok(Series::Delivery),
        "send-call" | "send_call" => Ok(Series::SendCall),
        _ => Err(format!(
            "`{text}` is not a watched series: give `delivery`, `send-call` or both \
             (`delivery,send-call`)"
        )),
    }
}

#[cfg(test)]
#[path = "actions_tests.rs"]
mod tests;
