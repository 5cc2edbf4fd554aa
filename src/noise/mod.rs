//! The noise wing: everything that runs beside the RT pair to load the machine the way a robot's
//! other processes do. On the coordinator's side, [`manager`] starts, replaces and stops the
//! noise processes and [`fold`] adds up what each left behind. Inside a noise worker process,
//! [`burst`] runs SCHED_FIFO busy bursts and [`load`] runs the system and interrupt load
//! generators (its [`load::GENERATORS`] registry). Queue noise (lower-priority publishers and
//! subscribers on the RT pair's queue) runs the worker's own measuring loops.

#![forbid(unsafe_code)]

pub mod burst;
pub mod fold;
pub mod load;
pub mod manager;

pub use manager::{NoiseManager, find_program};
