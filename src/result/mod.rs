//! What becomes of a run's figures: assembled from the workers' reports ([`build`]) and kept in
//! the result directory ([`store`]). The document's types are the records'
//! (`rtsoak_record::result`); merging, thinning and estimating are the analysis crate's.

#![forbid(unsafe_code)]

pub mod build;
pub mod store;

pub use build::{RunInputs, build_run};
