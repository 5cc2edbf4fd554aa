//! The floor pair (`--floor`): the minimal reference the harness is measured against. The same
//! two processes as the RT pair, started the same way (pinned, the same policy and priorities,
//! memory locked, dying with the coordinator), joining the same membership table and driving
//! the same transport's waker and waiter through the same calls, and nothing else: no queue
//! (a ring of the last send times in the shared region carries them, as many as the queue
//! holds messages, [`rtsoak_sys::region::FloorStamps`]), no sequence tracking or attribution
//! of wakes, no progress figures but the heartbeat, no interval frames; every sample goes into
//! a preallocated array, turned into the run's series only after the loop. What the harness
//! adds on top of this is its overhead (`docs/floor.md`).

pub(crate) mod publisher;
pub(crate) mod subscriber;

use crate::protocol::SeriesReport;
use crate::worker::WorkerContext;
use crate::worker::intervals::Intervals;
use rtsoak_analysis::stats::Recorder;
use rtsoak_record::{Counters, Series};
use rtsoak_sys::clock::now_ns;
use rtsoak_sys::sched;

/// The most measured periods one floor run holds: every sample has its slot in an array
/// allocated (and locked) before the loop, 2 MiB per series at this bound. The `--floor` plan
/// is refused beyond it (`commands::soak`).
pub const MAX_FLOOR_PERIODS: u64 = 1 << 19;

/// One series' samples, in the order taken: written in the loop into memory touched before
/// it, so recording is a store and nothing else.
pub(crate) struct Samples {
    values_ns: Vec<u32>,
    taken: usize,
    /// Samples that found the array full (a run stopped late; never in a planned one).
    overflowed: u64,
}

impl Samples {
    /// Room for `capacity` samples, every page written now.
    pub(crate) fn new(capacity: u64) -> Self {
        let capacity = capacity.min(MAX_FLOOR_PERIODS) as usize;
        Samples {
            values_ns: vec![u32::MAX; capacity],
            taken: 0,
            overflowed: 0,
        }
    }

    /// Keep one sample (saturated at `u32::MAX` ns, 4.3 s: longer than any delivery timeout).
    #[inline]
    pub(crate) fn push(&mut self, value_ns: u64) {
        match self.values_ns.get_mut(self.taken) {
            Some(slot) => {
                *slot = u32::try_from(value_ns).unwrap_or(u32::MAX);
                self.taken += 1;
            }
            None => self.overflowed += 1,
        }
    }

    /// The samples as the harness records its own (after the loop, where it may allocate):
    /// sample `i` is placed at the `i`th period of the measured phase, which is where it was
    /// taken unless periods were missed before it.
    pub(crate) fn into_recorder(
        self,
        threshold_ns: u64,
        outliers_max: usize,
        period_ns: u64,
    ) -> Recorder {
        let mut recorder = Recorder::new(threshold_ns, outliers_max);
        for (index, value_ns) in self.values_ns[..self.taken].iter().enumerate() {
            recorder.record(index as u64 * period_ns, u64::from(*value_ns));
        }
        recorder
    }
}

/// What a floor loop leaves once it is over: its series (in the order of `names`), the measured
/// phase they cover, its counters and its resource use from the first measured sample on.
struct Finished<const N: usize> {
    names: [Series; N],
    series: [Recorder; N],
    measure_start_ns: u64,
    measure_end_ns: u64,
    counters: Counters,
    usage_before: Option<sched::Usage>,
}

impl<const N: usize> Finished<N> {
    /// Into the worker's report as the harness's loops leave theirs (after the loop, where it
    /// may allocate): the whole measured phase shipped as one interval frame, then hygiene,
    /// counters and series.
    fn report(mut self, context: &mut WorkerContext) -> anyhow::Result<()> {
        let usage_after = sched::usage();
        let mut intervals = Intervals::new(self.measure_start_ns, self.measure_end_ns, 0);
        let mut recorders: Vec<&mut Recorder> = self.series.iter_mut().collect();
        let shipped = intervals.finish(now_ns(), &mut context.stream, &mut recorders);
        sched::current_cpu_into(&mut context.report.setup.cpus_observed);
        context.report.hygiene =
            super::publisher::hygiene(self.usage_before.unwrap_or(usage_after), usage_after, None);
        context.report.counters = self.counters;
        context.report.series = self
            .names
            .into_iter()
            .zip(&self.series)
            .map(|(name, recorder)| (name, SeriesReport::from_recorder(recorder)))
            .collect();
        shipped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_keep_what_fits_and_count_the_rest() {
        let mut samples = Samples::new(2);
        samples.push(5_000);
        samples.push(u64::MAX);
        samples.push(7);
        assert_eq!((samples.taken, samples.overflowed), (2, 1));
        let recorder = samples.into_recorder(10_000, 10, 1_000_000);
        assert_eq!(recorder.total_stats.count, 2);
        assert_eq!(recorder.total_stats.over_threshold, 1);
        assert_eq!(recorder.total_stats.max_ns, u64::from(u32::MAX));
        let kept = recorder.outliers();
        assert_eq!((kept.outliers[0].at_ns, kept.dropped), (1_000_000, 0));
    }

    #[test]
    fn no_run_holds_more_than_the_bound() {
        assert_eq!(
            Samples::new(u64::MAX).values_ns.len() as u64,
            MAX_FLOOR_PERIODS
        );
    }
}
