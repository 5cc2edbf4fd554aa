//! Message integrity: which of one publisher's sequence numbers a subscriber saw, so that lost,
//! duplicated and reordered messages are counted rather than guessed.

use serde::{Deserialize, Serialize};

/// Integrity counts of one run (RT publisher → RT subscriber). A run with `lost > 0`, or with a
/// transport failure ([`Integrity::transport_failures`]), fails, whatever its latencies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Integrity {
    /// Messages the publisher sent in the measured phase.
    pub sent: u64,
    /// Of those, messages the subscriber observed within the delivery timeout.
    pub delivered: u64,
    /// `sent - delivered`: never observed, observed only after the delivery timeout, or
    /// overwritten in the queue before they were read.
    pub lost: u64,
    /// Observed, but only after the delivery timeout (included in `lost`).
    pub late: u64,
    /// Overwritten in the queue before the subscriber read them (included in `lost`).
    pub overrun: u64,
    /// Observed more than once.
    pub duplicated: u64,
    /// Observed after a later sequence number of the same publisher.
    pub reordered: u64,
    /// Measured periods the plan gave the run (0 in results written before it was recorded).
    #[serde(default)]
    pub planned_periods: u64,
    /// Measured periods whose deadline had passed before the publisher could send: skipped,
    /// so no histogram holds them (coordinated omission), and counted here.
    #[serde(default)]
    pub missed_periods: u64,
    /// The RT publisher's wake calls that failed (a subscriber that had just left aside).
    #[serde(default)]
    pub wake_errors: u64,
    /// The RT subscriber's completions with an unexpected error result.
    #[serde(default)]
    pub cqe_errors: u64,
    /// RT messages first seen after a wait that ended with no completion at all: delivered by
    /// the subscriber's fallback poll, not by any wakeup.
    #[serde(default)]
    pub fallback_deliveries: u64,
    /// How the RT subscriber tells the RT publisher's own wake from others'.
    #[serde(default)]
    pub own_wake: Attribution,
    /// Own wakes that reached the RT subscriber, warm-up included (none when not attributable).
    #[serde(default)]
    pub own_wakes: Option<u64>,
    /// [`Attribution::Exact`] only: the RT publisher's wakes of the RT subscriber, warm-up
    /// included, that never reached it.
    #[serde(default)]
    pub wakes_missing: Option<u64>,
    /// Measured RT messages first seen through someone else's wakeup or the fallback poll,
    /// not through their own (none when not attributable).
    #[serde(default)]
    pub piggybacked: Option<u64>,
}

/// How far the RT subscriber can tell the RT publisher's own wake apart.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Attribution {
    /// Every own wake names the message it was sent for (MSG_RING data, a signal's value, an
    /// eventfd count): each one is counted, and one that never arrives is a failure.
    Exact,
    /// An own wake is known as such (a futex bitset) but not which message it was sent for:
    /// it carries every RT message published before it.
    Covering,
    /// The transport cannot tell (every wake looks alike): no own-wake figures.
    #[default]
    None,
}

impl Attribution {
    /// True when own wakes are told apart at all.
    pub fn attributable(self) -> bool {
        self != Attribution::None
    }
}

impl Integrity {
    /// The lost messages in words (`3 of 4002 messages lost (...)`), none when none were.
    pub fn loss(&self) -> Option<String> {
        (self.lost > 0).then(|| {
            format!(
                "{} of {} messages lost (never delivered within the delivery timeout)",
                self.lost, self.sent
            )
        })
    }

    /// The transport's failures as one count: failed wake calls, error completions, messages
    /// only the fallback poll delivered and own wakes that never arrived, added saturating.
    pub fn transport_errors(&self) -> u64 {
        [self.cqe_errors, self.fallback_deliveries]
            .into_iter()
            .chain(self.wakes_missing)
            .fold(self.wake_errors, u64::saturating_add)
    }

