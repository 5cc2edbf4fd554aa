//! What a run is a row of (its transport, and its ring setup where several were compared), and
//! the label, tag and pairing key made from it: made here, never parsed back.

use crate::RingSetup;

/// What a run is a row of: a transport, and the ring setup where several setups were compared
/// (each setup is then a row of its own). The result records it as two fields, `transport`
/// (the registry name) and `ring_setup_requested`; the label a table shows is made from them
/// here, never parsed back. Read from and written into a run by `RunKey::of` and
/// `RunKey::apply`, beside `RunResult`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunKey<'a> {
    /// Registry name of the transport.
    pub transport: &'a str,
    /// The ring setup, where several were compared.
    pub ring_setup: Option<RingSetup>,
}

impl<'a> RunKey<'a> {
    /// The run's row as tables show it: `eventfd`, or `eventfd (defer-taskrun)` in a
    /// ring-setup comparison.
    pub fn label(&self) -> String {
        match self.ring_setup {
            Some(setup) => format!("{} ({})", self.transport, setup.name()),
            None => self.transport.to_string(),
        }
    }

    /// The key as path parts without spaces, for tags and labels that must not hold one:
    /// `eventfd`, or `eventfd/defer-taskrun` in a ring-setup comparison. A transport name is a
    /// registry name (letters, digits, `-`); any other character a result read back from a
    /// file holds in it (a space, a comma, a slash, a control character) is a `_` here, so a
    /// tag stays one field of a line-oriented file.
    pub fn tag(&self) -> String {
        let transport = crate::text::restricted(self.transport, &['-', '_', '.']);
        match self.ring_setup {
            Some(setup) => format!("{transport}/{}", setup.name()),
            None => transport,
        }
    }

    /// What the run measured, for pairing runs of two results: the transport and the ring setup
    /// it asked for, the plan's own setup where the result compared only one (`plan_setup`). A
    /// plain comparison's `futex` and a ring-setup comparison's `futex (defer-taskrun)` are
    /// then the same pair when the plain one ran with `defer-taskrun`.
    pub fn measured(self, plan_setup: RingSetup) -> (&'a str, RingSetup) {
        (self.transport, self.ring_setup.unwrap_or(plan_setup))
    }
}
