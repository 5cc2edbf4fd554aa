//! What the actions did (`--on-threshold`, `--on-end`): each firing with the sample that fired
//! it, and each action with when it started, how long after the sample, and how it ended.
//! Absent from results that asked for no action, and from results written before actions
//! existed (every field here is read with its default then).

use serde::{Deserialize, Serialize};

use crate::Series;
use crate::action::ActionKind;

/// What the on-threshold actions of one run did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunActions {
    /// Samples of the watched series over the limit in this run, fired or not.
    #[serde(default)]
    pub crossed: u64,
    /// Firings a worker published that the coordinator never read (a later one replaced it
    /// before the coordinator woke): the samples that should have fired and did not.
    #[serde(default)]
    pub missed: u64,
    /// Each firing, in the order the coordinator read them.
    #[serde(default)]
    pub firings: Vec<Firing>,
}

/// One sample that fired the on-threshold actions, and what they did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Firing {
    /// The sample.
    pub sample: FiredSample,
    /// Each action, in the order done.
    pub actions: Vec<ActionRecord>,
}

/// The sample that fired, as its worker published it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FiredSample {
    /// `delivery` or `send_call`.
    pub series: Series,
    /// The run's transport.
    pub transport: String,
    /// The sample, ns.
    pub latency_ns: u64,
    /// Sequence number of its message.
    pub seq: u64,
    /// Its message's send time, ns after the measured phase began (as an outlier's `at_ns`).
    pub at_ns: u64,
    /// When the sample was complete (the delivery seen, the send call returned), ns after the
    /// measured phase began: where each action's `delay_ns` counts from.
    pub observed_at_ns: u64,
}

/// One action done, and how it went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionRecord {
    /// What it was.
    pub kind: ActionKind,
    /// Wall-clock start, RFC 3339 UTC.
    pub started_at: String,
    /// An on-threshold action: its start, ns after the measured phase began.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_ns: Option<u64>,
    /// An on-threshold action: from the sample's `observed_at_ns` to the action's start, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ns: Option<u64>,
    /// From its start to its end (an `exec`: to the command's exit, or its kill), ns.
    pub duration_ns: u64,
    /// How it ended.
    pub status: ActionStatus,
    /// `exec`: the command's pid; `signal`: the process signalled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<i32>,
    /// `exec`: the command's exit code, if it exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// `exec`: the signal that ended the command, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_signal: Option<i32>,
    /// `trace`: the saved copy of the trace buffer, a file name in the result directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// `trace`: the buffer held more than the copy keeps (256 MiB); the copy stops there.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// Why it failed or timed out, in words (foreign text in it escaped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// How an action ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionStatus {
    /// It did what it does (an `exec`: the command ran and ended by itself, whatever its exit
    /// code).
    Done,
    /// It could not be done (`error` says why).
    Failed,
    /// An `exec` still running at the timeout, stopped by rtsoak.
    TimedOut,
    /// Not started: the same `exec` of an earlier firing was still running (one at a time).
    Busy,
}
