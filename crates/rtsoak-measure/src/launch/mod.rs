//! Launching workers: the spec each worker of a run gets from the plan ([`specs`]) and the
//! worker process started with its memfds and frame ring ([`mod@spawn`]), from the worker binary
//! beside this one ([`worker_binary`]). Shared by the coordinator (the RT pair) and the noise
//! wing (every noise process). The external noise command is started through its own init
//! ([`external`]), from the program found and checked once ([`program`]).

pub(crate) mod external;
pub mod program;
mod spawn;
mod specs;
pub mod worker_binary;

pub(crate) use spawn::{Spawned, ring_for, spawn, spawn_with_bell};
pub(crate) use specs::{burst_spec, load_spec, queue_noise_spec, rt_spec};
