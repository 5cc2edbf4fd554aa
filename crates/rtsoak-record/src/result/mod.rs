//! The result document: one JSON file per invocation (`run` or `compare`), schema-versioned,
//! holding the resolved plan, the host facts, the support matrix and, per transport run, the
//! figures together with the encoded histograms they were derived from, so any figure can be
//! recomputed later; and what judging it found (explanation, decision, verdict, baseline diff).
//! Documented field by field in `docs/result-schema.md`.

pub mod actions;
pub mod cause;
pub mod decision;
pub mod diff;
mod doc;
pub mod explain;
mod lock_kind;
pub mod noise_setup;
mod run_key;
pub mod verdict;

pub use doc::{
    ExternalActivity, Interval, IntervalSeries, NoiseActivity, NoiseDeath, QueueNoiseActivity,
    ResultDoc, RunResult, RunStatus, SCHEMA_VERSION, SeriesResult, Tool, WorkerRecord,
};
pub use noise_setup::{NoiseKind, NoiseSetup};
pub use run_key::RunKey;
