//! Actions on a threshold and at the end (`--on-threshold`, `--on-end`), in the spirit of rtla's:
//! what the coordinator does when a sample of a watched series crosses the on-threshold limit,
//! and once the invocation's runs are over. The RT loops only publish the sample; the
//! coordinator acts (`docs/actions.md`).
//!
//! Owns: the shape of an action and of when actions fire, as the plan records them. What each
//! action did is the result's (`result::actions`).

use serde::{Deserialize, Serialize};

use crate::Series;

/// One action, as the plan holds it (parsed from `trace`, `signal=NUM|NAME,pid=PID`,
/// `exec=ARGV`, `continue`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Action {
    /// Write a marker naming the sample into the ftrace buffer (tracefs, top level: the user's
    /// own tracing setup), switch tracing off, save a copy of the buffer in the result
    /// directory, and switch tracing back on if it was on.
    Trace,
    /// Send `signal` to the process `pid` (through a pidfd opened before the first run, so a
    /// recycled pid is never signalled).
    Signal {
        /// The signal's number.
        signal: i32,
        /// The process, as given (`pid=parent` is recorded as the parent's pid).
        pid: i32,
    },
    /// Run `argv` (its program first), never through a shell.
    Exec {
        /// The command and its arguments.
        argv: Vec<String>,
    },
    /// Record the firing, and go on.
    Continue,
}

impl Action {
    /// What kind of action this is.
    pub fn kind(&self) -> ActionKind {
        match self {
            Action::Trace => ActionKind::Trace,
            Action::Signal { .. } => ActionKind::Signal,
            Action::Exec { .. } => ActionKind::Exec,
            Action::Continue => ActionKind::Continue,
        }
    }
}

/// The kind of an action, its stable id in results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionKind {
    /// [`Action::Trace`].
    Trace,
    /// [`Action::Signal`].
    Signal,
    /// [`Action::Exec`].
    Exec,
    /// [`Action::Continue`].
    Continue,
}

impl ActionKind {
    /// The id (`trace`), as the command line and the result spell it.
    pub const fn name(self) -> &'static str {
        match self {
            ActionKind::Trace => "trace",
            ActionKind::Signal => "signal",
            ActionKind::Exec => "exec",
            ActionKind::Continue => "continue",
        }
    }
}

/// Every action of an invocation and when its on-threshold actions fire. Resolved from the
/// profile's `[actions]` and the flags: every duration in ns.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionPlan {
    /// `--on-threshold`: done in this order for each firing.
    #[serde(default)]
    pub on_threshold: Vec<Action>,
    /// `--on-end`: done in this order once, when the invocation's runs are over and its result
    /// is saved.
    #[serde(default)]
    pub on_end: Vec<Action>,
    /// A sample of a watched series longer than this fires the on-threshold actions (the
    /// run's threshold unless `--on-threshold-limit` says otherwise).
    #[serde(default)]
    pub limit_ns: u64,
    /// The series watched: `delivery` (the RT subscriber's), `send_call` (the RT publisher's).
    #[serde(default)]
    pub series: Vec<Series>,
    /// `None`: only the first sample over the limit in each run fires. `Some`: every one does,
    /// at most one per this many ns in each watched series (`--on-threshold-every`).
    #[serde(default)]
    pub every_ns: Option<u64>,
    /// An `exec` still running this long after it started is stopped (SIGTERM to its process
    /// tree, SIGKILL a grace time later) and recorded as timed out.
    #[serde(default)]
    pub timeout_ns: u64,
}

impl ActionPlan {
    /// No action at all: nothing watches, nothing fires.
    pub fn is_off(&self) -> bool {
        self.on_threshold.is_empty() && self.on_end.is_empty()
    }

    /// Whether the RT worker recording `series` watches it for the on-threshold actions.
    pub fn watches(&self, series: Series) -> bool {
        !self.on_threshold.is_empty() && self.series.contains(&series)
    }

    /// Every action, on-threshold first.
    pub fn all(&self) -> impl Iterator<Item = &Action> {
        self.on_threshold.iter().chain(&self.on_end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_action_is_written_with_its_kind_and_its_own_fields() {
        let signal = Action::Signal {
            signal: 10,
            pid: 42,
        };
        let json = serde_json::to_value(&signal).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"kind": "signal", "signal": 10, "pid": 42})
        );
        let back: Action = serde_json::from_value(json).unwrap();
        assert_eq!(back, signal);
        assert_eq!(back.kind().name(), "signal");
        assert_eq!(
            serde_json::to_value(Action::Continue).unwrap(),
            serde_json::json!({"kind": "continue"})
        );
    }

    #[test]
    fn only_the_watched_series_of_a_plan_with_on_threshold_actions_is_watched() {
        let mut plan = ActionPlan {
            on_end: vec![Action::Trace],
            series: vec![Series::Delivery],
            ..ActionPlan::default()
        };
        assert!(!plan.is_off());
        assert!(!plan.watches(Series::Delivery), "no on-threshold action");
        plan.on_threshold.push(Action::Continue);
        assert!(plan.watches(Series::Delivery));
        assert!(!plan.watches(Series::SendCall));
        assert!(ActionPlan::default().is_off());
    }
}
