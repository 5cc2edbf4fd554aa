//! Whether the running kernel can carry a transport, as a probe found out.

use nix::errno::Errno;
use serde::{Deserialize, Serialize};

/// Whether the running kernel can carry a transport.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Support {
    /// It works here.
    Supported,
    /// Its probe was refused by a privilege or a limit (`EPERM`, `EACCES`, or `ENOMEM` under a
    /// memory-lock limit), so whether the kernel carries it is unknown: a status of its own,
    /// never "unsupported".
    NotPermitted {
        /// The kernel feature the probe tried (`io_uring`).
        feature: String,
        /// The call that was refused.
        probe: String,
        /// The errno it got.
        errno: String,
        /// What to do about it.
        fix: String,
    },
    /// It does not, and why.
    Unsupported {
        /// The kernel feature that is missing (`IORING_OP_FUTEX_WAIT`).
        feature: String,
        /// How that was found out (`io_uring opcode probe`, `trial pidfd_getfd`).
        probe: String,
        /// The errno the probe got, if it was a failed call.
        errno: Option<String>,
    },
}

impl Support {
    /// Unsupported because `probe` found `feature` missing, or not permitted where the errno
    /// says a privilege or a limit refused the probe ([`refusal`]).
    pub fn missing(feature: &str, probe: &str, errno: Option<Errno>) -> Self {
        if let Some(fix) = errno.and_then(refusal) {
            return Support::NotPermitted {
                feature: feature.to_string(),
                probe: probe.to_string(),
                errno: errno.map(|e| e.to_string()).unwrap_or_default(),
                fix,
            };
        }
        Support::Unsupported {
            feature: feature.to_string(),
            probe: probe.to_string(),
            errno: errno.map(|e| e.to_string()),
        }
    }

    /// One line for tables: `supported`, or the reason.
    pub fn reason(&self) -> String {
        match self {
            Support::Supported => "supported".to_string(),
            Support::NotPermitted {
                feature,
                probe,
                errno,
                fix,
            } => format!("not permitted: {probe} ({feature}) failed with {errno}; {fix}"),
            Support::Unsupported {
                feature,
                probe,
                errno,
            } => match errno {
                Some(errno) => format!("needs {feature}: {probe} failed with {errno}"),
                None => format!("needs {feature}: {probe} says this kernel lacks it"),
            },
        }
    }

    /// True if supported.
    pub fn is_supported(&self) -> bool {
        matches!(self, Support::Supported)
    }

    /// The one word tables show: `supported`, `unsupported` or `not permitted`.
    pub fn word(&self) -> &'static str {
        match self {
            Support::Supported => "supported",
            Support::NotPermitted { .. } => "not permitted",
            Support::Unsupported { .. } => "unsupported",
        }
    }

    /// Run a probe written as a sequence of `?` steps ([`require_opcodes`], [`trial`]).
    pub fn from_steps(steps: impl FnOnce() -> Result<(), Support>) -> Self {
        match steps() {
            Ok(()) => Support::Supported,
            Err(unsupported) => unsupported,
        }
    }
}

/// Whether one transport works on this kernel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransportSupport {
    /// Registry name.
    pub transport: String,
    /// Probe outcome.
    pub support: Support,
}

/// Why an errno of a probe is a refusal rather than a missing feature, and what to do: `EPERM`
/// and `EACCES` always are (a seccomp filter, `kernel.io_uring_disabled`, a capability);
/// `ENOMEM` is when this process has a finite memory-lock limit and no `CAP_IPC_LOCK`, since
/// io_uring charges registered and pinned memory to `RLIMIT_MEMLOCK` and fails with `ENOMEM`
/// past it. `None`: the errno says the kernel lacks the feature.
pub fn refusal(errno: Errno) -> Option<String> {
    match errno {
        Errno::EPERM | Errno::EACCES => Some(
            "a privilege is missing (run as root, or check kernel.io_uring_disabled and any \
             seccomp filter)"
                .to_string(),
        ),
        Errno::ENOMEM => memlock_limit_bytes()
            .filter(|_| !has_cap_ipc_lock())
            .map(|limit| {
                format!(
                    "probably the memory-lock limit ({} KiB): raise it (ulimit -l, \
                     LimitMEMLOCK=) or run as root",
                    limit / 1024
                )
            }),
        _ => None,
    }
}

/// This process's `RLIMIT_MEMLOCK`, if finite.
fn memlock_limit_bytes() -> Option<u64> {
    use nix::sys::resource::{RLIM_INFINITY, Resource, getrlimit};
    getrlimit(Resource::RLIMIT_MEMLOCK)
        .ok()
        .map(|(soft, _)| soft)
        .filter(|soft| *soft != RLIM_INFINITY)
}

/// Whether this process holds `CAP_IPC_LOCK` (bit 14 of `CapEff` in `/proc/self/status`),
/// which lifts the memory-lock limit.
fn has_cap_ipc_lock() -> bool {
    const CAP_IPC_LOCK: u32 = 14;
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let hex = status.lines().find_map(|l| l.strip_prefix("CapEff:"))?;
            u64::from_str_radix(hex.trim(), 16).ok()
        })
        .is_some_and(|caps| caps & (1 << CAP_IPC_LOCK) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_privilege_refusal_is_not_permitted_with_a_fix_and_a_missing_opcode_is_unsupported() {
        let refused = Support::missing("io_uring", "io_uring_setup", Some(Errno::EPERM));
        assert_eq!(refused.word(), "not permitted");
        let reason = refused.reason();
        assert!(
            reason.starts_with("not permitted: io_uring_setup"),
            "{reason}"
        );
        assert!(reason.contains("run as root"), "{reason}");
        let missing = Support::missing("IORING_OP_FUTEX_WAIT", "io_uring opcode probe", None);
        assert_eq!(missing.word(), "unsupported");
        let invalid = Support::missing("io_uring", "io_uring_register", Some(Errno::EINVAL));
        assert_eq!(invalid.word(), "unsupported");
        assert!(!refused.is_supported() && !missing.is_supported());
    }
}
