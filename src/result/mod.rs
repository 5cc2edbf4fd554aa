//! What becomes of a run's figures: assembled from the workers' reports ([`build`]), thinned
//! for a long result ([`coarsen`]), merged over rounds ([`merge`]), given tail estimates
//! ([`tail`]), and kept in the result directory ([`store`]). The document's types are the
//! records' (`rtsoak_record::result`).

#![forbid(unsafe_code)]

pub mod build;
pub mod coarsen;
pub mod merge;
pub mod store;
pub mod tail;

pub use build::{RunInputs, build_run};
