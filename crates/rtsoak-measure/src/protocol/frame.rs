//! Interval frames: one finished interval of one latency series, encoded by the worker straight
//! from its histogram's recorded buckets into its frame ring, and decoded by the coordinator
//! into a histogram with the same buckets and exact counts.
//!
//! Owns the frame's byte layout. Encoding never allocates and needs no scratch buffer (it walks
//! the recorded buckets and writes bytes to a [`ByteSink`]); decoding trusts nothing it reads.
//!
//! Payload: a version byte, then unsigned LEB128 varints: series, index, start_ns, length_ns,
//! count, min_ns, max_ns, over_threshold; then one pair per recorded bucket in increasing
//! order: the bucket's value-iterated-to minus the previous bucket's (the first minus 0), and
//! its count. A value-iterated-to lies in its own bucket, so recording each count at its value
//! rebuilds the histogram bucket for bucket. Neighbouring buckets differ by little, so most
//! pairs take two to four bytes.

use anyhow::{Context, bail, ensure};
use hdrhistogram::Histogram;

use rtsoak_analysis::stats::new_histogram;
use rtsoak_record::SampleStats;

/// Bumped whenever the payload layout changes.
const FRAME_VERSION: u8 = 1;

/// Where an encoder puts bytes: the worker's ring (never allocates) or, in tests and tools, a
/// `Vec`.
pub(crate) trait ByteSink {
    /// Append one byte.
    fn put(&mut self, byte: u8);
}

impl ByteSink for Vec<u8> {
    fn put(&mut self, byte: u8) {
        self.push(byte);
    }
}

impl ByteSink for super::ring::FrameSink<'_> {
    #[inline]
    fn put(&mut self, byte: u8) {
        super::ring::FrameSink::put(self, byte);
    }
}

/// What a frame says besides its buckets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct FrameHeader {
    /// Index of the series in the worker's series list.
    pub(crate) series: u32,
    /// Interval number from 0.
    pub(crate) index: u32,
    /// Start, ns after the measured phase began.
    pub(crate) start_ns: u64,
    /// Length, ns.
    pub(crate) length_ns: u64,
    /// Exact counters of the interval.
    pub(crate) stats: SampleStats,
}

/// One finished interval of one series, decoded.
#[derive(Debug, Clone)]
pub(crate) struct IntervalFrame {
    /// Index of the series in the worker's series list.
    pub(crate) series: u32,
    /// Interval number from 0.
    pub(crate) index: u32,
    /// Start, ns after the measured phase began.
    pub(crate) start_ns: u64,
    /// Length, ns.
    pub(crate) length_ns: u64,
    /// Exact counters of the interval.
    pub(crate) stats: SampleStats,
    /// The interval's histogram.
    pub(crate) histogram: Histogram<u64>,
}

#[inline]
fn put_varint<S: ByteSink>(sink: &mut S, mut value: u64) {
    while value >= 0x80 {
        sink.put(value as u8 | 0x80);
        value >>= 7;
    }
    sink.put(value as u8);
}

/// Encode one frame into `sink`. Allocation-free: safe to call from a measuring loop (outside
/// its timed section).
pub(crate) fn encode<S: ByteSink>(sink: &mut S, header: &FrameHeader, histogram: &Histogram<u32>) {
    sink.put(FRAME_VERSION);
    let stats = &header.stats;
    for value in [
        u64::from(header.series),
        u64::from(header.index),
        header.start_ns,
        header.length_ns,
        stats.count,
        stats.min_ns,
        stats.max_ns,
        stats.over_threshold,
    ] {
        put_varint(sink, value);
    }
    let mut previous = 0;
    for bucket in histogram.iter_recorded() {
        let value = bucket.value_iterated_to();
        put_varint(sink, value - previous);
        put_varint(sink, u64::from(bucket.count_at_value()));
        previous = value;
    }
}

