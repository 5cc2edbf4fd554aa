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
//! Adding a transport: one file here plus one line in the [`registry!`] call below, which
//! declares the file's module too (a test in `tests/architecture.rs` checks that every
//! transport file is registered). This file is the registry only: the traits are in
//! `mechanism.rs`, the probe steps in `probe.rs`, SQE pushing in `ring.rs`.

// The one place of the main crate with `unsafe`: pushing SQEs that point into buffers the
// waiters own, whose soundness rests on each waiter's lifetimes.
#![allow(unsafe_code)]

// What the transports share; each transport's own file is declared by the registry below.
mod fd_wait;
mod mechanism;
mod probe;
mod ring;
mod sender;
mod targets;

pub use mechanism::{Completion, Env, Mechanism, Own, Transport, Visit, Waiter, Waker};
pub use probe::{require_opcodes, trial};
pub use ring::{ARM_USER_DATA, push};
pub use targets::{Reach, Targets};

/// Declares the transports once: each one's file (`module::Type` is `mod module;`),
/// [`REGISTRY`] for their names and probes, and [`visit`] to reach one's concrete waker and
/// waiter types by name.
macro_rules! registry {
    ($($module:ident :: $ty:ident),+ $(,)?) => {
        $(mod $module;)+

        /// Every transport, in the order `compare` runs them and `probe` lists them.
        pub static REGISTRY: &[&dyn Transport] = &[$(&$module::$ty),+];

        /// Hand the transport called `name` to `visitor` with its concrete type, or `None` for
        /// a name not in the registry.
        pub fn visit<V: Visit>(name: &str, visitor: V) -> Option<V::Output> {
            $(
                if $module::$ty.name() == name {
                    return Some(visitor.visit(&$module::$ty));
                }
            )+
            None
        }
    };
}

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

/// Look a transport up by its registry name.
pub fn by_name(name: &str) -> Option<&'static dyn Transport> {
    REGISTRY.iter().copied().find(|t| t.name() == name)
}

/// What the transport called `name` is (its `about`), empty for a name not in the registry.
pub fn about(name: &str) -> &'static str {
    by_name(name).map_or("", |t| t.about())
}

/// Registry names in order.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|t| t.name()).collect()
}
