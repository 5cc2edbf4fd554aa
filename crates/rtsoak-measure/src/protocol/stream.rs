//! What a worker leaves for the coordinator, and how the coordinator collects it. While it runs,
//! a worker ships one interval frame per series and finished interval into its frame ring
//! (pre-sized shared memory: copying a frame in is no syscall and never waits); the coordinator
//! drains the ring on its supervision tick and once more after the worker has ended, so a worker
//! that dies mid-run still leaves every finished interval. After its loop the worker writes its
//! final report, as JSON, to its report memfd.
//!
//! Shipping a frame never allocates, formats, makes a syscall or waits: a frame that does not
//! fit is dropped and counted, and the coordinator reports every one.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::OwnedFd;

use super::WorkerReport;
use super::frame::{self, FrameHeader, IntervalFrame};
use super::ring::{RingFull, RingReader, RingWriter};
use rtsoak_analysis::stats::Recorder;

/// Bytes before the report's JSON: its length, so a report cut off by a dying worker is told
/// from a whole one.
const REPORT_LENGTH_BYTES: usize = 4;
/// Frame problems described one by one; beyond this they are only counted.
const MAX_PROBLEMS: usize = 5;

/// The worker's side: its frame ring and its report memfd.
pub(crate) struct ReportWriter {
    frames: RingWriter,
    file: File,
}

impl ReportWriter {
    /// Ship interval frames into `frames` and the final report into `file`.
    pub(crate) fn new(file: File, frames: RingWriter) -> Self {
        ReportWriter { frames, file }
    }

    /// Ship `recorder`'s current interval as one frame. Allocation-free and syscall-free; a
    /// frame that does not fit is counted in the ring and reported as [`RingFull`].
    pub(crate) fn interval(
        &mut self,
        series: u32,
        index: u32,
        start_ns: u64,
        length_ns: u64,
        recorder: &Recorder,
    ) -> Result<(), RingFull> {
        let header = FrameHeader {
            series,
            index,
            start_ns,
            length_ns,
            stats: recorder.interval_stats,
        };
        let mut sink = self.frames.frame();
        frame::encode(&mut sink, &header, &recorder.interval);
        sink.commit()
    }

    /// Write the final report (after the loop: this allocates).
    pub(crate) fn report(&mut self, report: &WorkerReport) -> std::io::Result<()> {
        write_report(&mut self.file, report)
    }
}