/// A decoder's position in a payload.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl Reader<'_> {
    fn varint(&mut self) -> anyhow::Result<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let Some((&byte, rest)) = self.bytes.split_first() else {
                bail!("the frame ends inside a number");
            };
            self.bytes = rest;
            let bits = u64::from(byte & 0x7f);
            ensure!(
                shift < 63 || bits <= 1,
                "a number in the frame does not fit 64 bits"
            );
            value |= bits << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        bail!("a number in the frame does not fit 64 bits")
    }

    fn varint_u32(&mut self, what: &str) -> anyhow::Result<u32> {
        let value = self.varint()?;
        u32::try_from(value).with_context(|| format!("the frame's {what} {value} is not a u32"))
    }
}

/// Read a frame's header; the buckets follow, read with [`Buckets`].
pub(crate) fn read_header(payload: &[u8]) -> anyhow::Result<(FrameHeader, Buckets<'_>)> {
    let Some((&version, rest)) = payload.split_first() else {
        bail!("an empty interval frame");
    };
    ensure!(
        version == FRAME_VERSION,
        "interval frame version {version}, this binary reads {FRAME_VERSION}: coordinator and \
         worker binaries differ"
    );
    let mut reader = Reader { bytes: rest };
    let header = FrameHeader {
        series: reader.varint_u32("series")?,
        index: reader.varint_u32("interval index")?,
        start_ns: reader.varint()?,
        length_ns: reader.varint()?,
        stats: SampleStats {
            count: reader.varint()?,
            min_ns: reader.varint()?,
            max_ns: reader.varint()?,
            over_threshold: reader.varint()?,
        },
    };
    Ok((
        header,
        Buckets {
            reader,
            previous: 0,
            first: true,
        },
    ))
}

/// The (value, count) pairs of a frame's recorded buckets, in increasing value order.
pub(crate) struct Buckets<'a> {
    reader: Reader<'a>,
    previous: u64,
    first: bool,
}

impl Iterator for Buckets<'_> {
    type Item = anyhow::Result<(u64, u64)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.reader.bytes.is_empty() {
            return None;
        }
        Some((|| {
            let delta = self.reader.varint()?;
            let count = self.reader.varint()?;
            ensure!(
                self.first || delta > 0,
                "a bucket in the frame repeats the previous one"
            );
            ensure!(count > 0, "a bucket in the frame has no samples");
            self.first = false;
            self.previous = self
                .previous
                .checked_add(delta)
                .context("a bucket value in the frame does not fit 64 bits")?;
            Ok((self.previous, count))
        })())
    }
}

impl Buckets<'_> {
    /// Add every bucket to `histogram`; returns the samples added.
    pub(crate) fn add_to(self, histogram: &mut Histogram<u64>) -> anyhow::Result<u64> {
        let mut samples = 0u64;
        for bucket in self {
            let (value, count) = bucket?;
            histogram
                .record_n(value, count)
                .with_context(|| format!("a bucket value {value} in the frame is out of range"))?;
            samples = samples.saturating_add(count);
        }
        Ok(samples)
    }
}

