//! What a worker counted besides its latency series: messages, missed periods, wakeups and
//! what was wrong with them; what burst and load workers did.

use serde::{Deserialize, Serialize};

/// Counters a worker keeps besides its latency series.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    /// Publisher: measured messages sent. Subscriber: measured RT messages delivered in time.
    pub messages: u64,
    /// Publisher: warm-up messages sent.
    pub warmup_messages: u64,
    /// Publisher: measured periods planned (its lifetime's periods for a noise publisher).
    #[serde(default)]
    pub planned_periods: u64,
    /// Publisher: measured periods whose deadline had passed before the previous one finished;
    /// skipped and counted.
    pub missed_periods: u64,
    /// Publisher: warm-up periods skipped the same way.
    #[serde(default)]
    pub warmup_missed_periods: u64,
    /// Publisher: wake calls that failed (errno counted, the run goes on).
    pub wake_errors: u64,
    /// Publisher: membership refreshes (outside the timed section).
    pub member_refreshes: u64,
    /// Subscriber: wakeups of the event loop by the transport.
    pub wakeups: u64,
    /// Subscriber: wakeups that found no new message (coalesced or spurious).
    pub empty_wakeups: u64,
    /// Subscriber: wait timeouts (no wakeup within the poll interval).
    pub wait_timeouts: u64,
    /// Subscriber: completions with an unexpected error result.
    pub cqe_errors: u64,
    /// Subscriber: wakeups not sent by the run's own publishers (ignored).
    pub foreign_wakeups: u64,
    /// RT subscriber: wakes it could tell were the RT publisher's own, warm-up included.
    #[serde(default)]
    pub own_wakes: u64,
    /// RT subscriber: wakeups by the run's publishers that were not the RT publisher's own
    /// (noise publishers' wakes, a futex re-arm that found the word moved); meaningful only
    /// where own wakes are told apart.
    #[serde(default)]
    pub other_wakeups: u64,
    /// RT subscriber (exact attribution): RT publisher wakes, warm-up included, that never
    /// arrived.
    #[serde(default)]
    pub wakes_missing: u64,
    /// RT subscriber: measured RT messages first seen through another wakeup or the fallback
    /// poll.
    #[serde(default)]
    pub piggybacked: u64,
    /// RT subscriber: measured RT messages first seen after a wait that ended with no
    /// completion at all (the fallback poll), although their wake calls had returned.
    #[serde(default)]
    pub fallback_deliveries: u64,
    /// RT subscriber: measured RT messages the fallback poll found while the RT publisher was
    /// still in their wake calls (held up longer than the poll interval): found before their
    /// wakeup, not a transport failure.
    #[serde(default)]
    pub polled_before_wake: u64,
    /// Subscriber: RT messages seen only after the delivery timeout.
    pub late: u64,
    /// Subscriber: RT messages overwritten in the queue before being read.
    pub overrun: u64,
    /// Subscriber: RT messages seen twice.
    pub duplicated: u64,
    /// Subscriber: RT messages seen after a later one.
    pub reordered: u64,
    /// Subscriber: messages from other (noise) publishers delivered.
    pub other_messages: u64,
    /// Publisher: wake calls that failed because the target had just left the queue (a
    /// membership race, not an error).
    pub departed_wakes: u64,
    /// Noise subscriber: messages published while it was a member that it never received.
    pub member_misses: u64,
}

/// What a burst worker did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct BurstReport {
    /// Busy threads (one per noise CPU).
    pub threads: u32,
    /// Bursts run, all threads.
    pub bursts: u64,
    /// Time spent busy, all threads, ns.
    pub busy_ns: u64,
    /// Time the threads ran (busy plus gaps), all threads, ns.
    pub elapsed_ns: u64,
    /// Longest single burst, ns.
    pub longest_ns: u64,
    /// Highest busy share of any one thread over its run, percent.
    pub max_duty_percent: f64,
    /// The cap it ran under, percent.
    pub duty_cap_percent: u8,
}

/// What one load generator did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadCount {
    /// Threads it ran.
    pub threads: u32,
    /// Operations done (see `unit`).
    pub operations: u64,
    /// What one operation is (`round trips`, `bytes`, `map-touch-unmap cycles`, ...).
    pub unit: String,
}
