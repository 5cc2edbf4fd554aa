//! The steps a transport's probe is made of (an opcode probe, and a trial call that must
//! succeed), and what a failed step says: missing, or refused by a privilege or a limit.

use nix::errno::Errno;

use rtsoak_record::Support;
use rtsoak_sys::SysError;

/// A probe step: io_uring can be set up and supports every `(opcode, name)` in `needed`.
pub(crate) fn require_opcodes(needed: &[(u8, &str)]) -> Result<(), Support> {
    let ops = rtsoak_sys::uring::OpcodeSupport::query()
        .map_err(|e| missing("io_uring", "io_uring_setup", Some(e.errno)))?;
    match needed.iter().find(|(code, _)| !ops.has(*code)) {
        Some((_, name)) => Err(missing(name, "io_uring opcode probe", None)),
        None => Ok(()),
    }
}

/// A probe step: a trial call of `feature` that must succeed (what it gives, for a next step).
pub(crate) fn trial<T>(feature: &str, outcome: Result<T, SysError>) -> Result<T, Support> {
    outcome.map_err(|e| missing(feature, e.call, Some(e.errno)))
}

/// Unsupported because `probe` found `feature` missing, or not permitted where the errno
/// says a privilege or a limit refused the probe ([`refusal`]).
pub(crate) fn missing(feature: &str, probe: &str, errno: Option<Errno>) -> Support {
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

/// Why an errno of a probe is a refusal rather than a missing feature, and what to do: `EPERM`
/// and `EACCES` always are (a seccomp filter, `kernel.io_uring_disabled`, a capability);
/// `ENOMEM` is when this process has a finite memory-lock limit and no `CAP_IPC_LOCK`, since
/// io_uring charges registered and pinned memory to `RLIMIT_MEMLOCK` and fails with `ENOMEM`
/// past it. `None`: the errno says the kernel lacks the feature.
pub(super) fn refusal(errno: Errno) -> Option<String> {
    match errno {
        Errno::EPERM | Errno::EACCES => Some(
            "a privilege is missing (run as root, or check kernel.io_uring_disabled and any \
             seccomp filter)"
                .to_string(),
        ),
        Errno::ENOMEM => rtsoak_sys::memlock::memlock_limit_bytes()
            .filter(|_| !rtsoak_sys::memlock::has_ipc_lock())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_privilege_refusal_is_not_permitted_with_a_fix_and_a_missing_opcode_is_unsupported() {
        let refused = missing("io_uring", "io_uring_setup", Some(Errno::EPERM));
        assert_eq!(refused.word(), "not permitted");
        let reason = refused.reason();
        assert!(
            reason.starts_with("not permitted: io_uring_setup"),
            "{reason}"
        );
        assert!(reason.contains("run as root"), "{reason}");
        let lacking = missing("IORING_OP_FUTEX_WAIT", "io_uring opcode probe", None);
        assert_eq!(lacking.word(), "unsupported");
        let invalid = missing("io_uring", "io_uring_register", Some(Errno::EINVAL));
        assert_eq!(invalid.word(), "unsupported");
        assert!(!refused.is_supported() && !lacking.is_supported());
    }
}