/// Decode a whole frame into a new histogram.
pub(crate) fn decode(payload: &[u8]) -> anyhow::Result<IntervalFrame> {
    let (header, buckets) = read_header(payload)?;
    let mut histogram = new_histogram();
    buckets.add_to(&mut histogram)?;
    Ok(IntervalFrame {
        series: header.series,
        index: header.index,
        start_ns: header.start_ns,
        length_ns: header.length_ns,
        stats: header.stats,
        histogram,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsoak_analysis::stats::{HIGHEST_NS, new_interval_histogram};

    fn header(count: u64) -> FrameHeader {
        FrameHeader {
            series: 2,
            index: 7,
            start_ns: 70_000_000_000,
            length_ns: 10_000_000_000,
            stats: SampleStats {
                count,
                min_ns: 1,
                max_ns: 25_000_000_000,
                over_threshold: 3,
            },
        }
    }

    /// Every recorded bucket as (value, count), for comparing a u32 and a u64 histogram.
    fn buckets<T: hdrhistogram::Counter>(histogram: &Histogram<T>) -> Vec<(u64, u64)> {
        histogram
            .iter_recorded()
            .map(|b| (b.value_iterated_to(), b.count_at_value().as_u64()))
            .collect()
    }

    fn round_trip(histogram: &Histogram<u32>) -> IntervalFrame {
        let mut bytes = Vec::new();
        encode(&mut bytes, &header(histogram.len()), histogram);
        decode(&bytes).unwrap()
    }

    #[test]
    fn a_round_trip_gives_the_same_histogram_bucket_for_bucket() {
        let mut histogram = new_interval_histogram();
        let mut rng = fastrand::Rng::with_seed(15);
        // Every order of magnitude from 1 ns to the top of the range, some values many times.
        for _ in 0..100_000 {
            let magnitude = 10u64.pow(rng.u32(1..=10));
            let value = rng.u64(1..=magnitude);
            histogram.saturating_record(value.min(HIGHEST_NS));
        }
        histogram.record_n(1, 70_000).unwrap();
        histogram.record_n(HIGHEST_NS, 3).unwrap();

        let frame = round_trip(&histogram);
        assert_eq!(buckets(&frame.histogram), buckets(&histogram));
        assert_eq!(frame.histogram.len(), histogram.len(), "exact total");
        assert_eq!(frame.histogram.min(), histogram.min());
        assert_eq!(frame.histogram.max(), histogram.max());
        assert_eq!(
            frame.histogram.value_at_quantile(0.999),
            histogram.value_at_quantile(0.999)
        );
        let mut bytes = Vec::new();
        encode(&mut bytes, &header(0), &histogram);
        assert!(
            bytes.len() < 4 * buckets(&histogram).len() + 64,
            "{} bytes for {} buckets",
            bytes.len(),
            buckets(&histogram).len()
        );
    }

    #[test]
    fn the_largest_count_a_worker_can_hold_comes_back_exactly() {
        let mut histogram = new_interval_histogram();
        histogram.record_n(123_456, u32::MAX).unwrap();
        histogram.record_n(1, 1).unwrap();
        let frame = round_trip(&histogram);
        assert_eq!(frame.histogram.count_at(123_456), u64::from(u32::MAX));
        assert_eq!(frame.histogram.len(), u64::from(u32::MAX) + 1);
    }

    #[test]
    fn the_header_comes_back_exactly() {
        let frame = round_trip(&new_interval_histogram());
        assert_eq!(
            (
                frame.series,
                frame.index,
                frame.start_ns,
                frame.length_ns,
                frame.stats
            ),
            (2, 7, 70_000_000_000, 10_000_000_000, header(0).stats)
        );
        assert!(frame.histogram.is_empty());
    }

    #[test]
    fn a_decoded_frame_adds_to_a_run_histogram() {
        let mut histogram = new_interval_histogram();
        histogram.record_n(5_000, 4).unwrap();
        let mut bytes = Vec::new();
        encode(&mut bytes, &header(4), &histogram);
        let mut total = new_histogram();
        total.record(5_000).unwrap();
        let (_, frame_buckets) = read_header(&bytes).unwrap();
        assert_eq!(frame_buckets.add_to(&mut total).unwrap(), 4);
        assert_eq!(total.count_at(5_000), 5);
    }

    #[test]
    fn damaged_frames_are_errors_not_panics() {
        let mut histogram = new_interval_histogram();
        histogram.record_n(5_000, 4).unwrap();
        histogram.record_n(9_000, 1).unwrap();
        let mut good = Vec::new();
        encode(&mut good, &header(5), &histogram);
        for cut in 0..good.len() - 1 {
            let outcome = decode(&good[..cut]);
            // Cut between two buckets, a frame is whole but short of samples: the caller's
            // exact count tells it apart. Anywhere else it is an error.
            if let Ok(frame) = outcome {
                assert!(frame.histogram.len() < 5);
            }
        }
        let mut wrong_version = good.clone();
        wrong_version[0] = 99;
        assert!(decode(&wrong_version).is_err());
        let mut too_high = good.clone();
        too_high.extend([0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 1]);
        assert!(decode(&too_high).is_err(), "a value beyond the range");
        let mut no_samples = good.clone();
        no_samples.extend([1, 0]);
        assert!(decode(&no_samples).is_err(), "a bucket with a count of 0");
        assert!(decode(&[]).is_err());
        assert!(decode(&[FRAME_VERSION, 0xff]).is_err());
        let mut endless = vec![FRAME_VERSION];
        endless.extend([0xff; 11]);
        assert!(decode(&endless).is_err(), "a number longer than 64 bits");
    }
}
