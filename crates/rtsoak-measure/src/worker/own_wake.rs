//! Telling the RT publisher's own wakes from everyone else's, in the RT subscriber's loop.
//!
//! The subscriber drains the whole queue on any wakeup, so an RT message can be seen first
//! through a noise publisher's wake, an earlier message's wake or the fallback poll: it is then
//! *piggybacked*, and its `delivery` says nothing about the transport's own wake path. Where the
//! transport tells its own wakes apart ([`Attribution`]), this records for each measured RT
//! message whether its own wake carried it and, as `own_wake`, how late that wake arrived:
//! - exact: each own wake names the newest message it was sent for, so a message seen before its
//!   own wake waits in a small window until the wake arrives;
//! - covering: an own wake carries every RT message published before it, and only those seen
//!   with it get an `own_wake` sample.
//!
//! Fixed size, allocation-free: it runs inside the measuring loop.

use crate::transport::Own;
use rtsoak_record::Attribution;

/// Messages that can wait for their own wake at once (exact attribution). One that falls out
/// of the window gets no `own_wake` sample; its wake is still counted when it comes, and one
/// that never comes is counted as missing by the loop.
const PENDING: usize = 64;

/// A measured RT message seen before its own wake.
#[derive(Debug, Clone, Copy, Default)]
struct Pending {
    seq: u64,
    send_ns: u64,
}

/// The own-wake bookkeeping of one RT subscriber.
pub(crate) struct OwnWakes {
    attribution: Attribution,
    /// Own wakes received, warm-up included.
    pub(crate) wakes: u64,
    /// Measured RT messages first seen without their own wake.
    pub(crate) piggybacked: u64,
    /// Exact: the newest sequence number whose own wake has arrived.
    through: Option<u64>,
    /// Covering: an own wake arrived in the current iteration.
    covering_now: bool,
    pending: [Pending; PENDING],
    pending_start: usize,
    pending_len: usize,
}

impl OwnWakes {
    /// Bookkeeping for a waiter that attributes as `attribution`.
    pub(super) fn new(attribution: Attribution) -> Self {
        OwnWakes {
            attribution,
            wakes: 0,
            piggybacked: 0,
            through: None,
            covering_now: false,
            pending: [Pending::default(); PENDING],
            pending_start: 0,
            pending_len: 0,
        }
    }

    /// How own wakes are told apart.
    pub(super) fn attribution(&self) -> Attribution {
        self.attribution
    }

    /// A new wakeup of the loop begins.
    #[inline]
    pub(super) fn begin(&mut self) {
        self.covering_now = false;
    }

    /// A completion of this wakeup said whose wake it was.
    #[inline]
    pub(super) fn completion(&mut self, own: Own) {
        match own {
            Own::No => {}
            Own::Through { seq, wakes } => {
                self.wakes += wakes;
                self.through = Some(self.through.map_or(seq, |t| t.max(seq)));
            }
            Own::Covering => {
                self.wakes += 1;
                self.covering_now = true;
            }
        }
    }

    /// A measured RT message, sent at `send_ns`, seen for the first time in the wakeup that
    /// began at `woke_ns`. Returns its `own_wake` sample if its own wake carried it.
    #[inline]
    pub(crate) fn first_seen(&mut self, seq: u64, send_ns: u64, woke_ns: u64) -> Option<u64> {
        let carried = match self.attribution {
            Attribution::None => return None,
            Attribution::Exact => self.through.is_some_and(|t| t >= seq),
            Attribution::Covering => self.covering_now && send_ns <= woke_ns,
        };
        if carried {
            return Some(woke_ns.saturating_sub(send_ns));
        }
        self.piggybacked += 1;
        if self.attribution == Attribution::Exact {
            self.hold(Pending { seq, send_ns });
        }
        None
    }

