//! Profiles: TOML files in `profiles/`, embedded in the binary, plus command-line overrides,
//! resolved against the machine's CPU topology into a [`crate::plan::RunPlan`].
