//! The frame ring: a single-producer, single-consumer byte ring in a memfd that the coordinator
//! creates and sizes, one per worker. The worker (producer) copies a whole frame in with plain
//! stores and publishes it by advancing one position; the coordinator (consumer) copies whole
//! frames out on its supervision tick and advances the other. Neither side ever waits for the
//! other, and nothing after the mapping is a syscall.
//!
//! Owns the ring's layout and both sides' rules. Never blocks, never allocates on the producer
//! side, and never trusts the other process's position: a position out of bounds is a full ring
//! to the producer and an error to the consumer.
//!
//! Layout: a header of 64-bit words (magic and capacity, then the write position, the read
//! position and the count of frames that did not fit, each on a cache line of its own), then
//! `capacity` data bytes, a power of two. Positions count bytes since creation and never wrap;
//! a byte's place is `position % capacity`. A frame is a 4-byte little-endian payload length and
//! the payload, and may wrap around the end of the data area.

use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use anyhow::ensure;

use rtsoak_sys::SysError;
use rtsoak_sys::shm::SharedMemory;

const MAGIC: u64 = u64::from_le_bytes(*b"rtsfrm\0\x01");
const HEADER_WORDS: usize = 32;
const MAGIC_WORD: usize = 0;
const CAPACITY_WORD: usize = 1;
/// Written by the producer only.
const WRITE_WORD: usize = 8;
/// Written by the consumer only.
const READ_WORD: usize = 16;
/// Written by the producer only.
const LOST_WORD: usize = 24;
/// Bytes before each payload: its length.
const LENGTH_BYTES: u64 = 4;

/// A mapped frame ring (either side).
pub(crate) struct FrameRing {
    memory: SharedMemory,
    capacity: u64,
}

impl FrameRing {
    /// Create a ring of `capacity_bytes` data bytes (a power of two) in a memfd named `name`
    /// (coordinator).
    pub(crate) fn create(name: &str, capacity_bytes: usize) -> Result<Self, SysError> {
        if !capacity_bytes.is_power_of_two() || capacity_bytes > u32::MAX as usize {
            return Err(SysError::new("memfd_create", nix::errno::Errno::EINVAL));
        }
        let memory = SharedMemory::create(name, HEADER_WORDS * 8 + capacity_bytes)?;
        let ring = FrameRing {
            memory,
            capacity: capacity_bytes as u64,
        };
        let (header, _) = ring.parts();
        header[CAPACITY_WORD].store(ring.capacity, Ordering::Relaxed);
        header[MAGIC_WORD].store(MAGIC, Ordering::Release);
        Ok(ring)
    }

    /// Attach to an inherited ring (worker), checking it is one this binary made.
    pub(crate) fn attach(memory: SharedMemory) -> anyhow::Result<Self> {
        let Some((header, data)) = memory.split_atomic(HEADER_WORDS) else {
            anyhow::bail!(
                "the frame ring is too small for its header: coordinator and worker binaries differ"
            );
        };
        let capacity = header[CAPACITY_WORD].load(Ordering::Relaxed);
        ensure!(
            header[MAGIC_WORD].load(Ordering::Acquire) == MAGIC
                && capacity.is_power_of_two()
                && capacity <= data.len() as u64,
            "the frame ring has the wrong layout: coordinator and worker binaries differ"
        );
        Ok(FrameRing { memory, capacity })
    }

    /// The memfd, to hand to a worker.
    pub(crate) fn fd(&self) -> &OwnedFd {
        self.memory.fd()
    }

    fn parts(&self) -> (&[AtomicU64], &[AtomicU8]) {
        self.memory
            .split_atomic(HEADER_WORDS)
            .expect("the mapping holds the header: checked when it was created or attached")
    }
}

/// A frame that did not fit: counted in the ring, never waited for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the frame ring is full: the frame was dropped and counted")]
pub(crate) struct RingFull;

/// The producer's side (a worker).
pub(crate) struct RingWriter {
    ring: FrameRing,
    /// Where the next frame starts: the published write position, kept here so the producer
    /// never reads back its own position from shared memory.
    write: u64,
}

impl RingWriter {
    /// The producer of `ring`, continuing after whatever was written before.
    pub(crate) fn new(ring: FrameRing) -> Self {
        let write = ring.parts().0[WRITE_WORD].load(Ordering::Relaxed);
        RingWriter { ring, write }
    }

