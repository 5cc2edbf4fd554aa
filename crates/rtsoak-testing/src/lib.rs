//! Helpers for the crate's own unit tests; compiled only for them: result documents to render
//! and judge ([`fixture`]), independent readers of the exports ([`python_check`]), and the one
//! way a check says it was skipped ([`skip`], shared with the kernel-layer crate).

pub mod fixture;
pub mod python_check;

pub use crate::sys::testing::skip;
