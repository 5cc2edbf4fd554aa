//! The shared-memory message queue: a multi-producer broadcast ring. Publishers claim a
//! position with one atomic add and commit the message there; every subscriber reads every
//! message through its own cursor. Messages carry sequence number, publisher id and send time;
//! the transport only carries the wakeup.
//!
//! A publisher preempted between claim and commit leaves a *hole*. Readers step over a hole and
//! come back to it (a handful at a time), so one slow low-priority publisher cannot hold back
//! messages published after it; before handing out any later message they look at their holes
//! again, so one publisher's messages still come out in its order. A reader that falls more
//! than a ring behind loses the overwritten messages and counts them.
//!
//! Nothing here allocates, blocks or makes a syscall.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};

/// Slots in the ring. At a 500 us RT period plus noise publishers every 200 us, that is more
/// than 300 ms of messages before a stalled reader loses any.
pub(crate) const QUEUE_SLOTS: usize = 4096;

/// Flag: the message belongs to the warm-up and is not measured.
pub const FLAG_WARMUP: u32 = 1;

/// A message as it travels through the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message {
    /// Per-publisher sequence number, from 0.
    pub seq: u64,
    /// `CLOCK_MONOTONIC` ns taken just before the publisher's send call.
    pub send_ns: u64,
    /// 0 for the RT publisher; noise publishers count up from 1.
    pub publisher_id: u32,
    /// [`FLAG_WARMUP`] or 0.
    pub flags: u32,
}

/// One slot, a cache line of its own so that publishers on different CPUs do not false-share.
#[repr(C, align(64))]
#[derive(Default)]
struct Slot {
    /// `position + 1` once the message at `position` is committed; [`WRITING`] while a
    /// publisher is writing it.
    stamp: AtomicU64,
    seq: AtomicU64,
    send_ns: AtomicU64,
    publisher_id: AtomicU32,
    flags: AtomicU32,
}

const WRITING: u64 = u64::MAX;

/// The queue as it lies in shared memory. All-zero bytes are a valid empty queue.
#[repr(C)]
pub struct Queue {
    /// Next position to claim. Alone on its cache line: every publisher hits it.
    head: PaddedU64,
    slots: [Slot; QUEUE_SLOTS],
}

#[repr(C, align(64))]
struct PaddedU64(AtomicU64);

/// What a reader found at one position.
enum Peek {
    Ready(Message),
    NotYet,
    Overwritten,
}

impl Queue {
    fn slot(&self, position: u64) -> &Slot {
        &self.slots[(position % QUEUE_SLOTS as u64) as usize]
    }

    /// Claim the next position and commit `message` there. Returns the position.
    #[inline]
    pub fn publish(&self, message: &Message) -> u64 {
        let position = self.head.0.fetch_add(1, Ordering::AcqRel);
        let slot = self.slot(position);
        slot.stamp.store(WRITING, Ordering::Relaxed);
        fence(Ordering::Release);
        slot.seq.store(message.seq, Ordering::Relaxed);
        slot.send_ns.store(message.send_ns, Ordering::Relaxed);
        slot.publisher_id
            .store(message.publisher_id, Ordering::Relaxed);
        slot.flags.store(message.flags, Ordering::Relaxed);
        slot.stamp.store(position + 1, Ordering::Release);
        position
    }

    /// Position the next publish will take: where a joining subscriber starts reading.
    pub fn head(&self) -> u64 {
        self.head.0.load(Ordering::Acquire)
    }

    fn peek(&self, position: u64) -> Peek {
        let slot = self.slot(position);
        let stamp = slot.stamp.load(Ordering::Acquire);
        if stamp == position + 1 {
            let message = Message {
                seq: slot.seq.load(Ordering::Relaxed),
                send_ns: slot.send_ns.load(Ordering::Relaxed),
                publisher_id: slot.publisher_id.load(Ordering::Relaxed),
                flags: slot.flags.load(Ordering::Relaxed),
            };
            fence(Ordering::Acquire);
            if slot.stamp.load(Ordering::Relaxed) == stamp {
                return Peek::Ready(message);
            }
            return Peek::Overwritten;
        }
        if stamp != WRITING && stamp > position + 1 {
            return Peek::Overwritten;
        }
        // Not committed yet, or being overwritten by a publisher a whole ring ahead.
        if self.head() > position + QUEUE_SLOTS as u64 {
            Peek::Overwritten
        } else {
            Peek::NotYet
        }
    }
}

/// Holes a reader remembers at once. Beyond that it waits at the oldest hole instead of
/// stepping over it.
const MAX_HOLES: usize = 16;

