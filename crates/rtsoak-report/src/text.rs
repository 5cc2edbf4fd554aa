//! What the formats share: numbers as text in their units, a transport's dotted name, and which
//! reasons of the verdict are about a transport. The series every per-series format reports, in
//! order, are [`rtsoak_record::Series::REPORTED`].

use rtsoak_analysis::merge::TransportRuns;
use rtsoak_record::RingSetup;
use rtsoak_record::result::RunResult;

/// Whether noise ran during `run`, for the table's "noise" column.
pub(crate) fn noise_ran(run: &RunResult) -> &'static str {
    if run.noise.ran() { "on" } else { "off" }
}

/// `text` with anything but ASCII letters, digits and the characters of `kept` replaced by `_`:
/// a name from a result file that becomes part of a file name, a test id or a label, so that a
/// hand-edited result cannot name a path or break the format.
pub(crate) fn restricted(text: &str, kept: &[char]) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || kept.contains(&c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `rtsoak.futex`, or `rtsoak.futex.defer-taskrun` in a ring-setup comparison: a transport's
/// name in the dotted namespaces of CI formats (a JUnit classname, a KCIDB test path).
pub(crate) fn dotted_name(t: &TransportRuns<'_>) -> String {
    match t.ring_setup {
        Some(setup) => format!("rtsoak.{}.{}", t.transport, setup.name()),
        None => format!("rtsoak.{}", t.transport),
    }
}

/// Whether a reason of the verdict (a failure, a breach, an inconclusive finding) is about `t`:
/// it names `t`'s transport, and `t`'s ring setup where it names one.
pub(crate) fn is_about(
    t: &TransportRuns<'_>,
    transport: &Option<String>,
    ring_setup: Option<RingSetup>,
) -> bool {
    transport.as_deref() == Some(t.transport)
        && (ring_setup.is_none() || ring_setup == t.ring_setup)
}

/// Nanoseconds as microseconds with one decimal (`12.3`).
pub(crate) fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1e3)
}

/// Nanoseconds as seconds, without a fraction when whole (`60`, `0.5`).
pub(crate) fn seconds(ns: u64) -> String {
    if ns.is_multiple_of(1_000_000_000) {
        (ns / 1_000_000_000).to_string()
    } else {
        format!("{}", ns as f64 / 1e9)
    }
}
