//! The on-threshold firings of the RT pair (`--on-threshold`), as the measuring loops publish them
//! for the coordinator to act on: one slot per RT worker in the shared region, holding how many
//! samples crossed the limit and, under a sequence lock, the last sample that fired.
//!
//! The writer is one RT worker's loop, after its timed section: plain atomic stores, no system
//! call, no waiting. The reader is the coordinator, which may find a firing replaced by a later
//! one before it woke: it is told how many it did not see. Never blocks either side.

use std::sync::atomic::{AtomicU64, Ordering, fence};

/// A sample that fired, as its worker saw it. Times are `CLOCK_MONOTONIC` ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Crossing {
    /// Sequence number of the sample's message.
    pub seq: u64,
    /// The sample, ns.
    pub value_ns: u64,
    /// When its message was sent.
    pub sent_ns: u64,
    /// When the sample was complete (delivery seen, send call returned).
    pub observed_ns: u64,
}

/// One RT worker's firings.
#[repr(C, align(64))]
#[derive(Default)]
pub struct CrossingSlot {
    /// Samples over the limit so far, fired or not.
    crossed: AtomicU64,
    /// Firings begun: stored before a firing's fields are written.
    begun: AtomicU64,
    /// Firings published: stored (release) after its fields.
    published: AtomicU64,
    seq: AtomicU64,
    value_ns: AtomicU64,
    sent_ns: AtomicU64,
    observed_ns: AtomicU64,
}

impl CrossingSlot {
    /// Count one sample over the limit (the slot's one writer only).
    #[inline]
    pub fn count(&self) {
        let crossed = self.crossed.load(Ordering::Relaxed);
        self.crossed.store(crossed + 1, Ordering::Relaxed);
    }

    /// Publish `crossing` as the latest firing (the slot's one writer only).
    #[inline]
    pub fn publish(&self, crossing: &Crossing) {
        let n = self.published.load(Ordering::Relaxed) + 1;
        self.begun.store(n, Ordering::Relaxed);
        fence(Ordering::Release);
        self.seq.store(crossing.seq, Ordering::Relaxed);
        self.value_ns.store(crossing.value_ns, Ordering::Relaxed);
        self.sent_ns.store(crossing.sent_ns, Ordering::Relaxed);
        self.observed_ns
            .store(crossing.observed_ns, Ordering::Relaxed);
        self.published.store(n, Ordering::Release);
    }

    /// Samples over the limit so far.
    pub fn crossed(&self) -> u64 {
        self.crossed.load(Ordering::Relaxed)
    }

    /// Firings published so far.
    pub fn published(&self) -> u64 {
        self.published.load(Ordering::Acquire)
    }

    /// The latest firing and its number (from 1), or `None` when there is none yet or the
    /// writer is replacing it at this moment (ask again): a value it may have overwritten
    /// meanwhile is never returned.
    pub fn latest(&self) -> Option<(u64, Crossing)> {
        let n = self.published.load(Ordering::Acquire);
        if n == 0 {
            return None;
        }
        let crossing = Crossing {
            seq: self.seq.load(Ordering::Relaxed),
            value_ns: self.value_ns.load(Ordering::Relaxed),
            sent_ns: self.sent_ns.load(Ordering::Relaxed),
            observed_ns: self.observed_ns.load(Ordering::Relaxed),
        };
        fence(Ordering::Acquire);
        (self.begun.load(Ordering::Relaxed) == n).then_some((n, crossing))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crossing(seq: u64) -> Crossing {
        Crossing {
            seq,
            value_ns: 1_000 + seq,
            sent_ns: 10 * seq,
            observed_ns: 10 * seq + 5,
        }
    }

    #[test]
    fn the_latest_firing_reads_back_with_its_number_and_crossings_are_counted_apart() {
        let slot = CrossingSlot::default();
        assert_eq!(slot.latest(), None);
        slot.count();
        slot.count();
        slot.publish(&crossing(3));
        assert_eq!(slot.latest(), Some((1, crossing(3))));
        slot.publish(&crossing(7));
        assert_eq!(slot.latest(), Some((2, crossing(7))));
        assert_eq!((slot.crossed(), slot.published()), (2, 2));
    }

    #[test]
    fn a_firing_being_replaced_is_not_read() {
        let slot = CrossingSlot::default();
        slot.publish(&crossing(1));
        // The writer has begun the next one and not finished it.
        slot.begun.store(2, Ordering::Relaxed);
        slot.seq.store(99, Ordering::Relaxed);
        assert_eq!(slot.latest(), None);
    }

    #[test]
    fn a_reader_racing_the_writer_never_sees_a_torn_firing() {
        let slot: &'static CrossingSlot = Box::leak(Box::default());
        let writer = std::thread::spawn(move || {
            for seq in 1..200_000 {
                slot.publish(&crossing(seq));
            }
        });
        while !writer.is_finished() {
            if let Some((_, read)) = slot.latest() {
                assert_eq!(read, crossing(read.seq));
            }
        }
        writer.join().unwrap();
    }
}
