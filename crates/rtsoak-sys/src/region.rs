//! The shared region: one memfd the coordinator creates and every worker maps. It holds the run's
//! control block, one progress slot per worker, the membership table of subscribers, the futex
//! word, the floor pair's send times, the RT pair's on-threshold firings, and the message
//! [`Queue`]. The layout is `#[repr(C)]`, made only of atomics (all-zero
//! bytes are its valid initial state), and checked by magic, version and size on attach.
//!
//! This file is the coordinator↔worker contract for shared state; `protocol` is the contract for
//! what crosses by fd (spec in, report out).

use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering, fence};

use crate::SysError;
use crate::crossing::CrossingSlot;
use crate::queue::Queue;
use crate::shm::SharedMemory;

const MAGIC: u64 = u64::from_le_bytes(*b"rtsoak\0\x01");
/// Bumped whenever the layout below changes.
const LAYOUT_VERSION: u32 = 5;

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
    pub(crate) const FREE: u32 = 0;
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
    join_position: AtomicU64,
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
    /// The floor pair's send times (`rtsoak --floor`).
    pub floor_stamps: FloorStamps,
    /// Per-worker progress, indexed by the worker's slot number.
    pub workers: [WorkerSlot; MAX_WORKERS],
    /// Subscribers; slot 0 is the RT subscriber.
    pub members: [MemberSlot; MAX_MEMBERS],
    /// The RT pair's on-threshold firings (`--on-threshold`), indexed by worker slot
    /// ([`RT_PUBLISHER_SLOT`], [`RT_SUBSCRIBER_SLOT`]).
    pub crossings: [CrossingSlot; 2],
    /// The message queue.
    pub queue: Queue,
}

/// A futex word with a cache line to itself.
#[repr(C, align(64))]
pub struct FutexWord(pub AtomicU32);

/// Send times the floor pair keeps: as many as the harness's queue holds messages, so a
/// subscriber held up (a VM's vCPU stalled for tens of milliseconds, say) loses sends in the
/// floor run exactly where it would lose messages in the harness's; the sends it could not
/// record are counted as overrun, as the queue counts its own.
pub(crate) const FLOOR_STAMPS: usize = crate::queue::QUEUE_SLOTS;

/// What the floor pair shares besides the transport's own state (it has no queue): the send
/// times of the floor publisher's last [`FLOOR_STAMPS`] sends, each stored before its wake
/// calls, and how many it has sent. A floor subscriber woken late records every send since its
/// last wakeup, each at its own send time, as the harness's drain does.
#[repr(C, align(64))]
pub struct FloorStamps {
    /// Sends begun: stored before a send's time is written, so a reader can tell a slot it read
    /// may have been overwritten meanwhile.
    pub(crate) begun: AtomicU64,
    /// Sends made: stored (release) after the send's time and before its wake calls.
    sent: AtomicU64,
    /// One more than the number of the first measured send, stored before that send is made;
    /// 0 while the warm-up lasts (all-zero is the region's initial state).
    first_measured_plus_one: AtomicU64,
    /// `CLOCK_MONOTONIC` ns of send `n` at index `n % FLOOR_STAMPS`.
    pub(crate) send_ns: [AtomicU64; FLOOR_STAMPS],
}

impl FloorStamps {
    /// Record send number `n` (0-based) at `send_ns`, then make it visible.
    #[inline]
    pub fn stamp(&self, n: u64, send_ns: u64) {
        self.begun.store(n + 1, Ordering::Relaxed);
        fence(Ordering::Release);
        self.send_ns[n as usize % FLOOR_STAMPS].store(send_ns, Ordering::Relaxed);
        self.sent.store(n + 1, Ordering::Release);
    }

    /// Mark send `n`, about to be made, as the first measured one (before its [`Self::stamp`],
    /// whose release makes it visible with the send).
    pub fn measure_from(&self, n: u64) {
        self.first_measured_plus_one.store(n + 1, Ordering::Relaxed);
    }

    /// Whether send `n` (one below [`Self::sent`]) is measured, not warm-up.
    #[inline]
    pub fn is_measured(&self, n: u64) -> bool {
        match self.first_measured_plus_one.load(Ordering::Relaxed) {
            0 => false,
            first_plus_one => n + 1 >= first_plus_one,
        }
    }

    /// Sends made so far.
    #[inline]
    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::Acquire)
    }

    /// The time of send `n` (one below [`Self::sent`]), or `None` where the writer has begun
    /// overwriting it (the reader is [`FLOOR_STAMPS`] sends behind): `begun` is read after the
    /// slot, so a value the writer may have replaced is never returned (a sequence lock).
    #[inline]
    pub fn send_ns(&self, n: u64) -> Option<u64> {
        let value = self.send_ns[n as usize % FLOOR_STAMPS].load(Ordering::Relaxed);
        fence(Ordering::Acquire);
        (self.begun.load(Ordering::Relaxed) <= n + FLOOR_STAMPS as u64).then_some(value)
    }
}

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

    /// True once the run is stopping (the coordinator set [`phase::STOP`]).
    #[inline]
    pub fn stopping(&self) -> bool {
        self.phase() == phase::STOP
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_floor_stamp_reads_back_until_the_writer_comes_round_to_its_slot() {
        let region = SharedRegion::create().unwrap();
        let stamps = &region.get().floor_stamps;
        for n in 0..FLOOR_STAMPS as u64 {
            stamps.stamp(n, 1_000 + n);
        }
        assert_eq!(stamps.sent(), FLOOR_STAMPS as u64);
        assert_eq!(stamps.send_ns(0), Some(1_000));
        // Send FLOOR_STAMPS takes slot 0: send 0 is gone, send 1 is still there.
        stamps.stamp(FLOOR_STAMPS as u64, 5_000);
        assert_eq!(stamps.send_ns(0), None);
        assert_eq!(stamps.send_ns(1), Some(1_001));
        assert_eq!(stamps.send_ns(FLOOR_STAMPS as u64), Some(5_000));
    }

    #[test]
    fn sends_are_warm_up_until_the_first_measured_one_is_marked() {
        let region = SharedRegion::create().unwrap();
        let stamps = &region.get().floor_stamps;
        assert!(!stamps.is_measured(0));
        stamps.measure_from(0);
        assert!(stamps.is_measured(0));
        stamps.measure_from(3);
        assert!(!stamps.is_measured(2) && stamps.is_measured(3) && stamps.is_measured(9));
    }
}
