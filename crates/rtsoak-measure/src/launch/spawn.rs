//! Starting a worker: execute the worker binary beside this one (`rtsoak-worker`, found and
//! checked by [`worker_binary`](super::worker_binary)) with four fds mapped to fixed numbers
//! (spec, shared region, report memfd, frame ring), and for an RT worker watching
//! `--on-threshold` a fifth (the coordinator's bell), through `posix_spawn` (`sys::spawn`):
//! nothing of the coordinator is copied, and it is safe with threads.

use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use anyhow::Context;
use nix::sys::memfd::{MFdFlags, memfd_create};

use crate::protocol::WorkerSpec;
use crate::protocol::ring::RingReader;
use crate::protocol::{BELL_FD, FRAMES_FD, Frames, REGION_FD, REPORT_FD, ReportStream, SPEC_FD};
use rtsoak_record::Role;
use rtsoak_sys::region::SharedRegion;
use rtsoak_sys::spawn::Process;

/// Frame ring of an RT worker, data bytes. A frame takes about 2 bytes per recorded bucket
/// (see `protocol::frame`). Measured on a busy 2-CPU machine under the default noise, the RT
/// subscriber's widest series spread over 6,800 buckets in a 10 s interval, a 15 KB frame, and
/// its two series 25 KB an interval; a quiet RT board spreads far less. The ring must hold one
/// interval of all a worker's series (they are shipped back to back) and then some, since the
/// coordinator drains it every 10 ms and intervals last at least 1 s: 256 KiB holds ten such
/// intervals, and even one frame with every one of the 25,600 buckets of 1 ns..10 s at the
/// largest 32-bit count (176,690 bytes, tested below). A frame is lost only if the coordinator
/// stalls for many intervals; it is then counted and the run fails saying so.
pub(crate) const RT_RING_BYTES: usize = 256 << 10;
/// Frame ring of a queue-noise worker: it ships one frame per series when it exits (a few KiB
/// for a default 50–500 ms life), drained when it is reaped.
pub(crate) const QUEUE_NOISE_RING_BYTES: usize = 64 << 10;
/// Frame ring of a worker that ships no frames (bursts, load).
pub(crate) const NO_FRAMES_RING_BYTES: usize = 4 << 10;

/// A started worker and the coordinator's end of its frames and report.
pub(crate) struct Spawned {
    /// The process.
    pub(crate) child: Process,
    /// Its report memfd (same open file as the worker's [`REPORT_FD`]).
    pub(crate) report: File,
    /// Its frame ring.
    pub(crate) frames: Frames,
    /// What it was asked to do.
    pub(crate) spec: WorkerSpec,
}

impl Spawned {
    /// Everything it left: a last drain of its ring, its frames decoded, its final report.
    pub(crate) fn collect(&mut self) -> ReportStream {
        self.frames.collect(&mut self.report)
    }
}

/// A fresh frame ring sized for `role`, named after `slot`.
pub(crate) fn ring_for(role: Role, slot: usize) -> anyhow::Result<RingReader> {
    let bytes = match role {
        Role::Publisher | Role::Subscriber => RT_RING_BYTES,
        Role::NoisePublisher | Role::NoiseSubscriber => QUEUE_NOISE_RING_BYTES,
        Role::Burst | Role::Load => NO_FRAMES_RING_BYTES,
    };
    RingReader::create(&format!("rtsoak-frames-{slot}"), bytes)
        .with_context(|| format!("creating the frame ring of worker slot {slot}"))
}

/// Start one worker for `spec` on `region`, shipping its frames into `ring` (a fresh one from
/// [`ring_for`], or a drained one whose previous worker has ended).
pub(crate) fn spawn(
    spec: WorkerSpec,
    region: &SharedRegion,
    ring: RingReader,
) -> anyhow::Result<Spawned> {
    spawn_with_bell(spec, region, ring, None)
}

/// [`spawn`], giving the worker `bell` (the write end of the coordinator's bell) as
/// [`BELL_FD`].
pub(crate) fn spawn_with_bell(
    spec: WorkerSpec,
    region: &SharedRegion,
    ring: RingReader,
    bell: Option<BorrowedFd<'_>>,
) -> anyhow::Result<Spawned> {
    let spec_fd = memfd(&format!("rtsoak-spec-{}", spec.slot))?;
    let mut spec_file = File::from(spec_fd);
    // One write: serde_json writes token by token, a syscall each on an unbuffered file.
    spec_file.write_all(&serde_json::to_vec(&spec)?)?;
    spec_file.seek(SeekFrom::Start(0))?;
    let report = File::from(memfd(&format!("rtsoak-report-{}", spec.slot))?);
    let frames = Frames::new(ring);

    let (program, args) = super::worker_binary::worker_executable()?;
    let mut fds = vec![
        (spec_file.as_fd(), SPEC_FD),
        (region.memory().fd().as_fd(), REGION_FD),
        (report.as_fd(), REPORT_FD),
        (frames.fd().as_fd(), FRAMES_FD),
    ];
    fds.extend(bell.map(|bell| (bell, BELL_FD)));
    let child = rtsoak_sys::spawn::spawn(program, args, &fds)
        .with_context(|| format!("starting the {:?} worker", spec.role))?;
    Ok(Spawned {
        child,
        report,
        frames,
        spec,
    })
}

fn memfd(name: &str) -> anyhow::Result<OwnedFd> {
    memfd_create(name, MFdFlags::MFD_CLOEXEC).with_context(|| format!("memfd_create({name})"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::frame::{FrameHeader, encode};
    use rtsoak_analysis::stats::{HIGHEST_NS, new_interval_histogram};
    use rtsoak_record::SampleStats;

    #[test]
    fn an_rt_ring_holds_a_frame_of_every_bucket_at_the_largest_count() {
        let mut histogram = new_interval_histogram();
        let mut value = 1;
        while value <= HIGHEST_NS {
            histogram.record_n(value, u32::MAX).unwrap();
            value = histogram.next_non_equivalent(value);
        }
        let header = FrameHeader {
            series: u32::MAX,
            index: u32::MAX,
            start_ns: u64::MAX,
            length_ns: u64::MAX,
            stats: SampleStats {
                count: u64::MAX,
                min_ns: u64::MAX,
                max_ns: u64::MAX,
                over_threshold: u64::MAX,
            },
        };
        let mut bytes = Vec::new();
        encode(&mut bytes, &header, &histogram);
        eprintln!("the largest frame: {} bytes", bytes.len());
        // The ring also holds the frame's 4-byte length.
        assert!(bytes.len() + 4 <= RT_RING_BYTES, "{} bytes", bytes.len());
    }
}
