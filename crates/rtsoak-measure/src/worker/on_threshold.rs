//! `--on-threshold` inside a measuring loop: when a sample crosses the limit, publish it in this
//! worker's crossing slot of the shared region and ring the coordinator's bell, which wakes the
//! coordinator to act (trace, signal, exec: never here).
//!
//! Built before the loop. [`OnThreshold::check`] is called after the timed section, is one
//! comparison when nothing crosses, and on a crossing makes plain atomic stores and, when the
//! crossing fires, one non-blocking `write(2)` of one byte: no allocation, no logging, no
//! waiting. Fires on the first crossing only, or on every one at most once per `every_ns`.

use std::io::Write;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;

use crate::protocol::OnThresholdSpec;
use rtsoak_sys::crossing::{Crossing, CrossingSlot};

/// The on-threshold watch of one RT worker.
pub(super) struct OnThreshold {
    /// `u64::MAX` when this worker's series is not watched: no sample crosses it.
    limit_ns: u64,
    /// Least time between two firings; `u64::MAX`: the first crossing only.
    every_ns: u64,
    /// No firing before a sample observed at this time.
    next_ns: u64,
    slot: &'static CrossingSlot,
    /// The write end of the coordinator's bell; `None` where it was not given (the coordinator
    /// then sees the firing at its next tick).
    bell: Option<UnixStream>,
}

impl OnThreshold {
    /// Watch for `spec` (`None`: this worker's series is not watched), publishing into `slot`
    /// and ringing `bell`.
    pub(super) fn new(
        spec: Option<&OnThresholdSpec>,
        slot: &'static CrossingSlot,
        bell: Option<OwnedFd>,
    ) -> Self {
        let bell = spec.and(bell).map(UnixStream::from);
        // A full bell is already ringing: never wait on it.
        let bell = bell.filter(|bell| bell.set_nonblocking(true).is_ok());
        OnThreshold {
            limit_ns: spec.map_or(u64::MAX, |spec| spec.limit_ns),
            every_ns: spec.and_then(|spec| spec.every_ns).unwrap_or(u64::MAX),
            next_ns: 0,
            slot,
            bell,
        }
    }

    /// Look at one measured sample (after the timed section): `value_ns`, of message `seq` sent
    /// at `sent_ns`, complete at `observed_ns` (`CLOCK_MONOTONIC`).
    #[inline]
    pub(super) fn check(&mut self, value_ns: u64, seq: u64, sent_ns: u64, observed_ns: u64) {
        if value_ns > self.limit_ns {
            self.cross(Crossing {
                seq,
                value_ns,
                sent_ns,
                observed_ns,
            });
        }
    }

    #[cold]
    fn cross(&mut self, crossing: Crossing) {
        self.slot.count();
        if crossing.observed_ns < self.next_ns {
            return;
        }
        self.next_ns = crossing.observed_ns.saturating_add(self.every_ns);
        self.slot.publish(&crossing);
        if let Some(mut bell) = self.bell.as_ref() {
            // EAGAIN (the bell is full: the coordinator has yet to wake) and EPIPE (it has
            // gone, and this worker goes with it) change nothing.
            let _ = bell.write(&[1]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn new_slot() -> &'static CrossingSlot {
        Box::leak(Box::default())
    }

    fn spec(every_ns: Option<u64>) -> OnThresholdSpec {
        OnThresholdSpec {
            limit_ns: 100,
            every_ns,
        }
    }

    #[test]
    fn by_default_only_the_first_crossing_fires_and_every_crossing_is_counted() {
        let slot = new_slot();
        let mut watch = OnThreshold::new(Some(&spec(None)), slot, None);
        watch.check(100, 1, 10, 110);
        assert_eq!(slot.crossed(), 0, "at the limit is not over it");
        watch.check(101, 2, 20, 121);
        watch.check(500, 3, 30, 530);
        assert_eq!((slot.crossed(), slot.published()), (2, 1));
        let (_, first) = slot.latest().unwrap();
        assert_eq!(
            (first.seq, first.value_ns, first.observed_ns),
            (2, 101, 121)
        );
    }

    #[test]
    fn every_crossing_fires_at_most_once_per_interval() {
        let slot = new_slot();
        let mut watch = OnThreshold::new(Some(&spec(Some(1_000))), slot, None);
        for (seq, observed_ns) in [(1, 1_000), (2, 1_500), (3, 2_000), (4, 2_999), (5, 3_000)] {
            watch.check(200, seq, observed_ns - 200, observed_ns);
        }
        assert_eq!((slot.crossed(), slot.published()), (5, 3));
        assert_eq!(slot.latest().unwrap().1.seq, 5);
    }

    #[test]
    fn a_firing_rings_the_bell_and_an_unwatched_series_never_fires() {
        let (mut coordinator, worker) = UnixStream::pair().unwrap();
        let slot = new_slot();
        let mut watch = OnThreshold::new(Some(&spec(None)), slot, Some(worker.into()));
        watch.check(101, 1, 0, 101);
        let mut byte = [0u8; 1];
        coordinator.read_exact(&mut byte).unwrap();
        let off = new_slot();
        let mut unwatched = OnThreshold::new(None, off, None);
        unwatched.check(u64::MAX - 1, 1, 0, 1);
        assert_eq!((off.crossed(), off.published()), (0, 0));
    }
}
