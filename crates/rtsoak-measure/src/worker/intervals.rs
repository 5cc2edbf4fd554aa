//! Cutting a run into fixed intervals: when a loop crosses an interval boundary it ships each
//! series' interval histogram as a frame into the worker's frame ring and starts the next.
//! Outside timed sections only; shipping copies into shared memory and never waits.
//!
//! Intervals cover the measured phase and nothing else: what a subscriber drains after stop
//! (up to the delivery timeout) lands in the last interval, which still ends where the measured
//! phase did, so interval lengths add up to the measured time.

use anyhow::bail;

use crate::protocol::ReportWriter;
use rtsoak_analysis::stats::Recorder;

/// The interval clock of one worker.
pub(crate) struct Intervals {
    interval_ns: u64,
    /// Start of the measured phase, `CLOCK_MONOTONIC` ns.
    pub(crate) measure_start_ns: u64,
    /// Planned end of the measured phase, `CLOCK_MONOTONIC` ns: no interval reaches past it.
    measure_end_ns: u64,
    current: u32,
    /// Frames that did not fit in the frame ring: dropped and counted, never waited for (the
    /// run goes on; the result says so).
    write_errors: u64,
}

impl Intervals {
    /// Intervals of `interval_ns` from `measure_start_ns` up to `measure_end_ns`.
    pub(super) fn new(measure_start_ns: u64, measure_end_ns: u64, interval_ns: u64) -> Self {
        Intervals {
            interval_ns,
            measure_start_ns,
            measure_end_ns: measure_end_ns.max(measure_start_ns),
            current: 0,
            write_errors: 0,
        }
    }

    /// True when `now_ns` lies past the current interval and another interval of the measured
    /// phase follows it (past the end, the last interval takes what the drain finds). An
    /// interval length of 0 means one interval for the whole run (queue noise ships one frame
    /// when it exits).
    #[inline]
    pub(crate) fn due(&self, now_ns: u64) -> bool {
        let boundary_ns = self.measure_start_ns + (u64::from(self.current) + 1) * self.interval_ns;
        self.interval_ns != 0 && now_ns >= boundary_ns && boundary_ns < self.measure_end_ns
    }

    /// Ship the current interval of every recorder and move to the interval holding `now_ns`.
    pub(super) fn advance(
        &mut self,
        now_ns: u64,
        stream: &mut ReportWriter,
        recorders: &mut [&mut Recorder],
    ) {
        self.ship(stream, recorders, self.interval_ns);
        let elapsed = now_ns
            .min(self.measure_end_ns - 1)
            .saturating_sub(self.measure_start_ns);
        self.current = (elapsed / self.interval_ns) as u32;
    }

    /// Ship the last, partial interval ending at `end_ns`, or where the measured phase was
    /// planned to end if that came first (a run stopped early ends early); an error if any
    /// frame of the run did not fit.
    pub(super) fn finish(
        &mut self,
        end_ns: u64,
        stream: &mut ReportWriter,
        recorders: &mut [&mut Recorder],
    ) -> anyhow::Result<()> {
        let start = self.measure_start_ns + u64::from(self.current) * self.interval_ns;
        let mut length = end_ns.min(self.measure_end_ns).saturating_sub(start);
        if self.interval_ns != 0 {
            length = length.min(self.interval_ns);
        }
        self.ship(stream, recorders, length);
        if self.write_errors > 0 {
            bail!("{} interval frames could not be written", self.write_errors);
        }
        Ok(())
    }

    fn ship(&mut self, stream: &mut ReportWriter, recorders: &mut [&mut Recorder], length_ns: u64) {
        let start = u64::from(self.current) * self.interval_ns;
        for (series, recorder) in recorders.iter_mut().enumerate() {
            if stream
                .interval(series as u32, self.current, start, length_ns, recorder)
                .is_err()
            {
                self.write_errors += 1;
            }
            recorder.reset_interval();
        }
    }
}
