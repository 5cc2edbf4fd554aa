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
//! Adding a transport: one file here plus one line in the [`registry!`] call below (a test in
//! `tests/architecture.rs` checks that every transport file is registered).

// The one place of the main crate with `unsafe`: pushing SQEs that point into buffers the
// waiters own, whose soundness rests on each waiter's lifetimes.
#![allow(unsafe_code)]

mod doorbell;
mod eventfd;
mod eventfd_multishot;
mod fd_wait;
mod futex;
mod futex_syscall;
mod msg_ring;
mod persistent_futex;
mod sender;
mod signalfd;
mod targets;

use io_uring::{IoUring, cqueue};
use nix::errno::Errno;

pub use targets::{Reach, Targets};

use crate::protocol::WorkerSpec;
use crate::queue::Message;
use crate::record::{FdWait, Support};
use crate::region::Region;
use crate::stats::Attribution;
use crate::sys::SysError;

/// Declares the transports once: [`REGISTRY`] for their names and probes, and [`visit`] to
/// reach one's concrete waker and waiter types by name.
macro_rules! registry {
    ($($transport:expr),+ $(,)?) => {
        /// Every transport, in the order `compare` runs them and `probe` lists them.
        pub static REGISTRY: &[&dyn Transport] = &[$(&$transport),+];

        /// Hand the transport called `name` to `visitor` with its concrete type, or `None` for
        /// a name not in the registry.
        pub fn visit<V: Visit>(name: &str, visitor: V) -> Option<V::Output> {
            $(
                if $transport.name() == name {
                    return Some(visitor.visit(&$transport));
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

/// A probe step: io_uring can be set up and supports every `(opcode, name)` in `needed`.
pub fn require_opcodes(needed: &[(u8, &str)]) -> Result<(), Support> {
    let ops = crate::sys::uring::OpcodeSupport::query()
        .map_err(|e| Support::missing("io_uring", "io_uring_setup", Some(e.errno)))?;
    match needed.iter().find(|(code, _)| !ops.has(*code)) {
        Some((_, name)) => Err(Support::missing(name, "io_uring opcode probe", None)),
        None => Ok(()),
    }
}

/// A probe step: a trial call of `feature` that must succeed.
pub fn trial(feature: &str, outcome: Result<(), SysError>) -> Result<(), Support> {
    outcome.map_err(|e| Support::missing(feature, e.call, Some(e.errno)))
}

/// A wakeup mechanism, as the registry holds it.
pub trait Transport: Sync {
    /// Name used on the command line, in profiles and in results (`msg-ring`).
    fn name(&self) -> &'static str;
    /// One line for `--help` and `probe`.
    fn about(&self) -> &'static str;
    /// What the kernel must have, for humans (`Linux 6.7: IORING_OP_FUTEX_WAIT`).
    fn needs(&self) -> &'static str;
    /// Ask the running kernel, by opcode probe or trial call (never by version number). `abi`
    /// holds the assumed constants of unmerged patches, for the transports that need them.
    fn probe(&self, abi: &crate::abi::PatchedAbi) -> Support;
}

/// What a transport builds its halves from: the shared region and the worker's spec.
pub struct Env<'a> {
    /// The shared region (mapped for the life of the process).
    pub region: &'static Region,
    /// The worker's spec (role, ids, ring setup, patched ABI constants, ...).
    pub spec: &'a WorkerSpec,
}

/// A transport with its concrete halves: what the worker's loops are monomorphised for.
pub trait Mechanism: Transport + 'static {
    /// The publisher's half.
    type Waker: Waker;
    /// The subscriber's half.
    type Waiter: Waiter;
    /// Build the publisher's half (before the loop, so it may allocate and make system calls).
    fn waker(&self, env: &Env<'_>) -> anyhow::Result<Self::Waker>;
    /// Build the subscriber's half (before the loop, likewise).
    fn waiter(&self, env: &Env<'_>) -> anyhow::Result<Self::Waiter>;
}

/// Something to do with one transport's concrete type (the worker's dispatch into its loops).
pub trait Visit {
    /// What it gives back.
    type Output;
    /// Do it with `mechanism`.
    fn visit<M: Mechanism>(self, mechanism: &'static M) -> Self::Output;
}

/// The publisher's half of a transport.
pub trait Waker {
    /// Bring the wake targets in line with the membership table. Called outside the timed
    /// section, and only when the membership epoch changed.
    fn refresh(&mut self, region: &Region) -> Result<(), SysError>;
    /// Number of calls one message takes; call 0 wakes the RT subscriber.
    fn targets(&self) -> usize;
    /// The timed send call for target `index`. Must not allocate, log or block on anything but
    /// the kernel.
    fn wake(&mut self, index: usize, message: &Message) -> Result<(), Errno>;
    /// After the timed calls: reap and check whatever completions they produced.
    fn settle(&mut self) -> Result<(), Errno> {
        Ok(())
    }
    /// After a failed wake of target `index`: true if that subscriber has left the queue since
    /// the targets were refreshed (a membership race, not a transport error).
    fn departed(&self, _region: &Region, _index: usize) -> bool {
        false
    }
}

/// What one completion on the subscriber's ring meant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completion {
    /// A wakeup from the run's publishers; `rearm` if the wait is used up.
    Woken {
        /// The one-shot wait completed and must be submitted again.
        rearm: bool,
        /// Whether it was the RT publisher's own wake (RT subscriber only; see [`Own`]).
        own: Own,
    },
    /// A wakeup from someone outside the run: ignored and counted.
    Foreign {
        /// The wait must be submitted again.
        rearm: bool,
    },
    /// The wait failed with this errno: counted, and re-armed.
    Error(i32),
}

/// Whether a wakeup was the RT publisher's own, as far as the transport can tell
/// ([`Waiter::attribution`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Own {
    /// Someone else's wake (a noise publisher's), a re-arm that found the word moved, or a
    /// transport that cannot tell.
    No,
    /// The RT publisher's wakes for its messages up to and including `seq`, `wakes` of which
    /// arrived with this completion ([`Attribution::Exact`]).
    Through {
        /// The highest sequence number whose wake arrived.
        seq: u64,
        /// Wakes that arrived.
        wakes: u64,
    },
    /// The RT publisher's wake, not saying for which message: it carries every RT message
    /// published before it ([`Attribution::Covering`]).
    Covering,
}

/// The subscriber's half of a transport.
pub trait Waiter {
    /// False for a waiter that blocks in a system call instead of an io_uring (the
    /// `futex-syscall` baseline): the loop then creates no ring and calls [`Waiter::block`].
    const USES_RING: bool = true;
    /// How far this waiter tells the RT publisher's own wakes apart (RT subscriber). A waiter
    /// that says [`Attribution::None`] never reports an [`Own`] other than `No`.
    fn attribution(&self) -> Attribution;
    /// The fd publishers duplicate with `pidfd_getfd` (the ring or an eventfd), or -1.
    fn wake_fd(&self, ring: Option<&IoUring>) -> i32;
    /// Called right before the queue is drained (a futex waiter snapshots its word here, so a
    /// message published after the drain makes the next arm fail with `EAGAIN`).
    fn before_drain(&mut self) {}
    /// Push the wait's SQE(s). Called before the first wait and after every completion that
    /// asked for it.
    fn arm(&mut self, ring: &mut IoUring) -> Result<(), SysError>;
    /// Interpret one completion.
    fn complete(&mut self, cqe: &cqueue::Entry) -> Completion;
    /// How a waiter on an fd waits for it (`read` or `poll+read`, found by trying; recorded as
    /// `setup.wait`), or `None` for a transport with one way to wait.
    fn fd_wait(&self) -> Option<FdWait> {
        None
    }
    /// Ring-less waiters only: block until woken or `timeout_ns` passed (`ETIME`).
    fn block(&mut self, _timeout_ns: u64) -> std::io::Result<Completion> {
        Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
    }
}

/// user_data of the subscriber's own wait SQEs (MSG_RING completions carry the sender's data).
pub const ARM_USER_DATA: u64 = u64::MAX;

/// Push one SQE, reporting a full submission queue as `EBUSY`.
pub fn push(ring: &mut IoUring, entry: &io_uring::squeue::Entry) -> Result<(), SysError> {
    // SAFETY: every SQE rtsoak pushes points only at memory that outlives its completion: the
    // shared region (mapped for the worker's life) or buffers owned by the waiter, which lives
    // until the loop has reaped its completions.
    unsafe { ring.submission().push(entry) }
        .map_err(|_| SysError::new("io_uring push", Errno::EBUSY))
}
