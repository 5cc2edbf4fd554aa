//! Which check a system-check finding is of: a stable id, written in the result as it always
//! was (`kernel.preempt-rt`, `transport.futex`), and matched on as a value, never as text.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::transport::Name;

/// Declares the checks with a fixed id: each variant and its id, once.
macro_rules! check_ids {
    ($($variant:ident $id:literal,)*) => {
        /// The check a finding is of.
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum CheckId {
            $(
                #[doc = concat!("`", $id, "`")]
                $variant,
            )*
            /// `transport.<name>`: whether this kernel has the transport.
            Transport(Name),
            /// An id this build does not know (a result from a newer rtsoak), kept as written.
            Other(String),
        }

        impl CheckId {
            /// The checks with a fixed id, in declaration order.
            pub const FIXED: &'static [CheckId] = &[$(CheckId::$variant,)*];

            fn fixed_id(&self) -> Option<&'static str> {
                match self {
                    $(CheckId::$variant => Some($id),)*
                    CheckId::Transport(_) | CheckId::Other(_) => None,
                }
            }

            fn lookup_fixed(id: &str) -> Option<CheckId> {
                match id {
                    $($id => Some(CheckId::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

check_ids![
    KernelPreemptRt "kernel.preempt-rt",
    KernelIoUring "kernel.io-uring",
    SchedRtThrottling "sched.rt-throttling",
    ClockSource "clock.source",
    TimerMigration "timer.migration",
    VmCompactUnevictable "vm.compact-unevictable",
    CpuGovernor "cpu.governor",
    CpuIdle "cpu.idle",
    CpuSmt "cpu.smt",
    CpuVirtual "cpu.virtual",
    CpusIsolated "cpus.isolated",
    CpusNohzFull "cpus.nohz-full",
    CpusRcuNocbs "cpus.rcu-nocbs",
    IrqAffinity "irq.affinity",
    IrqIrqbalance "irq.irqbalance",
    TasksUser "tasks.user",
    TasksKernel "tasks.kernel",
    LayoutNoiseSharesRtCpu "layout.noise-shares-rt-cpu",
    PrivilegesRtPriority "privileges.rt-priority",
    PrivilegesMemlock "privileges.memlock",
    PrivilegesPidfdGetfd "privileges.pidfd-getfd",
];

/// The prefix of a transport check's id.
const TRANSPORT_PREFIX: &str = "transport.";

impl CheckId {
    /// The check `id` names; one this build does not know is kept as [`CheckId::Other`].
    pub fn parse(id: &str) -> CheckId {
        if let Some(fixed) = CheckId::lookup_fixed(id) {
            return fixed;
        }
        match id.strip_prefix(TRANSPORT_PREFIX).and_then(Name::lookup) {
            Some(name) => CheckId::Transport(name),
            None => CheckId::Other(id.to_string()),
        }
    }

    /// Whether this is a transport's check (`transport.<name>`).
    pub fn is_transport(&self) -> bool {
        matches!(self, CheckId::Transport(_))
    }
}

impl fmt::Display for CheckId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckId::Transport(name) => write!(f, "{TRANSPORT_PREFIX}{name}"),
            CheckId::Other(id) => f.write_str(id),
            fixed => f.write_str(fixed.fixed_id().unwrap_or_default()),
        }
    }
}

impl Serialize for CheckId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for CheckId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<CheckId, D::Error> {
        Ok(CheckId::parse(&String::deserialize(deserializer)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_id_reads_back_as_the_check_it_was_written_for() {
        let mut all: Vec<CheckId> = CheckId::FIXED.to_vec();
        all.extend(Name::all().into_iter().map(CheckId::Transport));
        all.push(CheckId::Other("gpu.clocks".into()));
        for id in all {
            let written = serde_json::to_string(&id).unwrap();
            assert_eq!(
                serde_json::from_str::<CheckId>(&written).unwrap(),
                id,
                "{written}"
            );
        }
    }

    #[test]
    fn ids_are_written_as_results_have_always_had_them() {
        assert_eq!(CheckId::KernelPreemptRt.to_string(), "kernel.preempt-rt");
        assert_eq!(
            CheckId::Transport(Name::MsgRing).to_string(),
            "transport.msg-ring"
        );
        assert_eq!(
            CheckId::parse("transport.no-such"),
            CheckId::Other("transport.no-such".into())
        );
    }

    #[test]
    fn every_fixed_id_is_its_own() {
        let mut ids: Vec<String> = CheckId::FIXED.iter().map(CheckId::to_string).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), CheckId::FIXED.len());
        assert!(ids.iter().all(|id| !id.starts_with(TRANSPORT_PREFIX)));
    }
}
