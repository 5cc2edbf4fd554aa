//! The report stream: frames a worker appends to its report memfd while it runs (one binary
//! frame per finished interval histogram, then one JSON frame with the final report), and the
//! coordinator's reader. A worker that dies mid-run still leaves its finished intervals.
//!
//! Interval frames are written outside timed sections from buffers sized before the loop for
//! the largest possible frame: writing one never allocates.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};

use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};

use super::WorkerReport;
use crate::stats::{Recorder, SampleStats};

const FRAME_INTERVAL: u32 = 1;
const FRAME_REPORT: u32 = 2;
/// Frame header: kind u32, payload length u32.
const FRAME_HEADER: usize = 8;
/// Interval header: series u32, index u32, start u64, length u64, then SampleStats (4 × u64).
const INTERVAL_HEADER: usize = 4 + 4 + 8 + 8 + 32;

/// One finished interval of one series.
#[derive(Debug, Clone)]
pub struct IntervalFrame {
    /// Index of the series in the worker's series list.
    pub series: u32,
    /// Interval number from 0.
    pub index: u32,
    /// Start, ns after the measured phase began.
    pub start_ns: u64,
    /// Length, ns.
    pub length_ns: u64,
    /// Exact counters of the interval.
    pub stats: SampleStats,
    /// The interval's histogram.
    pub histogram: Histogram<u64>,
}

/// The worker's side of the report stream.
pub struct ReportWriter {
    file: File,
    serializer: V2Serializer,
    buffer: Vec<u8>,
}

impl ReportWriter {
    /// Wrap the inherited report fd and reserve everything an interval frame needs, so that
    /// writing one later does not allocate.
    pub fn new(file: File) -> Self {
        let mut writer = ReportWriter {
            file,
            serializer: V2Serializer::new(),
            buffer: Vec::new(),
        };
        // Serialize a histogram holding the highest trackable value once: this grows the
        // serializer's scratch space to its largest possible size (it reserves room for every
        // count up to the highest recorded value). Our own buffer gets room for the largest
        // possible frame: the V2 header and up to 9 bytes per count.
        let mut widest = crate::stats::new_histogram();
        widest.saturating_record(crate::stats::HIGHEST_NS);
        let _ = writer.serializer.serialize(&widest, &mut writer.buffer);
        const V2_HEADER: usize = 40;
        let largest = FRAME_HEADER + INTERVAL_HEADER + V2_HEADER + 9 * widest.distinct_values();
        writer.buffer.clear();
        writer.buffer.reserve(largest);
        writer
    }

    /// Append one interval frame for `recorder`'s current interval.
    pub fn interval(
        &mut self,
        series: u32,
        index: u32,
        start_ns: u64,
        length_ns: u64,
        recorder: &Recorder,
    ) -> std::io::Result<()> {
        self.buffer.clear();
        self.buffer.extend_from_slice(&FRAME_INTERVAL.to_le_bytes());
        self.buffer.extend_from_slice(&0u32.to_le_bytes());
        self.buffer.extend_from_slice(&series.to_le_bytes());
        self.buffer.extend_from_slice(&index.to_le_bytes());
        self.buffer.extend_from_slice(&start_ns.to_le_bytes());
        self.buffer.extend_from_slice(&length_ns.to_le_bytes());
        let stats = &recorder.interval_stats;
        for value in [
            stats.count,
            stats.min_ns,
            stats.max_ns,
            stats.over_threshold,
        ] {
            self.buffer.extend_from_slice(&value.to_le_bytes());
        }
        self.serializer
            .serialize(&recorder.interval, &mut self.buffer)
            .map_err(|e| std::io::Error::other(format!("{e:?}")))?;
        let payload = (self.buffer.len() - FRAME_HEADER) as u32;
        self.buffer[4..8].copy_from_slice(&payload.to_le_bytes());
        self.file.write_all(&self.buffer)
    }

    /// Append the final report.
    pub fn report(&mut self, report: &WorkerReport) -> std::io::Result<()> {
        let json = serde_json::to_vec(report).map_err(std::io::Error::other)?;
        self.file.write_all(&FRAME_REPORT.to_le_bytes())?;
        self.file.write_all(&(json.len() as u32).to_le_bytes())?;
        self.file.write_all(&json)
    }
}

