//! Profiles: TOML files in `profiles/`, embedded in the binary, plus command-line overrides,
//! resolved against the machine's CPU topology into a [`rtsoak_record::plan::RunPlan`].
//!
//! Owns: the profile's shape (every key, its default), loading a built-in or a file, and the
//! errors a user sees for a bad profile. Validation and CPU layout live in `resolve`. Never reads
//! `/proc` or `/sys`: the machine arrives as a [`CpuTopology`] filled by `sysinfo`.

#![forbid(unsafe_code)]

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

pub use builtin::{builtin_names, builtin_text};
pub use error::ProfileError;
pub use installed::DIR as INSTALLED_DIR;
pub use load::{load, named_text, names, parse};
pub use noise::{BurstSection, LoadSection, NoiseSection, QueueNoiseSection};
pub use overrides::{Overrides, parse_break_on_ns, parse_cpus, parse_duration_ns, profile_values};
pub use resolve::resolve;
pub use sections::{
    AUTO, CpuChoice, CpuListChoice, CpuSection, CpuTopology, Profile, RingSetupChoice, RtSection,
    RunSection, SystemSection,
};
pub use verdict::VerdictSection;
