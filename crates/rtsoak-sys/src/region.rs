//! The shared region: one memfd the coordinator creates and every worker maps. It holds the run's
//! control block, one progress slot per worker, the membership table of subscribers, the futex
//! word, and the message [`Queue`]. The layout is `#[repr(C)]`, made only of atomics (all-zero
//! bytes are its valid initial state), and checked by magic, version and size on attach.
//!
//! This file is the coordinator↔worker contract for shared state; `protocol` is the contract for
//! what crosses by fd (spec in, report out).

use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};

use crate::SysError;
use crate::queue::Queue;
use crate::shm::SharedMemory;

const MAGIC: u64 = u64::from_le_bytes(*b"rtsoak\0\x01");
/// Bumped whenever the layout below changes.
const LAYOUT_VERSION: u32 = 2;

/// Worker slot of the RT publisher.
pub const RT_PUBLISHER_SLOT: usize = 0;
/// Worker slot of the RT subscriber.
pub const RT_SUBSCRIBER_SLOT: usize = 1;
/// Membership slot of the RT subscriber: publishers wake it first.
pub const RT_MEMBER: usize = 0;

/// Worker slots (RT pair plus noise workers alive at once).
pub const MAX_WORKERS: usize = 64;
/// Subscribers that can be members at once.
pub const MAX_MEMBERS: usize = 32;

/// Phase of the run, written by the coordinator.
pub mod phase {
    /// Workers are starting and setting up.
    pub const SETUP: u32 = 0;
    /// `start_ns` is set: publishers run their periods.
    pub const RUN: u32 = 1;
    /// Everyone finishes what is in flight and reports.
    pub const STOP: u32 = 2;
}

/// State of a worker slot, written by its worker.
pub mod worker_state {
    /// Not started, or started and not yet attached.
    pub const EMPTY: u32 = 0;
    /// Set up (real-time, ring, membership) and waiting for the run.
    pub const READY: u32 = 1;
    /// In its measured loop.
    pub const RUNNING: u32 = 2;
    /// Finished and wrote its report.
    pub const DONE: u32 = 3;
    /// Gave up; its report says why.
    pub const FAILED: u32 = 4;
}

/// Run-wide control, written by the coordinator (and the publisher's end marker).
#[repr(C, align(64))]
pub struct Control {
    /// One of [`phase`].
    pub phase: AtomicU32,
    /// `CLOCK_MONOTONIC` ns at which the first period begins (warm-up first, then measured).
    pub start_ns: AtomicU64,
    /// Bumped on every membership change, so publishers refresh their wake targets (outside
    /// their timed section) only when something changed.
    pub members_epoch: AtomicU64,
    /// Non-zero from the start of queue noise until every noise publisher has exited (set and
    /// cleared by the coordinator's noise manager). The RT subscriber stays a member while it is
    /// set, so it receives every noise message, not only those sent before the RT publisher
    /// finished.
    pub queue_noise_live: AtomicU32,
}

/// One worker's live figures, for progress display and supervision. Written with relaxed
/// stores by the worker, read by the coordinator; never read back by the worker.
#[repr(C, align(64))]
pub struct WorkerSlot {
    /// One of [`worker_state`].
    pub state: AtomicU32,
    /// The worker's pid.
    pub pid: AtomicI32,
    /// Messages sent (publisher) or received (subscriber) so far, measured phase only.
    pub messages: AtomicU64,
    /// Longest send call (publisher) or delivery (subscriber) so far, ns.
    pub longest_ns: AtomicU64,
    /// Samples over threshold so far.
    pub over_threshold: AtomicU64,
    /// Publisher: messages published in total, warm-up included (the subscriber's goal). Stored
    /// after the message's wake calls have returned, so a subscriber's fallback poll can tell a
    /// message whose wake was sent from one it found first.
    pub published_total: AtomicU64,
    /// `CLOCK_MONOTONIC` ns of the last loop iteration, for the watchdog.
    pub heartbeat_ns: AtomicU64,
}

/// State of a membership slot.
pub mod member_state {
    /// Nobody.
    pub const FREE: u32 = 0;
    /// A subscriber that must be woken for every message.
    pub const ACTIVE: u32 = 1;
}

