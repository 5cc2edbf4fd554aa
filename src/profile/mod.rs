//! Profiles: TOML files in `profiles/`, embedded in the binary, plus command-line overrides,
//! resolved against the machine's CPU topology into a [`rtsoak_record::plan::RunPlan`].
//!
//! Owns: the profile's shape (every key, its default), loading a built-in or a file, and the
//! errors a user sees for a bad profile. Validation and CPU layout live in `resolve`. Never reads
//! `/proc` or `/sys`: the machine arrives as a [`CpuTopology`] filled by `sysinfo`.

mod action_spelling;
mod actions;
mod builtin;
mod error;
mod installed;
mod layout;
mod load;
mod noise;
mod overrides;
mod resolve;
mod sections;
mod transport_keys;
mod verdict;

pub use builtin::builtin_names;

pub use error::ProfileError;

pub use load::{load, parse};
pub(crate) use load::{named_text, names, toml_message};
pub use overrides::Overrides;
pub(crate) use overrides::{parse_cpus, parse_duration_ns, profile_values};
pub use resolve::resolve;
pub use sections::CpuTopology;