/// One subscriber's read position plus the holes it stepped over.
pub struct Cursor {
    next: u64,
    holes: [u64; MAX_HOLES],
    hole_count: usize,
    /// Messages overwritten before this reader could read them.
    pub overrun: u64,
    /// Messages handed out so far.
    pub taken: u64,
}

impl Cursor {
    /// A cursor that reads everything published from `position` on.
    pub fn at(position: u64) -> Self {
        Cursor {
            next: position,
            holes: [0; MAX_HOLES],
            hole_count: 0,
            overrun: 0,
            taken: 0,
        }
    }

    /// Position of the next unread message (holes aside).
    pub fn position(&self) -> u64 {
        self.next
    }

    /// Holes not yet filled.
    pub fn pending_holes(&self) -> usize {
        self.hole_count
    }

    /// Hand every message now readable to `deliver`, oldest first (filled holes first).
    /// Returns how many were delivered.
    #[inline]
    pub fn drain(&mut self, queue: &Queue, deliver: impl FnMut(&Message)) -> u64 {
        self.drain_to(queue, u64::MAX, deliver)
    }

    /// As [`Cursor::drain`], but never past position `limit`.
    #[inline]
    pub fn drain_to(
        &mut self,
        queue: &Queue,
        limit: u64,
        mut deliver: impl FnMut(&Message),
    ) -> u64 {
        let mut delivered = self.fill_holes(queue, &mut deliver);
        let head = queue.head().min(limit);
        while self.next < head {
            if head - self.next > QUEUE_SLOTS as u64 {
                let oldest_kept = head - QUEUE_SLOTS as u64;
                self.overrun += oldest_kept - self.next;
                self.next = oldest_kept;
            }
            match queue.peek(self.next) {
                Peek::Ready(message) => {
                    // A hole may have been committed since it was last looked at: it holds an
                    // earlier message of its publisher (which commits before it claims again,
                    // and whose commit this read of a later slot now sees), so it goes first.
                    if self.hole_count > 0 {
                        delivered += self.fill_holes(queue, &mut deliver);
                    }
                    deliver(&message);
                    delivered += 1;
                }
                Peek::Overwritten => self.overrun += 1,
                Peek::NotYet => {
                    if self.hole_count == MAX_HOLES {
                        break;
                    }
                    self.holes[self.hole_count] = self.next;
                    self.hole_count += 1;
                }
            }
            self.next += 1;
        }
        self.taken += delivered;
        delivered
    }

    /// Hand out every hole that has been committed since; count the overwritten ones.
    #[inline]
    fn fill_holes(&mut self, queue: &Queue, deliver: &mut impl FnMut(&Message)) -> u64 {
        let mut delivered = 0;
        let mut i = 0;
        while i < self.hole_count {
            match queue.peek(self.holes[i]) {
                Peek::Ready(message) => {
                    deliver(&message);
                    delivered += 1;
                    self.remove_hole(i);
                }
                Peek::Overwritten => {
                    self.overrun += 1;
                    self.remove_hole(i);
                }
                Peek::NotYet => i += 1,
            }
        }
        delivered
    }