/// One subscriber as publishers see it: whom to wake and through which of its fds.
#[repr(C, align(64))]
pub struct MemberSlot {
    /// One of [`member_state`].
    pub state: AtomicU32,
    /// Bumped each time the slot gets a new subscriber.
    pub generation: AtomicU32,
    /// The subscriber's pid (for `pidfd_open`).
    pub pid: AtomicI32,
    /// The subscriber's fd a publisher duplicates with `pidfd_getfd` (its ring for `msg-ring`,
    /// its eventfd for `eventfd`; -1 where the transport needs none).
    pub wake_fd: AtomicI32,
    /// Queue position from which the subscriber reads.
    pub join_position: AtomicU64,
}

/// The whole shared region.
#[repr(C)]
pub struct Region {
    magic: AtomicU64,
    layout_version: AtomicU32,
    size: AtomicU32,
    /// Run control.
    pub control: Control,
    /// The `futex` transport's word, alone on its cache line.
    pub futex_word: FutexWord,
    /// Per-worker progress, indexed by the worker's slot number.
    pub workers: [WorkerSlot; MAX_WORKERS],
    /// Subscribers; slot 0 is the RT subscriber.
    pub members: [MemberSlot; MAX_MEMBERS],
    /// The message queue.
    pub queue: Queue,
}

/// A futex word with a cache line to itself.
#[repr(C, align(64))]
pub struct FutexWord(pub AtomicU32);

/// A mapped region with its memory.
pub struct SharedRegion {
    memory: SharedMemory,
}

impl SharedRegion {
    /// Create and initialise a region (coordinator).
    pub fn create() -> Result<Self, SysError> {
        let memory = SharedMemory::create("rtsoak-region", std::mem::size_of::<Region>())?;
        let region = SharedRegion { memory };
        let r = region.get();
        r.size
            .store(std::mem::size_of::<Region>() as u32, Ordering::Relaxed);
        r.layout_version.store(LAYOUT_VERSION, Ordering::Relaxed);
        r.magic.store(MAGIC, Ordering::Release);
        for member in &r.members {
            member.wake_fd.store(-1, Ordering::Relaxed);
        }
        Ok(region)
    }

    /// Attach to an inherited region (worker), checking it is what this binary expects.
    pub fn attach(memory: SharedMemory) -> anyhow::Result<Self> {
        anyhow::ensure!(
            memory.len() >= std::mem::size_of::<Region>(),
            "shared region is {} bytes, expected {}: coordinator and worker binaries differ",
            memory.len(),
            std::mem::size_of::<Region>()
        );
        let region = SharedRegion { memory };
        let r = region.get();
        anyhow::ensure!(
            r.magic.load(Ordering::Acquire) == MAGIC
                && r.layout_version.load(Ordering::Relaxed) == LAYOUT_VERSION
                && r.size.load(Ordering::Relaxed) as usize == std::mem::size_of::<Region>(),
            "shared region has the wrong layout: coordinator and worker binaries differ"
        );
        Ok(region)
    }

    /// The region.
    pub fn get(&self) -> &Region {
        // SAFETY: the mapping is at least size_of::<Region>() bytes (checked in attach, exact in
        // create), page aligned (so aligned for Region), lives as long as `self`, and Region is
        // made of atomics only, for which any bytes written by another process are valid.
        unsafe { &*(self.memory.as_ptr() as *const Region) }
    }

    /// The memfd to hand to workers.
    pub fn memory(&self) -> &SharedMemory {
        &self.memory
    }
}

impl Region {
    /// Publish a subscriber in membership slot `index` and tell publishers.
    pub fn join(&self, index: usize, pid: i32, wake_fd: i32, join_position: u64) {
        let member = &self.members[index];
        member.pid.store(pid, Ordering::Relaxed);
        member.wake_fd.store(wake_fd, Ordering::Relaxed);
        member.join_position.store(join_position, Ordering::Relaxed);
        member.generation.fetch_add(1, Ordering::Relaxed);
        member.state.store(member_state::ACTIVE, Ordering::Release);
        self.control.members_epoch.fetch_add(1, Ordering::AcqRel);
    }

    /// Withdraw membership slot `index` and tell publishers.
    pub fn leave(&self, index: usize) {
        self.members[index]
            .state
            .store(member_state::FREE, Ordering::Release);
        self.control.members_epoch.fetch_add(1, Ordering::AcqRel);
    }

    /// Current phase.
    pub fn phase(&self) -> u32 {
        self.control.phase.load(Ordering::Acquire)
    }
}
