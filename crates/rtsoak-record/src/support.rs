//! Whether the running kernel can carry a transport, as a probe found out.

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

    /// Run a probe written as a sequence of `?` steps
    /// (`rtsoak_measure::transport::probe::require_opcodes`,
    /// `rtsoak_measure::transport::probe::trial`).
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
