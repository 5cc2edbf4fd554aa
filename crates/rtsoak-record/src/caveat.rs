//! A caveat: one condition a reader of the figures must know, with how much it changes what
//! they mean, so every renderer can put the few that matter first.

use serde::{Deserialize, Serialize};

use crate::CaveatKind;

/// How much a caveat changes what the figures mean. Ordered: the most serious first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Severity {
    /// Every figure means something else than it says: not a PREEMPT_RT kernel, no real-time
    /// priority, noise on the RT pair's own CPUs.
    Invalidates,
    /// Figures are shifted or noisier than on a tuned board: no isolation, interrupts or tasks
    /// on the RT CPUs, throttling, deep idle states, memory not locked, missed periods.
    Distorts,
    /// Worth knowing, changes little: RCU callbacks, SMT, an unexplained share, attribution.
    Detail,
}

impl Severity {
    /// The word renderers print before a caveat.
    pub fn word(self) -> &'static str {
        match self {
            Severity::Invalidates => "invalidates",
            Severity::Distorts => "distorts",
            Severity::Detail => "detail",
        }
    }
}

/// One caveat of a result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Caveat {
    /// How much it changes what the figures mean.
    pub severity: Severity,
    /// What kind of condition it is: caveats of one kind fold into one line.
    pub kind: CaveatKind,
    /// The sentence.
    pub text: String,
}

impl Caveat {
    /// A caveat of `kind` with `severity`.
    pub fn new(severity: Severity, kind: impl Into<CaveatKind>, text: impl Into<String>) -> Self {
        Caveat {
            severity,
            kind: kind.into(),
            text: text.into(),
        }
    }
}
