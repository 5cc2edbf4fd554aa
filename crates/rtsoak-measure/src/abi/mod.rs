//! How the assumed ABIs of unmerged kernel patches are encoded: the SQEs and registrations of
//! `persistent-futex` and `doorbell`. The constants themselves, and why they are assumptions,
//! are the records' (`rtsoak_record::abi`), overridable from a profile's `[abi.*]` sections.

pub(crate) mod doorbell;
pub(crate) mod persistent_futex;
#[cfg(test)]
mod sqe;
