//! The `futex` transport's own settings: profile key `rt.futex_wake`.

use serde::{Deserialize, Serialize};

/// How the `futex` transport's publisher issues its wake.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum FutexWake {
    /// `futex(2)` `FUTEX_WAKE` (shared, not private: the word lives in a memfd mapping).
    #[default]
    #[cfg_attr(feature = "clap", value(help = "futex(2) FUTEX_WAKE"))]
    Syscall,
    /// `IORING_OP_FUTEX_WAKE` submitted from the publisher's own ring.
    #[cfg_attr(
        feature = "clap",
        value(help = "IORING_OP_FUTEX_WAKE from the publisher's ring")
    )]
    IoUring,
}

/// The `futex` transport's own settings.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct FutexSettings {
    /// How the publisher wakes.
    pub futex_wake: FutexWake,
}
