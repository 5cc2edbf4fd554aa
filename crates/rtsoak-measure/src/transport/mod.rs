//! Transports: the mechanisms a publisher uses to wake a subscriber's io_uring event loop.
//!
//! A transport supplies only the mechanism: how to probe the kernel for it ([`Transport`]), how
//! a publisher wakes one target ([`Waker`]), and how a subscriber arms its wait and reads a
//! completion ([`Waiter`]), both built from the shared region and the worker's spec ([`Env`],
//! [`Mechanism`]). A transport knows nothing of the loops that drive it: the worker takes every
//! timestamp, so every transport is measured by the same code. The worker names a transport
//! once ([`visit`]) and gets its concrete waker and waiter types back, so the loops are
//! monomorphised for them (no dynamic dispatch inside a measured loop).
//!
//! Adding a transport: its id (and its settings type, if it has one) on one line of the records'
//! `transport` list, then one file here plus one line in the `registry!` call below, which
//! declares the file's module too. The registry maps every records' [`Name`] to its mechanism
//! by an exhaustive `match`, so a transport missing from either list does not compile
//! (`tests/registry.rs` checks that every file here is registered). The flags that override a
//! transport's settings are its own too ([`OwnSettings`]); the registry gathers them into
//! [`Flags`]. This file is the registry only: the macro is in `registry.rs`, the traits in
//! `mechanism.rs`, the probe steps in `probe.rs`, the flags in `settings.rs`. What a transport
//! submits to io_uring is the kernel layer's `Sqe`, sound to push by construction.

// What the transports share; each transport's own file is declared by the registry below.
mod fd_wait;
mod mechanism;
mod probe;
#[macro_use]
mod registry;
mod ring;
mod sender;
mod settings;
mod targets;

pub(crate) use mechanism::{
    Completion, Env, Mechanism, Own, Transport, Visit, Waiter, Waker, attribution_if,
};
pub(crate) use probe::{missing, require_opcodes, trial};
pub(crate) use ring::ARM_USER_DATA;
pub(crate) use settings::OwnSettings;
pub(crate) use targets::{Reach, Targets};

use rtsoak_record::TransportSupport;
use rtsoak_record::abi::PatchedAbi;
use rtsoak_record::transport::{Name, NoSettings, Settings};

registry![
    futex::Futex,
    msg_ring::MsgRing,
    eventfd::Eventfd,
    signalfd::Signalfd,
    eventfd_multishot::EventfdMultishot,
    futex_syscall::FutexSyscall,
    persistent_futex::PersistentFutex,
    doorbell::Doorbell,
];

/// What the transport called `name` is (its `about`), empty for a name not in the registry.
pub fn about(name: &str) -> &'static str {
    Name::lookup(name).map_or("", |name| transport(name).about())
}

/// Every transport in registry order, probed on the running kernel (with `abi` for the
/// unmerged ones): what `probe` shows and what a soak checks before it runs anything.
pub fn support_matrix(abi: &PatchedAbi) -> Vec<TransportSupport> {
    Name::ALL
        .iter()
        .map(|&name| TransportSupport {
            transport: name.to_string(),
            support: transport(name).probe(abi),
        })
        .collect()
}
