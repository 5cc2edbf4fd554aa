//! Helpers for rtsoak's tests, and a dev-dependency only: result documents to render and judge
//! ([`fixture`]), independent readers of the exports ([`python_check`]), and the one way a check
//! says it was skipped ([`fn@skip`]). It hands out records only, so a crate whose own tests use it
//! (`rtsoak-analysis`) meets its types through `rtsoak-record`, never through itself.

#![forbid(unsafe_code)]

pub mod fixture;
pub mod python_check;
mod skip;

pub use skip::skip;
