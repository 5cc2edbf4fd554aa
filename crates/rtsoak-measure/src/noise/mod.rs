//! The worker side of the noise: what runs inside a noise worker process beside the RT pair, to
//! load the machine the way a robot's other processes do. [`burst`] runs SCHED_FIFO busy bursts
//! and [`load`] runs the system and interrupt load generators (its [`load::GENERATORS`]
//! registry). Queue noise (lower-priority publishers and subscribers on the RT pair's queue) runs
//! the worker's own measuring loops.
//!
//! Owns: the noise workers' loops and what they report (`record` types). Never imports a result
//! type: the coordinator's side (starting, replacing and folding the noise processes) is
//! `coordinator::noise`.

pub(crate) mod burst;
pub(crate) mod external_init;
pub(crate) mod load;
