//! Whether the running kernel can carry a transport, as a probe found out.

use nix::errno::Errno;
use serde::{Deserialize, Serialize};

/// Whether the running kernel can carry a transport.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Support {
    /// It works here.
    Supported,
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
    /// Unsupported because `probe` found `feature` missing.
    pub fn missing(feature: &str, probe: &str, errno: Option<Errno>) -> Self {
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