/// Write a worker's final report to its report memfd, in one write.
pub(crate) fn write_report(file: &mut File, report: &WorkerReport) -> std::io::Result<()> {
    let json = serde_json::to_vec(report).map_err(std::io::Error::other)?;
    let mut bytes = Vec::with_capacity(REPORT_LENGTH_BYTES + json.len());
    bytes.extend_from_slice(&(json.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&json);
    file.write_all(&bytes)
}

/// Read a worker's final report from its report memfd: `None` if it has not (completely)
/// written one, an error if what it wrote does not decode.
pub(crate) fn read_report(file: &mut File) -> anyhow::Result<Option<WorkerReport>> {
    let mut bytes = Vec::new();
    file.seek(SeekFrom::Start(0))?;
    file.read_to_end(&mut bytes)?;
    parse_report(&bytes)
}

/// Parse the bytes of a report memfd (see [`read_report`]).
pub(crate) fn parse_report(bytes: &[u8]) -> anyhow::Result<Option<WorkerReport>> {
    let Some((length, json)) = bytes.split_first_chunk::<REPORT_LENGTH_BYTES>() else {
        return Ok(None);
    };
    let Some(json) = json.get(..u32::from_le_bytes(*length) as usize) else {
        return Ok(None); // cut off by a dying worker
    };
    Ok(Some(serde_json::from_slice(json)?))
}

/// The coordinator's end of one worker's frame ring, and what it has drained from it.
pub(crate) struct Frames {
    ring: RingReader,
    /// Drained frames kept encoded (length, payload), decoded when the run is built: a few
    /// kilobytes each instead of a 200 KiB histogram.
    kept: Vec<u8>,
    lost: u64,
    problems: Vec<String>,
    problems_dropped: u64,
}

impl Frames {
    /// Collect from `ring`.
    pub(crate) fn new(ring: RingReader) -> Self {
        Frames {
            ring,
            kept: Vec::new(),
            lost: 0,
            problems: Vec::new(),
            problems_dropped: 0,
        }
    }

    /// The ring's memfd, to hand to the worker.
    pub(crate) fn fd(&self) -> &OwnedFd {
        self.ring.fd()
    }

    /// Move every whole frame out of the ring and keep it (the supervision tick).
    pub(crate) fn drain(&mut self) {
        let kept = &mut self.kept;
        let drained = self.ring.drain(|payload| {
            kept.extend_from_slice(&(payload.len() as u32).to_le_bytes());
            kept.extend_from_slice(payload);
        });
        self.note(drained.err());
    }

    /// Hand every whole frame in the ring to `each` without keeping it (queue noise, folded as
    /// it comes).
    pub(crate) fn drain_each(&mut self, each: impl FnMut(&[u8])) {
        let drained = self.ring.drain(each);
        self.note(drained.err());
    }

    fn note(&mut self, error: Option<anyhow::Error>) {
        self.lost += self.ring.take_lost();
        if let Some(error) = error {
            self.problem(format!("{error:#}"));
        }
    }

    /// Remember a problem with the frames, to be reported.
    pub(crate) fn problem(&mut self, text: String) {
        if self.problems.len() < MAX_PROBLEMS {
            self.problems.push(text);
        } else {
            self.problems_dropped += 1;
        }
    }

    /// What went wrong with the frames drained since the last call, as one sentence, if
    /// anything did; and forget it.
    pub(crate) fn take_problems(&mut self) -> Option<String> {
        let text = describe(self.lost, &self.problems, self.problems_dropped);
        self.lost = 0;
        self.problems.clear();
        self.problems_dropped = 0;
        text
    }

    /// The last drain, after the worker ended: every kept frame decoded, the final report from
    /// `report_file`, and what went wrong. A frame whose histogram holds a different number of
    /// samples than its exact count (a 32-bit bucket filled, which the plan's limits rule out)
    /// is a problem too.
    pub(crate) fn collect(&mut self, report_file: &mut File) -> ReportStream {
        self.drain();
        let mut intervals = Vec::new();
        let mut rest = std::mem::take(&mut self.kept);
        let mut at = rest.as_slice();
        while let Some((length, tail)) = at.split_first_chunk::<4>() {
            let (payload, tail) = tail.split_at(u32::from_le_bytes(*length) as usize);
            at = tail;
            match frame::decode(payload) {
                Ok(frame) if frame.histogram.len() != frame.stats.count => {
                    self.problem(format!(
                        "interval {} of series {} holds {} samples in its histogram but counted \
                         {}",
                        frame.index,
                        frame.series,
                        frame.histogram.len(),
                        frame.stats.count
                    ));
                    intervals.push(frame);
                }
                Ok(frame) => intervals.push(frame),
                Err(error) => self.problem(format!("an interval frame: {error:#}")),
            }
        }
        rest.clear();
        self.kept = rest;
        let report = read_report(report_file).unwrap_or_else(|error| {
            self.problem(format!("the final report does not decode: {error:#}"));
            None
        });
        ReportStream {
            intervals,
            report,
            problems: self.take_problems(),
        }
    }

    /// Give the ring back, to hand to the next worker of the same seat.
    pub(crate) fn into_ring(self) -> RingReader {
        self.ring
    }
}

fn describe(lost: u64, problems: &[String], more: u64) -> Option<String> {
    let mut parts = Vec::new();
    if lost > 0 {
        parts.push(format!(
            "{lost} interval frames were lost: its frame ring was full (the coordinator did not \
             drain it for too long), so its histograms miss those intervals"
        ));
    }
    parts.extend(problems.iter().cloned());
    if more > 0 {
        parts.push(format!("and {more} more frame problems"));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// Everything collected from one worker.
#[derive(Debug, Default)]
pub(crate) struct ReportStream {
    /// Finished intervals, in the order shipped.
    pub(crate) intervals: Vec<IntervalFrame>,
    /// The final report, absent if the worker died before writing it.
    pub(crate) report: Option<WorkerReport>,
    /// What went wrong with its frames (lost ones included), as one sentence; `None` if nothing.
    pub(crate) problems: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::SeriesReport;
    use crate::protocol::ring::FrameRing;
    use rtsoak_sys::shm::SharedMemory;

    /// A worker's writer and the coordinator's end of its ring and report memfd.
    fn pair(ring_bytes: usize) -> (ReportWriter, Frames, File) {
        let reader = RingReader::create("rtsoak-test-frames", ring_bytes).unwrap();
        let memory = SharedMemory::map(reader.fd().try_clone().unwrap()).unwrap();
        let ring = RingWriter::new(FrameRing::attach(memory).unwrap());
        let file = tempfile::tempfile().unwrap();
        let writer = ReportWriter::new(file.try_clone().unwrap(), ring);
        (writer, Frames::new(reader), file)
    }

    #[test]
    fn interval_frames_and_the_final_report_round_trip() {
        let (mut writer, mut frames, mut file) = pair(4096);
        let mut recorder = Recorder::new(100, 8);
        recorder.record(5, 50);
        recorder.record(6, 150);
        writer.interval(1, 0, 0, 1_000, &recorder).unwrap();
        frames.drain();
        recorder.reset_interval();
        recorder.record(7, 70);
        writer.interval(1, 1, 1_000, 1_000, &recorder).unwrap();
        let report = WorkerReport {
            pid: 42,
            series: vec![(
                rtsoak_record::Series::Delivery,
                SeriesReport::from_recorder(&recorder),
            )],
            ..Default::default()
        };
        writer.report(&report).unwrap();

        let stream = frames.collect(&mut file);
        assert_eq!(stream.intervals.len(), 2);
        assert_eq!(stream.intervals[0].stats.count, 2);
        assert_eq!(stream.intervals[0].stats.over_threshold, 1);
        assert_eq!(stream.intervals[0].histogram.len(), 2);
        assert_eq!(stream.intervals[1].start_ns, 1_000);
        assert_eq!(stream.intervals[1].histogram.count_at(70), 1);
        assert_eq!(stream.report, Some(report));
        assert_eq!(stream.problems, None);
    }

    #[test]
    fn a_report_cut_off_mid_write_is_absent_and_the_intervals_stay() {
        let (mut writer, mut frames, mut file) = pair(4096);
        let recorder = Recorder::new(100, 0);
        writer.interval(0, 0, 0, 10, &recorder).unwrap();
        writer.report(&WorkerReport::default()).unwrap();
        let mut bytes = Vec::new();
        file.seek(SeekFrom::Start(0)).unwrap();
        file.read_to_end(&mut bytes).unwrap();
        assert!(parse_report(&bytes[..bytes.len() - 3]).unwrap().is_none());
        file.set_len(bytes.len() as u64 - 3).unwrap();
        let stream = frames.collect(&mut file);
        assert_eq!(stream.intervals.len(), 1);
        assert!(stream.report.is_none());
    }

    #[test]
    fn frames_that_did_not_fit_are_counted_and_named() {
        let (mut writer, mut frames, mut file) = pair(64);
        let mut recorder = Recorder::new(100, 0);
        for value in (1..200).map(|i| i * 1_013) {
            recorder.record(0, value);
        }
        for index in 0..3 {
            assert!(writer.interval(0, index, 0, 10, &recorder).is_err());
        }
        frames.drain();
        assert_eq!(frames.lost, 3);
        let stream = frames.collect(&mut file);
        assert!(stream.intervals.is_empty());
        let problems = stream.problems.unwrap();
        assert!(
            problems.starts_with("3 interval frames were lost"),
            "{problems}"
        );
    }
}
