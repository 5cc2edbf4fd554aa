//! The sample that crossed `--break-on`.

use super::Series;
use serde::{Deserialize, Serialize};

/// The sample that crossed the `--break-on` limit, as the worker that saw it recorded it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BreakEvent {
    /// `send_call` (publisher) or `delivery` (subscriber).
    pub series: Series,
    /// Sequence number of the message.
    pub seq: u64,
    /// The sample, ns.
    pub value_ns: u64,
    /// When it was sent, ns after the measured phase began.
    pub at_ns: u64,
    /// The `--break-on` limit, ns.
    pub limit_ns: u64,
    /// Whether this worker's marker line reached the trace buffer (it does not when the other
    /// worker's break switched tracing off first).
    pub marker_written: bool,
    /// Whether tracing is off (`tracing_on` = 0 was written).
    pub trace_stopped: bool,
    /// True if the run carried on (`--break-on-continue`), false if it stopped there.
    pub continued: bool,
}