    /// What of the transport failed, in words: failed wake calls, error completions, messages
    /// only the fallback poll delivered, own wakes that never arrived. Empty when none did.
    pub fn transport_failures(&self) -> Vec<String> {
        let mut failures = Vec::new();
        if self.wake_errors > 0 {
            failures.push(format!("{} wake calls failed", self.wake_errors));
        }
        if self.cqe_errors > 0 {
            failures.push(format!("{} completions were errors", self.cqe_errors));
        }
        if self.fallback_deliveries > 0 {
            failures.push(format!(
                "{} messages were delivered only by the fallback poll (no wakeup came)",
                self.fallback_deliveries
            ));
        }
        if let Some(missing) = self.wakes_missing.filter(|m| *m > 0) {
            failures.push(format!(
                "{missing} of the RT publisher's wakes never reached the RT subscriber"
            ));
        }
        if self.own_wake == Attribution::Covering && self.own_wakes == Some(0) && self.delivered > 0
        {
            failures.push(
                "no wake of the RT publisher ever reached the RT subscriber (every message was \
                 carried by another wakeup)"
                    .to_string(),
            );
        }
        failures
    }
}

/// Sequence numbers within this distance of the newest are checked exactly for duplicates and
/// reordering; anything older counts as a duplicate (it cannot be told apart).
const WINDOW: u64 = 4096;

/// Tracks one publisher's sequence numbers as a subscriber observes them. Fixed size, never
/// allocates.
pub struct SeqTracker {
    /// One past the highest sequence number seen.
    next: u64,
    seen: [u64; (WINDOW / 64) as usize],
    /// Distinct sequence numbers seen.
    pub distinct: u64,
    /// Counted as in [`Integrity::duplicated`].
    pub duplicated: u64,
    /// Counted as in [`Integrity::reordered`].
    pub reordered: u64,
}

impl Default for SeqTracker {
    fn default() -> Self {
        SeqTracker {
            next: 0,
            seen: [0; (WINDOW / 64) as usize],
            distinct: 0,
            duplicated: 0,
            reordered: 0,
        }
    }
}

impl SeqTracker {
    fn bit(seq: u64) -> (usize, u64) {
        let slot = seq % WINDOW;
        ((slot / 64) as usize, 1u64 << (slot % 64))
    }

    /// Observe `seq`. Returns true when it is new (neither a duplicate nor too old to tell).
    #[inline]
    pub fn observe(&mut self, seq: u64) -> bool {
        if seq >= self.next {
            // Sequence numbers skipped over become "not seen" slots of the window.
            let first_cleared = self.next.max(seq.saturating_sub(WINDOW - 1));
            for skipped in first_cleared..seq {
                let (word, mask) = Self::bit(skipped);
                self.seen[word] &= !mask;
            }
            let (word, mask) = Self::bit(seq);
            self.seen[word] |= mask;
            self.next = seq + 1;
            self.distinct += 1;
            return true;
        }
        if self.next - seq > WINDOW {
            self.duplicated += 1;
            return false;
        }
        let (word, mask) = Self::bit(seq);
        if self.seen[word] & mask != 0 {
            self.duplicated += 1;
            false
        } else {
            self.seen[word] |= mask;
            self.reordered += 1;
            self.distinct += 1;
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_order_sequences_are_all_new() {
        let mut tracker = SeqTracker::default();
        assert!((0..10_000).all(|seq| tracker.observe(seq)));
        assert_eq!(
            (tracker.distinct, tracker.duplicated, tracker.reordered),
            (10_000, 0, 0)
        );
    }

    #[test]
    fn a_repeat_is_a_duplicate_and_a_late_gap_fill_is_reordered() {
        let mut tracker = SeqTracker::default();
        for seq in [0, 1, 3, 4] {
            tracker.observe(seq);
        }
        assert!(!tracker.observe(3), "3 was seen already");
        assert!(tracker.observe(2), "2 was skipped, so it is new but late");
        assert!(!tracker.observe(2));
        assert_eq!(
            (tracker.distinct, tracker.duplicated, tracker.reordered),
            (5, 2, 1)
        );
    }

    #[test]
    fn a_gap_wider_than_the_window_leaves_no_stale_bits() {
        let mut tracker = SeqTracker::default();
        tracker.observe(5);
        tracker.observe(5 + 3 * WINDOW);
        assert!(
            tracker.observe(5 + 3 * WINDOW - 1),
            "skipped number inside the window is unseen"
        );
        assert!(
            !tracker.observe(1),
            "too old to tell: counted as a duplicate"
        );
    }
}
