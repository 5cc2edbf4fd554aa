//! `--break-on` inside a measuring loop: when a sample crosses the limit, write a marker line
//! into the ftrace buffer, switch tracing off, remember which sample did it and (unless told to
//! carry on) ask the coordinator to stop the run.
//!
//! Built before the loop (the tracefs fds are opened there); [`BreakOn::check`] is called after
//! the timed section, is one comparison when nothing happens, fires once per run, and never
//! allocates, logs or formats: the marker is written into a fixed buffer.

use std::sync::atomic::Ordering;

use anyhow::Context;

use crate::protocol::BreakOnSpec;
use rtsoak_record::{BreakEvent, Series};
use rtsoak_sys::region::{Region, phase};
use rtsoak_sys::trace::Trace;

/// Longest marker line: the prefix, a series name and three numbers.
const MARKER_BYTES: usize = 128;

/// The break-on state of one worker.
pub(super) struct BreakOn {
    /// `u64::MAX` when `--break-on` is off: no sample crosses it.
    limit_ns: u64,
    series: Series,
    carry_on: bool,
    trace: Option<Trace>,
    region: &'static Region,
    /// The sample that crossed, once one did.
    pub(crate) event: Option<BreakEvent>,
}

impl BreakOn {
    /// Prepare for `spec` (`None`: `--break-on` is off, or this worker does not watch it), opening
    /// the tracefs files if there are any.
    pub(super) fn new(
        spec: Option<&BreakOnSpec>,
        series: Series,
        region: &'static Region,
    ) -> anyhow::Result<Self> {
        let trace = match spec.and_then(|spec| spec.tracefs_dir.as_ref()) {
            Some(dir) => Some(Trace::open(dir).context("--break-on needs tracefs")?),
            None => None,
        };
        Ok(BreakOn {
            limit_ns: spec.map_or(u64::MAX, |spec| spec.limit_ns),
            series,
            carry_on: spec.is_some_and(|spec| spec.carry_on),
            trace,
            region,
            event: None,
        })
    }

    /// Look at one sample (after the timed section). `at_ns`: since the measured phase began.
    #[inline]
    pub(super) fn check(&mut self, value_ns: u64, seq: u64, at_ns: u64) {
        if value_ns > self.limit_ns && self.event.is_none() {
            self.fire(value_ns, seq, at_ns);
        }
    }

    #[cold]
    fn fire(&mut self, value_ns: u64, seq: u64, at_ns: u64) {
        let mut line = Line::default();
        line.push(b"rtsoak break: ");
        line.push(self.series.name().as_bytes());
        line.push(b" ");
        line.number(value_ns);
        line.push(b" ns > ");
        line.number(self.limit_ns);
        line.push(b" ns, seq ");
        line.number(seq);
        line.push(b"\n");
        let (marker_written, trace_stopped) = self
            .trace
            .as_ref()
            .map_or((false, false), |t| t.mark_and_stop(line.bytes()));
        self.event = Some(BreakEvent {
            series: self.series,
            seq,
            value_ns,
            at_ns,
            limit_ns: self.limit_ns,
            marker_written,
            trace_stopped,
            continued: self.carry_on,
        });
        if !self.carry_on {
            self.region
                .control
                .phase
                .store(phase::STOP, Ordering::Release);
        }
    }
}

/// A marker line in a fixed buffer (too long a line is cut, never reallocated).
struct Line {
    bytes: [u8; MARKER_BYTES],
    len: usize,
}

impl Default for Line {
    fn default() -> Self {
        Line {
            bytes: [0; MARKER_BYTES],
            len: 0,
        }
    }
}

impl Line {
    fn push(&mut self, text: &[u8]) {
        let take = text.len().min(MARKER_BYTES - self.len);
        self.bytes[self.len..self.len + take].copy_from_slice(&text[..take]);
        self.len += take;
    }

    /// Append `value` in decimal (itoa formats into a stack buffer: no allocation).
    fn number(&mut self, value: u64) {
        let mut digits = itoa::Buffer::new();
        self.push(digits.format(value).as_bytes());
    }

    fn bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsoak_sys::region::SharedRegion;

    fn region() -> &'static Region {
        let region: &'static SharedRegion = Box::leak(Box::new(SharedRegion::create().unwrap()));
        region
            .get()
            .control
            .phase
            .store(phase::RUN, Ordering::Release);
        region.get()
    }

    fn break_on(limit_ns: Option<u64>, carry_on: bool, region: &'static Region) -> BreakOn {
        BreakOn {
            limit_ns: limit_ns.unwrap_or(u64::MAX),
            series: Series::Delivery,
            carry_on,
            trace: None,
            region,
            event: None,
        }
    }

    #[test]
    fn the_first_sample_over_the_limit_is_recorded_and_stops_the_run() {
        let region = region();
        let mut b = break_on(Some(100), false, region);
        b.check(100, 1, 10);
        assert!(b.event.is_none(), "at the limit is not over it");
        b.check(101, 2, 20);
        b.check(500, 3, 30);
        let event = b.event.unwrap();
        assert_eq!((event.seq, event.value_ns, event.at_ns), (2, 101, 20));
        assert!(!event.trace_stopped, "no tracefs was opened");
        assert_eq!(region.phase(), phase::STOP);
    }

    #[test]
    fn with_carry_on_the_run_goes_on_and_without_a_limit_nothing_fires() {
        let region = region();
        let mut b = break_on(Some(100), true, region);
        b.check(101, 2, 20);
        assert!(b.event.unwrap().continued);
        assert_eq!(region.phase(), phase::RUN);
        let mut off = break_on(None, false, region);
        off.check(u64::MAX - 1, 1, 1);
        assert!(off.event.is_none());
    }

    #[test]
    fn the_marker_line_spells_the_sample_without_formatting() {
        let mut line = Line::default();
        line.push(b"delivery ");
        line.number(0);
        line.push(b" ");
        line.number(18_446_744_073_709_551_615);
        assert_eq!(line.bytes(), b"delivery 0 18446744073709551615");
    }

    #[test]
    fn a_line_too_long_is_cut_not_grown() {
        let mut line = Line::default();
        line.push(&[b'x'; 200]);
        assert_eq!(line.bytes().len(), MARKER_BYTES);
    }
}
