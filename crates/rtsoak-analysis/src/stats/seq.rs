//! Which of one publisher's sequence numbers a subscriber saw, tracked as it sees them.

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
    /// Counted as in [`Integrity::duplicated`](rtsoak_record::Integrity::duplicated).
    pub duplicated: u64,
    /// Counted as in [`Integrity::reordered`](rtsoak_record::Integrity::reordered).
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