    /// Start a frame. Nothing of it is visible to the consumer until [`FrameSink::commit`].
    pub(crate) fn frame(&mut self) -> FrameSink<'_> {
        let capacity = self.ring.capacity;
        let (header, data) = self.ring.parts();
        let read = header[READ_WORD].load(Ordering::Acquire);
        // A sane consumer's position lies within one capacity behind ours; any other leaves
        // no room, rather than letting us overwrite what it may still be reading.
        let limit = if read <= self.write && self.write - read <= capacity {
            read + capacity
        } else {
            self.write
        };
        FrameSink {
            header,
            data,
            mask: capacity - 1,
            start: self.write,
            at: self.write + LENGTH_BYTES,
            limit,
            write: &mut self.write,
        }
    }

    /// Frames that did not fit since the ring was created.
    #[cfg(test)]
    fn lost(&self) -> u64 {
        self.ring.parts().0[LOST_WORD].load(Ordering::Relaxed)
    }
}

/// One frame being written. Bytes past the room left are not stored, only counted, so that
/// [`FrameSink::commit`] can tell the frame did not fit.
pub(crate) struct FrameSink<'a> {
    header: &'a [AtomicU64],
    data: &'a [AtomicU8],
    mask: u64,
    start: u64,
    at: u64,
    limit: u64,
    write: &'a mut u64,
}

impl FrameSink<'_> {
    /// Append one byte.
    #[inline]
    pub(crate) fn put(&mut self, byte: u8) {
        if self.at < self.limit {
            self.data[(self.at & self.mask) as usize].store(byte, Ordering::Relaxed);
        }
        self.at += 1;
    }

    /// Publish the frame if it fitted; otherwise drop it and count it in the ring.
    pub(crate) fn commit(self) -> Result<(), RingFull> {
        if self.at > self.limit {
            self.header[LOST_WORD].fetch_add(1, Ordering::Relaxed);
            return Err(RingFull);
        }
        // Fits in u32: the whole frame fits in the ring, whose capacity does.
        let length = (self.at - self.start - LENGTH_BYTES) as u32;
        for (offset, byte) in length.to_le_bytes().into_iter().enumerate() {
            self.data[((self.start + offset as u64) & self.mask) as usize]
                .store(byte, Ordering::Relaxed);
        }
        // Release: the consumer that sees this position sees every byte stored before it.
        self.header[WRITE_WORD].store(self.at, Ordering::Release);
        *self.write = self.at;
        Ok(())
    }
}

/// The consumer's side (the coordinator).
pub(crate) struct RingReader {
    ring: FrameRing,
    read: u64,
    lost_seen: u64,
    payload: Vec<u8>,
}

impl RingReader {
    /// Create a ring of `capacity_bytes` (a power of two) and be its consumer.
    pub(crate) fn create(name: &str, capacity_bytes: usize) -> Result<Self, SysError> {
        Ok(Self::new(FrameRing::create(name, capacity_bytes)?))
    }

    /// The consumer of `ring`, from whatever was read before.
    pub(crate) fn new(ring: FrameRing) -> Self {
        let read = ring.parts().0[READ_WORD].load(Ordering::Relaxed);
        RingReader {
            ring,
            read,
            lost_seen: 0,
            payload: Vec::new(),
        }
    }

    /// The ring's memfd, to hand to its producer.
    pub(crate) fn fd(&self) -> &OwnedFd {
        self.ring.fd()
    }

