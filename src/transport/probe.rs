//! The steps a transport's probe is made of: an opcode probe, and a trial call that must succeed.

use crate::record::Support;
use crate::sys::SysError;

/// A probe step: io_uring can be set up and supports every `(opcode, name)` in `needed`.
pub fn require_opcodes(needed: &[(u8, &str)]) -> Result<(), Support> {
    let ops = crate::sys::uring::OpcodeSupport::query()
        .map_err(|e| Support::missing("io_uring", "io_uring_setup", Some(e.errno)))?;
    match needed.iter().find(|(code, _)| !ops.has(*code)) {
        Some((_, name)) => Err(Support::missing(name, "io_uring opcode probe", None)),
        None => Ok(()),
    }
}

/// A probe step: a trial call of `feature` that must succeed.
pub fn trial(feature: &str, outcome: Result<(), SysError>) -> Result<(), Support> {
    outcome.map_err(|e| Support::missing(feature, e.call, Some(e.errno)))
}
