//! The spike explainer's analysis: a kernel trace read into the RT tasks' waits ([`event`],
//! [`episodes`], [`role`]), and each over-threshold sample laid over them ([`blame`]). Reading
//! the trace is the measure crate's; what it finds is recorded as
//! `rtsoak_record::result::explain`.

pub mod blame;
pub mod episodes;
pub mod event;
mod role;