/// Everything read back from a worker's report stream.
#[derive(Debug, Default)]
pub struct ReportStream {
    /// Finished intervals, in the order written.
    pub intervals: Vec<IntervalFrame>,
    /// The final report, absent if the worker died before writing it.
    pub report: Option<WorkerReport>,
}

/// Read a report stream from the start. A truncated final frame (a worker killed mid-write) is
/// ignored; a malformed one is an error.
pub fn read_stream(file: &mut File) -> anyhow::Result<ReportStream> {
    let mut bytes = Vec::new();
    file.seek(SeekFrom::Start(0))?;
    file.read_to_end(&mut bytes)?;
    parse_stream(&bytes)
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

/// Parse the bytes of a report stream.
pub fn parse_stream(bytes: &[u8]) -> anyhow::Result<ReportStream> {
    let mut stream = ReportStream::default();
    let mut at = 0;
    while at + FRAME_HEADER <= bytes.len() {
        let kind = u32_at(bytes, at);
        let length = u32_at(bytes, at + 4) as usize;
        let Some(payload) = bytes.get(at + FRAME_HEADER..at + FRAME_HEADER + length) else {
            break; // truncated by a dying worker
        };
        match kind {
            FRAME_INTERVAL => {
                anyhow::ensure!(payload.len() >= INTERVAL_HEADER, "interval frame too short");
                let histogram = Deserializer::new()
                    .deserialize(&mut &payload[INTERVAL_HEADER..])
                    .map_err(|e| anyhow::anyhow!("interval histogram does not decode: {e:?}"))?;
                stream.intervals.push(IntervalFrame {
                    series: u32_at(payload, 0),
                    index: u32_at(payload, 4),
                    start_ns: u64_at(payload, 8),
                    length_ns: u64_at(payload, 16),
                    stats: SampleStats {
                        count: u64_at(payload, 24),
                        min_ns: u64_at(payload, 32),
                        max_ns: u64_at(payload, 40),
                        over_threshold: u64_at(payload, 48),
                    },
                    histogram,
                });
            }
            FRAME_REPORT => stream.report = Some(serde_json::from_slice(payload)?),
            other => anyhow::bail!("unknown report frame kind {other}"),
        }
        at += FRAME_HEADER + length;
    }
    Ok(stream)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::SeriesReport;

    #[test]
    fn interval_frames_and_the_final_report_round_trip() {
        let file = tempfile::tempfile().unwrap();
        let mut writer = ReportWriter::new(file.try_clone().unwrap());
        let mut recorder = Recorder::new(100, 8);
        recorder.record(5, 50);
        recorder.record(6, 150);
        writer.interval(1, 0, 0, 1_000, &recorder).unwrap();
        recorder.reset_interval();
        recorder.record(7, 70);
        writer.interval(1, 1, 1_000, 1_000, &recorder).unwrap();
        let report = WorkerReport {
            pid: 42,
            series: vec![("delivery".into(), SeriesReport::from_recorder(&recorder))],
            ..Default::default()
        };
        writer.report(&report).unwrap();

        let mut file = file;
        let stream = read_stream(&mut file).unwrap();
        assert_eq!(stream.intervals.len(), 2);
        assert_eq!(stream.intervals[0].stats.count, 2);
        assert_eq!(stream.intervals[0].stats.over_threshold, 1);
        assert_eq!(stream.intervals[0].histogram.len(), 2);
        assert_eq!(stream.intervals[1].start_ns, 1_000);
        assert_eq!(stream.report, Some(report));
    }

    #[test]
    fn a_stream_cut_off_mid_frame_keeps_what_was_complete() {
        let file = tempfile::tempfile().unwrap();
        let mut writer = ReportWriter::new(file.try_clone().unwrap());
        let recorder = Recorder::new(100, 0);
        writer.interval(0, 0, 0, 10, &recorder).unwrap();
        writer.report(&WorkerReport::default()).unwrap();
        let mut bytes = Vec::new();
        let mut file = file;
        file.seek(SeekFrom::Start(0)).unwrap();
        file.read_to_end(&mut bytes).unwrap();
        let stream = parse_stream(&bytes[..bytes.len() - 3]).unwrap();
        assert_eq!(stream.intervals.len(), 1);
        assert!(stream.report.is_none());
    }
}
