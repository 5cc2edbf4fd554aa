//! What kind of condition a caveat is: a stable id, written in the result as it always was
//! (`worker.policy`, or the system check's finding id such as `kernel.preempt-rt`), and matched
//! on as a value, never as text.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::CheckId;

/// Declares the kinds of rtsoak's own (not a finding of the system check): each variant and its
/// id, once.
macro_rules! caveat_kinds {
    ($($(#[$doc:meta])* $variant:ident $id:literal,)*) => {
        /// What kind of condition a caveat is: caveats of one kind fold into one line.
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum CaveatKind {
            $($(#[$doc])* $variant,)*
            /// A condition the system check found, by its finding id; never [`CheckId::Other`]
            /// (an id this build does not know is [`CaveatKind::Unknown`]).
            Check(CheckId),
            /// An id this build does not know (a result from another build), kept as written:
            /// shown as any caveat is, never taken for a kind this build knows.
            Unknown(String),
        }

        impl CaveatKind {
            /// The kinds of rtsoak's own, in declaration order.
            pub const OWN: &'static [CaveatKind] = &[$(CaveatKind::$variant,)*];

            fn own_id(&self) -> Option<&'static str> {
                match self {
                    $(CaveatKind::$variant => Some($id),)*
                    CaveatKind::Check(_) | CaveatKind::Unknown(_) => None,
                }
            }

            fn lookup_own(id: &str) -> Option<CaveatKind> {
                match id {
                    $($id => Some(CaveatKind::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

caveat_kinds![
    /// An RT worker did not get the policy or priority asked for.
    WorkerPolicy "worker.policy",
    /// An RT worker's memory was not (all) locked, or locking it left a note.
    WorkerMemory "worker.memory",
    /// An RT worker had io-wq worker threads while measuring.
    WorkerIoWq "worker.io-wq",
    /// Noise did not get what the profile asked for.
    NoiseSetup "noise.setup",
    /// The coordinator (and the explainer's trace reader) ran on an RT CPU.
    CoordinatorSharesRtCpu "layout.coordinator-shares-rt-cpu",
    /// A note the plan's layout left (an RT priority of 99, bursts on the RT CPUs, ...).
    Layout "layout",
    /// The explainer was off.
    ExplainOff "explain.off",
    /// The explainer had no kernel trace.
    ExplainUnavailable "explain.unavailable",
    /// Periods were missed.
    MissedPeriods "measure.missed-periods",
    /// The RT subscriber cannot tell the RT publisher's own wake from other wakeups.
    OwnWake "measure.own-wake",
    /// A caveat of a version 1 result, which held the sentence alone.
    Version1 "version-1",
];

impl CaveatKind {
    /// The kind `id` names; one this build does not know is kept as [`CaveatKind::Unknown`].
    fn parse(id: &str) -> CaveatKind {
        CaveatKind::lookup_own(id).unwrap_or_else(|| CheckId::parse(id).into())
    }
}

impl From<CheckId> for CaveatKind {
    fn from(id: CheckId) -> CaveatKind {
        match id {
            CheckId::Other(id) => CaveatKind::Unknown(id),
            known => CaveatKind::Check(known),
        }
    }
}

impl fmt::Display for CaveatKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CaveatKind::Check(id) => write!(f, "{id}"),
            CaveatKind::Unknown(id) => f.write_str(id),
            own => f.write_str(own.own_id().unwrap_or_default()),
        }
    }
}

impl Serialize for CaveatKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for CaveatKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<CaveatKind, D::Error> {
        Ok(CaveatKind::parse(&String::deserialize(deserializer)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::Name;

    /// Every kind with the id results have always stored it as.
    fn every_kind() -> Vec<(CaveatKind, String)> {
        let own = [
            "worker.policy",
            "worker.memory",
            "worker.io-wq",
            "noise.setup",
            "layout.coordinator-shares-rt-cpu",
            "layout",
            "explain.off",
            "explain.unavailable",
            "measure.missed-periods",
            "measure.own-wake",
            "version-1",
        ];
        assert_eq!(CaveatKind::OWN.len(), own.len(), "one stored id per kind");
        let mut all: Vec<(CaveatKind, String)> = CaveatKind::OWN
            .iter()
            .cloned()
            .zip(own.map(String::from))
            .collect();
        let checks = CheckId::FIXED
            .iter()
            .cloned()
            .chain(Name::all().into_iter().map(CheckId::Transport));
        all.extend(checks.map(|id| (CaveatKind::Check(id.clone()), id.to_string())));
        all
    }

    #[test]
    fn every_kind_is_written_as_its_stored_id_and_reads_back_as_itself() {
        for (kind, id) in every_kind() {
            let written = serde_json::to_string(&kind).unwrap();
            assert_eq!(written, format!("\"{id}\""));
            assert_eq!(serde_json::from_str::<CaveatKind>(&written).unwrap(), kind);
        }
        assert_eq!(
            CaveatKind::Check(CheckId::KernelPreemptRt).to_string(),
            "kernel.preempt-rt"
        );
    }

    #[test]
    fn an_id_this_build_does_not_know_is_kept_as_written() {
        for id in [
            "gpu.clocks",
            "transport.no-such",
            "worker",
            "Worker.Policy",
            "",
        ] {
            let kind: CaveatKind = serde_json::from_str(&format!("\"{id}\"")).unwrap();
            assert_eq!(kind, CaveatKind::Unknown(id.to_string()));
            assert_eq!(serde_json::to_string(&kind).unwrap(), format!("\"{id}\""));
        }
        assert_eq!(
            CaveatKind::from(CheckId::Other("gpu.clocks".into())),
            CaveatKind::Unknown("gpu.clocks".into()),
            "a finding this build does not know is the same unknown kind once read back"
        );
    }

    #[test]
    fn no_own_id_is_a_check_id() {
        for kind in CaveatKind::OWN {
            let id = kind.to_string();
            assert!(!id.is_empty());
            assert!(
                matches!(CheckId::parse(&id), CheckId::Other(_)),
                "{id} is a check's"
            );
        }
    }
}