    /// After the drain: every message seen earlier whose own wake arrived by now, as
    /// `(send_ns, own_wake_ns)`, oldest first.
    #[inline]
    pub(super) fn arrived(&mut self, woke_ns: u64, mut sample: impl FnMut(u64, u64)) {
        let Some(through) = self.through else {
            return;
        };
        while self.pending_len > 0 {
            let oldest = self.pending[self.pending_start];
            if oldest.seq > through {
                break;
            }
            sample(oldest.send_ns, woke_ns.saturating_sub(oldest.send_ns));
            self.pending_start = (self.pending_start + 1) % PENDING;
            self.pending_len -= 1;
        }
    }

    fn hold(&mut self, pending: Pending) {
        if self.pending_len == PENDING {
            // The oldest has waited longest: let it go (its wake is still counted).
            self.pending_start = (self.pending_start + 1) % PENDING;
            self.pending_len -= 1;
        }
        let slot = (self.pending_start + self.pending_len) % PENDING;
        self.pending[slot] = pending;
        self.pending_len += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exact_wake_carries_the_messages_up_to_its_sequence_number() {
        let mut own = OwnWakes::new(Attribution::Exact);
        own.begin();
        own.completion(Own::Through { seq: 1, wakes: 2 });
        assert_eq!(own.first_seen(0, 100, 500), Some(400));
        assert_eq!(own.first_seen(1, 200, 500), Some(300));
        // Published after that wake was sent: seen through it, not carried by its own.
        assert_eq!(own.first_seen(2, 450, 500), None);
        assert_eq!((own.wakes, own.piggybacked), (2, 1));
    }

    #[test]
    fn a_message_seen_before_its_own_wake_gets_its_sample_when_the_wake_arrives() {
        let mut own = OwnWakes::new(Attribution::Exact);
        own.begin();
        assert_eq!(
            own.first_seen(0, 100, 150),
            None,
            "a noise wake showed it first"
        );
        let mut samples = Vec::new();
        own.arrived(150, |send, late| samples.push((send, late)));
        assert!(samples.is_empty());
        own.begin();
        own.completion(Own::Through { seq: 0, wakes: 1 });
        own.arrived(900, |send, late| samples.push((send, late)));
        assert_eq!(samples, [(100, 800)]);
        assert_eq!(own.piggybacked, 1);
    }

    #[test]
    fn a_covering_wake_carries_only_what_was_published_before_the_wakeup() {
        let mut own = OwnWakes::new(Attribution::Covering);
        own.begin();
        assert_eq!(
            own.first_seen(0, 100, 300),
            None,
            "no own wake in this wakeup"
        );
        own.begin();
        own.completion(Own::Covering);
        assert_eq!(own.first_seen(1, 200, 300), Some(100));
        assert_eq!(
            own.first_seen(2, 350, 300),
            None,
            "published while draining"
        );
        own.begin();
        assert_eq!(
            own.first_seen(3, 400, 500),
            None,
            "the next wakeup is not own"
        );
        assert_eq!((own.wakes, own.piggybacked), (1, 3));
    }

    #[test]
    fn without_attribution_nothing_is_carried_or_counted() {
        let mut own = OwnWakes::new(Attribution::None);
        own.begin();
        own.completion(Own::No);
        assert_eq!(own.first_seen(0, 1, 2), None);
        assert_eq!((own.wakes, own.piggybacked), (0, 0));
    }

    #[test]
    fn a_full_window_lets_the_oldest_go_and_keeps_the_rest() {
        let mut own = OwnWakes::new(Attribution::Exact);
        own.begin();
        for seq in 0..PENDING as u64 + 3 {
            own.first_seen(seq, seq * 10, seq * 10 + 1);
        }
        own.completion(Own::Through {
            seq: PENDING as u64 + 2,
            wakes: 1,
        });
        let mut seqs = Vec::new();
        own.arrived(100_000, |send, _| seqs.push(send / 10));
        assert_eq!(seqs.len(), PENDING);
        assert_eq!(seqs[0], 3, "the three oldest fell out");
    }
}
