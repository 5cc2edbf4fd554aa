//! What a kernel image or initramfs was found to be when a campaign started: its SHA-256 and,
//! for a kernel, the release it says it is and where that was read.
//!
//! Owns: the record. Never reads an image (the binaries' crate does, through its checked
//! descriptor).

use serde::{Deserialize, Serialize};

/// Where an image's release was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReleaseSource {
    /// The x86 boot protocol's setup header.
    SetupHeader,
    /// The `Linux version` banner of an uncompressed image.
    Banner,
}

/// What was read of one image.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageFacts {
    /// SHA-256 of the whole file, hex.
    pub sha256: String,
    /// Its size, bytes.
    pub size_bytes: u64,
    /// The release it names, and where; absent where it names none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release: Option<String>,
    /// Where `release` was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release_source: Option<ReleaseSource>,
}
