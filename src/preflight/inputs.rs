//! What every check function is given (the host, the RT CPUs, the facts read for them, the
//! privileges and the transport support), and the wording they share.

pub(crate) use rtsoak_analysis::judge::cpus_named;
use rtsoak_record::{CheckFacts, HostFacts, Privileges, RtCpus, TransportSupport};

/// Everything a single check function may look at.
pub(crate) struct Inputs<'a> {
    pub(crate) host: &'a HostFacts,
    pub(crate) cpus: &'a RtCpus,
    pub(crate) facts: &'a CheckFacts,
    pub(crate) privileges: &'a Privileges,
    pub(crate) support: &'a [TransportSupport],
}

impl Inputs<'_> {
    /// CPUs to move work to: online, outside the RT pair, not isolated (or, when that leaves
    /// none, just outside the RT pair). Empty on a machine with only the RT pair's CPUs.
    pub(super) fn housekeeping(&self) -> Vec<usize> {
        let pair = self.cpus.pair();
        let outside: Vec<usize> = self
            .host
            .online
            .iter()
            .copied()
            .filter(|cpu| !pair.contains(cpu))
            .collect();
        let not_isolated: Vec<usize> = outside
            .iter()
            .copied()
            .filter(|cpu| !self.host.isolated.contains(cpu))
            .collect();
        if not_isolated.is_empty() {
            outside
        } else {
            not_isolated
        }
    }
}
