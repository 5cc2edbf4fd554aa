//! What a transport is: the registry's view of it ([`Transport`]), its two halves ([`Waker`],
//! [`Waiter`]) and what they are built from ([`Env`], [`Mechanism`]), and what one completion on
//! the subscriber's ring meant ([`Completion`], [`Own`]).

use io_uring::{IoUring, cqueue};
use nix::errno::Errno;

use super::settings::OwnSettings;
use rtsoak_record::Attribution;
use rtsoak_record::{FdWait, RingSetup, Role, Support};
use rtsoak_sys::SysError;
use rtsoak_sys::queue::Message;
use rtsoak_sys::region::Region;

/// A wakeup mechanism, as the registry holds it (its id, `msg-ring`, is the records'
/// `transport::Name` it is registered under).
pub trait Transport: Sync {
    /// One line for `--help` and `probe`.
    fn about(&self) -> &'static str;
    /// The wake side, timed, in Markdown: the README's transports table (generated from these
    /// three by `tests/registry.rs`) shows it.
    fn wake_side(&self) -> &'static str;
    /// The wait side (the subscriber's ring), in Markdown, for the same table.
    fn wait_side(&self) -> &'static str;
    /// What the kernel must have, in short (`Linux 6.7`), for the same table.
    fn requires(&self) -> &'static str;
    /// What the kernel must have, for humans (`Linux 6.7: IORING_OP_FUTEX_WAIT`).
    fn needs(&self) -> &'static str;
    /// Ask the running kernel, by opcode probe or trial call (never by version number). `abi`
    /// holds the assumed constants of unmerged patches, for the transports that need them.
    fn probe(&self, abi: &rtsoak_record::abi::PatchedAbi) -> Support;
}

/// What a transport builds its halves from: the shared region and what the worker's spec says
/// of this worker (the transport sees no more of the spec than this, so it depends on no
/// layer above it).
pub(crate) struct Env<'a, S> {
    /// The shared region (mapped for the life of the process).
    pub(crate) region: &'static Region,
    /// Which worker this is.
    pub(crate) role: Role,
    /// Publishers: the id stamped on every message; subscribers: the RT publisher's.
    pub(crate) publisher_id: u32,
    /// The coordinator's pid (the token `msg-ring` stamps on its messages).
    pub(crate) coordinator_pid: i32,
    /// The requested ring setup (the publisher's own ring, where it has one, uses it too).
    pub(crate) ring_setup: RingSetup,
    /// Whether noise publishers wake the RT subscriber too (`noise.queue.wake_rt_subscriber`).
    pub(crate) noise_wakes_rt_subscriber: bool,
    /// Assumed constants of unmerged kernel patches.
    pub(crate) abi: &'a rtsoak_record::abi::PatchedAbi,
    /// The transport's own settings, as the plan resolved them.
    pub(crate) settings: &'a S,
}

/// A transport with its concrete halves: what the worker's loops are monomorphised for.
pub(crate) trait Mechanism: Transport + 'static {
    /// Its own settings (`NoSettings` for a transport without any): profile keys in `[rt]`,
    /// the flags that override them, and their field of the registry's `Settings`, all declared by
    /// the registry from this type.
    type Settings: OwnSettings;
    /// The publisher's half.
    type Waker: Waker;
    /// The subscriber's half.
    type Waiter: Waiter;
    /// Build the publisher's half (before the loop, so it may allocate and make system calls).
    fn waker(&self, env: &Env<'_, Self::Settings>) -> anyhow::Result<Self::Waker>;
    /// Build the subscriber's half (before the loop, likewise).
    fn waiter(&self, env: &Env<'_, Self::Settings>) -> anyhow::Result<Self::Waiter>;
}

/// Something to do with one transport's concrete type (the worker's dispatch into its loops).
pub(crate) trait Visit {
    /// What it gives back.
    type Output;
    /// Do it with `mechanism` and its own settings.
    fn visit<M: Mechanism>(self, mechanism: &'static M, settings: &M::Settings) -> Self::Output;
}

/// The publisher's half of a transport.
pub(crate) trait Waker {
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
pub(crate) enum Completion {
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
pub(crate) enum Own {
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

/// `kind` for a waiter that tells the RT publisher's own wakes apart (the RT subscriber, for most
/// transports), [`Attribution::None`] for any other ([`Waiter::attribution`]).
pub(crate) fn attribution_if(attributes: bool, kind: Attribution) -> Attribution {
    if attributes { kind } else { Attribution::None }
}

/// The subscriber's half of a transport.
pub(crate) trait Waiter {
    /// False for a waiter that blocks in a system call instead of an io_uring (the
    /// `futex-syscall` baseline): the loop then creates no ring and calls [`Waiter::block`].
    const USES_RING: bool = true;
    /// How far this waiter tells the RT publisher's own wakes apart (RT subscriber). A waiter
    /// that says [`Attribution::None`] never reports an [`Own`] other than `No`.
    fn attribution(&self) -> Attribution;
    /// The fd publishers duplicate with `pidfd_getfd` (the ring or an eventfd), or -1 for a
    /// waiter publishers reach without one (the futex waiters, which share the region's word).
    fn wake_fd(&self, _ring: Option<&IoUring>) -> i32 {
        -1
    }
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
