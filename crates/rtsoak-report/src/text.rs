//! What the formats share: numbers as text in their units, a transport's dotted name, which
//! reasons of the verdict are about a transport, and grouping in the order things came. The
//! series every per-series format reports, in order, are [`rtsoak_record::Series::REPORTED`].

use std::collections::HashMap;
use std::hash::Hash;

use rtsoak_analysis::merge::TransportRuns;
use rtsoak_record::RingSetup;
use rtsoak_record::result::RunResult;

/// Whether noise ran during `run`, for the table's "noise" column.
pub(crate) fn noise_ran(run: &RunResult) -> &'static str {
    if run.noise.ran() { "on" } else { "off" }
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

/// `items` grouped by `key`: the groups in the order of their first item, each group's items in
/// theirs. Each group is found by its key in a map: a result read from a file may hold any
/// number of them.
pub(crate) fn grouped<T, K: Hash + Eq + Clone>(
    items: impl IntoIterator<Item = T>,
    key: impl Fn(&T) -> K,
) -> Vec<(K, Vec<T>)> {
    let mut groups: Vec<(K, Vec<T>)> = Vec::new();
    let mut index: HashMap<K, usize> = HashMap::new();
    for item in items {
        let key = key(&item);
        let at = *index.entry(key.clone()).or_insert_with(|| {
            groups.push((key, Vec::new()));
            groups.len() - 1
        });
        groups[at].1.push(item);
    }
    groups
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
