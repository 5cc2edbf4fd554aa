//! One run's on-threshold firings: read from the RT pair's crossing slots in the shared region
//! each time the coordinator wakes (a firing rings its bell, so at once), acted on in the order
//! the actions were given, and recorded with the sample and each action's delay from it.
//!
//! Owns: the run's record of its firings, and which of them has a command still running.
//! Never reads a slot's firing it has already acted on.

use std::path::Path;

use super::{Deed, List, Responder};
use rtsoak_record::Series;
use rtsoak_record::result::actions::{FiredSample, Firing, RunActions};
use rtsoak_sys::clock::{now_ns, timestamp};
use rtsoak_sys::crossing::{Crossing, CrossingSlot};
use rtsoak_sys::region::{RT_PUBLISHER_SLOT, RT_SUBSCRIBER_SLOT, Region};

/// The RT pair's slots and the series each one's worker watches.
const SLOTS: [(usize, Series); 2] = [
    (RT_PUBLISHER_SLOT, Series::SendCall),
    (RT_SUBSCRIBER_SLOT, Series::Delivery),
];
/// Reads of a slot the writer is rewriting before it is left for the next wakeup (the writer
/// takes nanoseconds; a firing replaced meanwhile is counted as missed, never torn).
const READ_TRIES: usize = 8;

/// A run's firings so far. Inert (nothing to read or do) without on-threshold actions.
pub(crate) struct RunWatch<'r> {
    responder: Option<&'r mut Responder>,
    transport: String,
    /// Where snapshots and the commands' log go.
    dir: &'r Path,
    /// `CLOCK_MONOTONIC` ns at which the measured phase begins (the result's time origin).
    measure_start_ns: u64,
    /// Firings read from each slot.
    seen: [u64; 2],
    record: RunActions,
    /// Per on-threshold action: the firing and the action record of its command still running.
    running: Vec<Option<(usize, usize)>>,
}

impl<'r> RunWatch<'r> {
    /// The watch of a run of `transport` (`responder`: `None` when the invocation has no
    /// actions), its files in `dir`.
    pub(crate) fn new(
        responder: Option<&'r mut Responder>,
        transport: &str,
        dir: &'r Path,
    ) -> Self {
        let responder = responder.filter(|r| !r.on_threshold.is_empty());
        let actions = responder.as_ref().map_or(0, |r| r.on_threshold.len());
        RunWatch {
            responder,
            transport: transport.to_string(),
            dir,
            measure_start_ns: 0,
            seen: [0; 2],
            record: RunActions::default(),
            running: vec![None; actions],
        }
    }

    /// The measured phase begins at `measure_start_ns`.
    pub(crate) fn measure_from(&mut self, measure_start_ns: u64) {
        self.measure_start_ns = measure_start_ns;
    }

    /// Act on every firing published since the last look, and note the commands that ended.
    pub(crate) fn poll(&mut self, region: &Region) {
        if self.responder.is_none() {
            return;
        }
        for (slot, series) in SLOTS {
            if let Some(crossing) = self.take_new(slot, &region.crossings[slot]) {
                self.fire(series, crossing);
            }
        }
        self.reap(false, false);
    }

    /// The run is over: act on what is left, wait for the commands still running (up to their
    /// timeouts; stopped at once with `stopping`), and the record (`None` without actions).
    pub(crate) fn finish(mut self, region: &Region, stopping: bool) -> Option<RunActions> {
        self.responder.as_ref()?;
        self.poll(region);
        self.reap(true, stopping);
        self.record.crossed = SLOTS
            .iter()
            .map(|(slot, _)| region.crossings[*slot].crossed())
            .sum();
        Some(self.record)
    }

    /// The latest firing of `slot` (index `index`) if there is one not yet read; the ones it
    /// replaced are counted as missed.
    fn take_new(&mut self, index: usize, slot: &CrossingSlot) -> Option<Crossing> {
        let seen = self.seen[index];
        if slot.published() == seen {
            return None;
        }
        let (n, crossing) = (0..READ_TRIES).find_map(|_| slot.latest())?;
        self.record.missed += n - seen - 1;
        self.seen[index] = n;
        Some(crossing)
    }

    /// Do every on-threshold action for `crossing` of `series`, in order.
    fn fire(&mut self, series: Series, crossing: Crossing) {
        let since = |ns: u64| ns.saturating_sub(self.measure_start_ns);
        let sample = FiredSample {
            series,
            transport: self.transport.clone(),
            latency_ns: crossing.value_ns,
            seq: crossing.seq,
            at_ns: since(crossing.sent_ns),
            observed_at_ns: since(crossing.observed_ns),
        };
        let deed = Deed {
            marker: marker(&sample, &self.transport),
            snapshot_prefix: format!("trace-threshold-{}", self.transport),
            value: crossing.value_ns,
        };
        let firing = self.record.firings.len();
        let Some(responder) = self.responder.as_deref_mut() else {
            return;
        };
        let mut actions = Vec::new();
        for index in 0..responder.on_threshold.len() {
            let start_ns = now_ns();
            let started_at = timestamp();
            let done = responder.act(List::OnThreshold, index, &deed, self.dir, start_ns);
            if done.started {
                self.running[index] = Some((firing, actions.len()));
            }
            let mut record = done.record(started_at, start_ns);
            record.at_ns = Some(since(start_ns));
            record.delay_ns = Some(start_ns.saturating_sub(crossing.observed_ns));
            actions.push(record);
        }
        self.record.firings.push(Firing { sample, actions });
    }

    /// Record how each running command ended, if it has; with `wait`, wait for each (stopped
    /// at once with `stopping`).
    fn reap(&mut self, wait: bool, stopping: bool) {
        let Some(responder) = self.responder.as_deref_mut() else {
            return;
        };
        for (index, running) in self.running.iter_mut().enumerate() {
            let Some((firing, action)) = *running else {
                continue;
            };
            let super::Prepared::Exec(exec) = &mut responder.on_threshold[index] else {
                continue;
            };
            let ended = if wait {
                exec.wait(stopping)
            } else {
                exec.poll(now_ns())
            };
            if let Some(ended) = ended {
                let record = &mut self.record.firings[firing].actions[action];
                record.status = ended.status;
                record.duration_ns = ended.duration_ns;
                record.exit_code = ended.exit_code;
                record.exit_signal = ended.exit_signal;
                record.error = ended.error;
                *running = None;
            }
        }
    }
}

/// The marker line a trace action writes: `rtsoak on-threshold: delivery 123456 ns, seq 42,
/// futex`.
fn marker(sample: &FiredSample, transport: &str) -> Vec<u8> {
    format!(
        "rtsoak on-threshold: {} {} ns, seq {}, {transport}\n",
        sample.series.name(),
        sample.latency_ns,
        sample.seq
    )
    .into_bytes()
}
