//! Judging a result: what its figures are worth ([`fn@caveats`]), whether it passes its limits
//! ([`fn@verdict`]) and measured what it was asked ([`measured`]), whether it regressed against
//! a baseline ([`fn@diff`]), and the exact rate test both comparisons rest on ([`rates`]). Pure
//! functions over result documents: they never measure, print, read files or choose exit codes;
//! what they return is recorded in the result (`result::verdict`, `result::diff`) or shown by
//! the exports.

pub mod caveats;
pub mod decision;
mod diff;
mod diff_causes;
pub mod floor;
mod measured;
pub mod rates;
mod sharing;
mod tail_limit;
mod validity;
mod verdict;

pub use caveats::{caveats, ranked as ranked_caveats};
pub use diff::diff;
pub use sharing::cpus_named;
pub use verdict::{stored_or_judged, verdict};