    fn remove_hole(&mut self, i: usize) {
        self.holes.copy_within(i + 1..self.hole_count, i);
        self.hole_count -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new_queue() -> Box<Queue> {
        // SAFETY: Queue is made of atomics, for which all-zero bytes are valid.
        unsafe { Box::new_zeroed().assume_init() }
    }

    fn message(seq: u64) -> Message {
        Message {
            seq,
            send_ns: seq * 10,
            publisher_id: 0,
            flags: 0,
        }
    }

    #[test]
    fn every_reader_sees_every_message_in_order() {
        let queue = new_queue();
        let mut a = Cursor::at(queue.head());
        for seq in 0..10 {
            queue.publish(&message(seq));
        }
        let mut b = Cursor::at(0);
        for cursor in [&mut a, &mut b] {
            let mut seen = Vec::new();
            cursor.drain(&queue, |m| seen.push(m.seq));
            assert_eq!(seen, (0..10).collect::<Vec<_>>());
        }
    }

    #[test]
    fn draining_to_a_limit_stops_there_and_counts_what_was_taken() {
        let queue = new_queue();
        for seq in 0..6 {
            queue.publish(&message(seq));
        }
        let mut cursor = Cursor::at(1);
        let mut seen = Vec::new();
        cursor.drain_to(&queue, 4, |m| seen.push(m.seq));
        assert_eq!(seen, vec![1, 2, 3]);
        assert_eq!(cursor.taken, 3);
        cursor.drain(&queue, |m| seen.push(m.seq));
        assert_eq!(cursor.taken, 5);
    }

    #[test]
    fn a_reader_joining_late_sees_only_later_messages() {
        let queue = new_queue();
        queue.publish(&message(0));
        let mut late = Cursor::at(queue.head());
        queue.publish(&message(1));
        let mut seen = Vec::new();
        late.drain(&queue, |m| seen.push(m.seq));
        assert_eq!(seen, vec![1]);
    }

    #[test]
    fn a_reader_steps_over_an_uncommitted_slot_and_returns_to_it() {
        let queue = new_queue();
        // A publisher claims position 0 but has not committed it yet.
        let claimed = queue.head.0.fetch_add(1, Ordering::AcqRel);
        queue.slot(claimed).stamp.store(WRITING, Ordering::Relaxed);
        queue.publish(&message(7));
        let mut cursor = Cursor::at(0);
        let mut seen = Vec::new();
        cursor.drain(&queue, |m| seen.push(m.seq));
        assert_eq!(seen, vec![7], "the later message is not held back");
        assert_eq!(cursor.pending_holes(), 1);
        // The slow publisher commits.
        let slot = queue.slot(claimed);
        slot.seq.store(3, Ordering::Relaxed);
        slot.stamp.store(claimed + 1, Ordering::Release);
        cursor.drain(&queue, |m| seen.push(m.seq));
        assert_eq!(seen, vec![7, 3]);
        assert_eq!(cursor.pending_holes(), 0);
    }

    #[test]
    fn a_hole_committed_while_the_reader_drains_comes_out_before_its_publishers_next_message() {
        let queue = new_queue();
        let claim = |publisher_id: u32, seq: u64| {
            let position = queue.head.0.fetch_add(1, Ordering::AcqRel);
            let slot = queue.slot(position);
            slot.stamp.store(WRITING, Ordering::Relaxed);
            slot.seq.store(seq, Ordering::Relaxed);
            slot.publisher_id.store(publisher_id, Ordering::Relaxed);
            position
        };
        let commit = |position: u64| {
            queue
                .slot(position)
                .stamp
                .store(position + 1, Ordering::Release)
        };
        // Publishers 1 and 3 each claim a position and are preempted before they commit.
        let first = claim(1, 0);
        let third = claim(3, 0);
        let mut cursor = Cursor::at(0);
        assert_eq!(cursor.drain(&queue, |_| {}), 0);
        assert_eq!(cursor.pending_holes(), 2);
        commit(third);
        let mut seen = Vec::new();
        cursor.drain(&queue, |m| {
            seen.push((m.publisher_id, m.seq));
            if m.publisher_id == 3 {
                // While the reader is past publisher 1's hole, publisher 1 commits its message 0
                // and publishes its message 1 at the head.
                commit(first);
                queue.publish(&Message {
                    seq: 1,
                    send_ns: 0,
                    publisher_id: 1,
                    flags: 0,
                });
            }
        });
        assert_eq!(
            seen,
            [(3, 0), (1, 0), (1, 1)],
            "publisher 1's order is kept"
        );
        assert_eq!(cursor.pending_holes(), 0);
    }

    #[test]
    fn a_reader_more_than_a_ring_behind_counts_the_overwritten_messages() {
        let queue = new_queue();
        let mut cursor = Cursor::at(0);
        let total = QUEUE_SLOTS as u64 + 100;
        for seq in 0..total {
            queue.publish(&message(seq));
        }
        let mut first = None;
        let delivered = cursor.drain(&queue, |m| {
            first.get_or_insert(m.seq);
        });
        assert_eq!(cursor.overrun, 100);
        assert_eq!(delivered, QUEUE_SLOTS as u64);
        assert_eq!(first, Some(100));
    }

    #[test]
    fn concurrent_publishers_lose_nothing() {
        let queue: &'static Queue = Box::leak(new_queue());
        let publishers: Vec<_> = (0..4u32)
            .map(|id| {
                std::thread::spawn(move || {
                    for seq in 0..500 {
                        queue.publish(&Message {
                            seq,
                            send_ns: 0,
                            publisher_id: id,
                            flags: 0,
                        });
                    }
                })
            })
            .collect();
        let mut cursor = Cursor::at(0);
        let mut next_seq = [0u64; 4];
        let mut received = 0;
        while received < 2000 {
            received += cursor.drain(queue, |m| {
                assert_eq!(
                    m.seq, next_seq[m.publisher_id as usize],
                    "per-publisher order kept"
                );
                next_seq[m.publisher_id as usize] += 1;
            });
        }
        publishers.into_iter().for_each(|p| p.join().unwrap());
        assert_eq!(cursor.overrun, 0);
        assert_eq!(next_seq, [500; 4]);
    }
}