    /// Hand every whole frame published so far to `each`, oldest first, then give their room
    /// back to the producer. Returns how many there were. A frame still being written is not
    /// seen: the producer publishes its position only after the whole frame.
    pub(crate) fn drain(&mut self, mut each: impl FnMut(&[u8])) -> anyhow::Result<usize> {
        let capacity = self.ring.capacity;
        let (header, data) = self.ring.parts();
        let mask = capacity - 1;
        // Acquire: every byte of the frames up to `write` is visible.
        let write = header[WRITE_WORD].load(Ordering::Acquire);
        ensure!(
            write >= self.read && write - self.read <= capacity,
            "the frame ring's write position {write} is not within one capacity after the read \
             position {}: the worker wrote outside the ring's rules",
            self.read
        );
        let mut frames = 0;
        let mut outcome = Ok(());
        while write - self.read >= LENGTH_BYTES {
            let mut length = [0u8; LENGTH_BYTES as usize];
            copy_out(data, mask, self.read, &mut length);
            let length = u64::from(u32::from_le_bytes(length));
            if write - self.read - LENGTH_BYTES < length {
                outcome = Err(anyhow::anyhow!(
                    "a frame in the frame ring runs past the published end: the worker wrote \
                     outside the ring's rules"
                ));
                break;
            }
            self.payload.clear();
            self.payload.resize(length as usize, 0);
            copy_out(data, mask, self.read + LENGTH_BYTES, &mut self.payload);
            each(&self.payload);
            self.read += LENGTH_BYTES + length;
            frames += 1;
        }
        if outcome.is_ok() && write != self.read {
            outcome = Err(anyhow::anyhow!(
                "the frame ring ends in a partial frame header: the worker wrote outside the \
                 ring's rules"
            ));
        }
        // Release: the producer that sees this position sees that we are done with the bytes.
        // After a bad frame everything published is given up, so a confused producer can go on.
        if outcome.is_err() {
            self.read = write;
        }
        header[READ_WORD].store(self.read, Ordering::Release);
        outcome.map(|()| frames)
    }

    /// Frames the producer dropped (the ring was full) since the last call.
    pub(crate) fn take_lost(&mut self) -> u64 {
        let lost = self.ring.parts().0[LOST_WORD].load(Ordering::Relaxed);
        let new = lost.saturating_sub(self.lost_seen);
        self.lost_seen = lost;
        new
    }
}

fn copy_out(data: &[AtomicU8], mask: u64, from: u64, out: &mut [u8]) {
    for (offset, byte) in out.iter_mut().enumerate() {
        *byte = data[((from + offset as u64) & mask) as usize].load(Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer and a reader of one fresh ring of `capacity` bytes, as two processes would
    /// have them (the worker's side attached through the inherited memfd).
    fn pair(capacity: usize) -> (RingWriter, RingReader) {
        let reader = RingReader::create("rtsoak-test-ring", capacity).unwrap();
        let memory = SharedMemory::map(reader.fd().try_clone().unwrap()).unwrap();
        (RingWriter::new(FrameRing::attach(memory).unwrap()), reader)
    }

    fn write(writer: &mut RingWriter, payload: &[u8]) -> Result<(), RingFull> {
        let mut frame = writer.frame();
        for &byte in payload {
            frame.put(byte);
        }
        frame.commit()
    }

    fn read_all(reader: &mut RingReader) -> Vec<Vec<u8>> {
        let mut frames = Vec::new();
        reader
            .drain(|payload| frames.push(payload.to_vec()))
            .unwrap();
        frames
    }

    #[test]
    fn frames_come_out_whole_and_in_order() {
        let (mut writer, mut reader) = pair(64);
        write(&mut writer, b"first").unwrap();
        write(&mut writer, b"").unwrap();
        write(&mut writer, b"third one").unwrap();
        assert_eq!(
            read_all(&mut reader),
            [b"first".to_vec(), Vec::new(), b"third one".to_vec()]
        );
        assert!(read_all(&mut reader).is_empty(), "a frame is read once");
    }

    #[test]
    fn frames_wrap_around_the_end_of_the_data_area() {
        let (mut writer, mut reader) = pair(32);
        // 4 + 13 bytes per frame: the positions run around a 32-byte ring many times, and
        // frames (and their lengths) straddle the end.
        for round in 0..50u8 {
            let payload: Vec<u8> = (0..13)
                .map(|i| round.wrapping_mul(31).wrapping_add(i))
                .collect();
            write(&mut writer, &payload).unwrap();
            assert_eq!(read_all(&mut reader), [payload]);
        }
        assert_eq!(reader.take_lost(), 0);
    }

    #[test]
    fn a_full_ring_counts_the_frame_instead_of_waiting() {
        let (mut writer, mut reader) = pair(32);
        write(&mut writer, &[1; 20]).unwrap();
        // 4 + 20 bytes are taken; a frame of 4 + 9 needs more than the 8 left.
        assert_eq!(write(&mut writer, &[2; 9]), Err(RingFull));
        assert_eq!(writer.lost(), 1);
        assert_eq!(reader.take_lost(), 1);
        assert_eq!(reader.take_lost(), 0, "each loss is reported once");
        // The dropped frame left nothing behind: the next one that fits follows the first.
        write(&mut writer, &[3; 4]).unwrap();
        assert_eq!(read_all(&mut reader), [vec![1; 20], vec![3; 4]]);
        // Drained, the whole ring is free again.
        write(&mut writer, &[4; 28]).unwrap();
        assert_eq!(read_all(&mut reader), [vec![4; 28]]);
    }

    #[test]
    fn a_frame_larger_than_the_ring_is_counted_not_written() {
        let (mut writer, mut reader) = pair(32);
        assert_eq!(write(&mut writer, &[9; 100]), Err(RingFull));
        assert!(read_all(&mut reader).is_empty());
        assert_eq!(reader.take_lost(), 1);
    }

    #[test]
    fn a_reader_sees_only_frames_whose_writing_is_finished() {
        let (mut writer, mut reader) = pair(64);
        write(&mut writer, b"done").unwrap();
        let mut frame = writer.frame();
        for &byte in b"half" {
            frame.put(byte);
        }
        // The second frame's bytes are in the ring, but not its position.
        assert_eq!(read_all(&mut reader), [b"done".to_vec()]);
        frame.commit().unwrap();
        assert_eq!(read_all(&mut reader), [b"half".to_vec()]);
    }

    #[test]
    fn an_abandoned_frame_leaves_nothing_behind() {
        let (mut writer, mut reader) = pair(64);
        {
            let mut frame = writer.frame();
            frame.put(7);
        }
        write(&mut writer, b"next").unwrap();
        assert_eq!(read_all(&mut reader), [b"next".to_vec()]);
    }

    #[test]
    fn a_new_writer_on_a_drained_ring_carries_on_after_the_old_one() {
        let reader = RingReader::create("rtsoak-test-ring", 32).unwrap();
        let attach = |reader: &RingReader| {
            let memory = SharedMemory::map(reader.fd().try_clone().unwrap()).unwrap();
            RingWriter::new(FrameRing::attach(memory).unwrap())
        };
        let mut reader = reader;
        let mut first = attach(&reader);
        write(&mut first, &[1; 20]).unwrap();
        drop(first);
        assert_eq!(read_all(&mut reader), [vec![1; 20]]);
        let mut second = attach(&reader);
        write(&mut second, &[2; 20]).unwrap();
        assert_eq!(read_all(&mut reader), [vec![2; 20]]);
    }

    #[test]
    fn frames_cross_between_threads_whole() {
        let (mut writer, mut reader) = pair(256);
        let producer = std::thread::spawn(move || {
            let mut sent = 0u32;
            let mut lost = 0u32;
            for n in 0..20_000u32 {
                let length = (n % 40) as u8;
                let mut frame = writer.frame();
                for i in 0..length {
                    frame.put(length.wrapping_add(i));
                }
                match frame.commit() {
                    Ok(()) => sent += 1,
                    Err(RingFull) => lost += 1,
                }
            }
            (sent, lost)
        });
        let mut received = 0u32;
        let check = |payload: &[u8]| {
            let length = payload.len() as u8;
            for (i, &byte) in payload.iter().enumerate() {
                assert_eq!(byte, length.wrapping_add(i as u8), "a torn frame");
            }
        };
        while !producer.is_finished() {
            received += reader.drain(check).unwrap() as u32;
        }
        received += reader.drain(check).unwrap() as u32;
        let (sent, lost) = producer.join().unwrap();
        assert_eq!(received, sent);
        assert_eq!(u64::from(lost), reader.take_lost());
    }

    #[test]
    fn a_bad_length_is_an_error_and_the_reader_goes_on() {
        let (mut writer, mut reader) = pair(64);
        write(&mut writer, b"ok").unwrap();
        read_all(&mut reader);
        // Scribble a length larger than what was published over the next frame.
        let (header, data) = writer.ring.parts();
        let at = header[WRITE_WORD].load(Ordering::Relaxed);
        for (offset, byte) in 50u32.to_le_bytes().into_iter().enumerate() {
            data[((at + offset as u64) & 63) as usize].store(byte, Ordering::Relaxed);
        }
        header[WRITE_WORD].store(at + 6, Ordering::Release);
        writer.write = at + 6;
        assert!(reader.drain(|_| {}).is_err());
        write(&mut writer, b"after").unwrap();
        assert_eq!(read_all(&mut reader), [b"after".to_vec()]);
    }
}
