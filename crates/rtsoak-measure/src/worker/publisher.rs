//! The publisher loop, shared by every transport: absolute-deadline periods, timer latency,
//! missed periods skipped and counted (measured and warm-up apart), then publish one message and
//! make the timed send call(s), the RT subscriber's first. After the send, and only when the
//! membership changed, it reaches the new subscribers (`member_refresh`, timed on its own), so
//! nothing but the clock lies between the deadline and the send timestamp.
//!
//! Between `READY` and the end of the loop nothing allocates, logs, formats or takes a lock of
//! ours: the only calls are the clock, `clock_nanosleep`, the waker, relaxed stores of progress
//! figures, and (at interval boundaries, after the send) shipping a finished interval. Before
//! `READY` and after the loop it counts the process's io-wq worker threads
//! (`hygiene.io_wq_workers`), which no send call should need.

use std::sync::atomic::Ordering;

use anyhow::{Context, bail};

use super::WorkerContext;
use super::break_on::BreakOn;
use super::intervals::Intervals;
use super::on_threshold::OnThreshold;
use crate::protocol::{Life, QueueSpec, SeriesReport};
use crate::transport::Waker;
use rtsoak_analysis::stats::Recorder;
use rtsoak_record::plan::Fault;
use rtsoak_record::{Counters, Hygiene, Series};
use rtsoak_sys::clock::{now_ns, sleep_until_ns};
use rtsoak_sys::queue::{FLAG_WARMUP, Message};
use rtsoak_sys::region::{RT_PUBLISHER_SLOT, Region, WorkerSlot, phase, worker_state};
use rtsoak_sys::{io_wq, sched};

/// Run the publisher with waker `W` until its periods are done or the coordinator stops it.
pub(super) fn run<W: Waker>(
    context: &mut WorkerContext,
    spec: &QueueSpec,
    waker: W,
) -> anyhow::Result<()> {
    let mut publisher = Publisher::setup(context, spec, waker)?;
    let Some(mut periods) = publisher.start() else {
        // Stopped before the run began: nothing was measured, nothing to report.
        return Ok(());
    };
    let mut period = 0u64;
    while period < periods.total_periods {
        match publisher.period(context, &mut periods, period) {
            Some(next) => period = next,
            None => break,
        }
    }
    publisher.finish(context, periods.intervals)
}

/// The publisher's latency series, in [`Series::PUBLISHER`] order.
struct Recorders {
    send: Recorder,
    fanout: Recorder,
    timer: Recorder,
    refresh: Recorder,
}

impl Recorders {
    fn new(threshold_ns: u64, outliers_max: usize) -> Self {
        let recorder = || Recorder::new(threshold_ns, outliers_max);
        Recorders {
            send: recorder(),
            fanout: recorder(),
            timer: recorder(),
            refresh: recorder(),
        }
    }

    fn all(&mut self) -> [&mut Recorder; 4] {
        [
            &mut self.send,
            &mut self.fanout,
            &mut self.timer,
            &mut self.refresh,
        ]
    }
}

/// The run's periods, fixed when the run starts.
struct Periods {
    /// `CLOCK_MONOTONIC` ns of period 0's deadline.
    start_ns: u64,
    period_ns: u64,
    warmup_periods: u64,
    /// Warm-up and measured periods together.
    total_periods: u64,
    intervals: Intervals,
}

impl Periods {
    /// The RT publisher keeps the run's clock and its periods; a noise publisher starts its own
    /// periods when it is born (`now_ns`), lives its lifetime, and ships one interval when it
    /// exits.
    fn of(spec: &QueueSpec, region: &Region, now_ns: u64) -> Self {
        let (start_ns, warmup_periods, total_periods, interval_ns) = match &spec.life {
            Life::Rt(rt) => (
                region.control.start_ns.load(Ordering::Acquire),
                rt.warmup_periods,
                rt.warmup_periods + rt.measured_periods,
                rt.interval_ns,
            ),
            Life::Noise { lifetime_ns } => (now_ns, 0, lifetime_ns / spec.period_ns, 0),
        };
        Periods {
            start_ns,
            period_ns: spec.period_ns,
            warmup_periods,
            total_periods,
            intervals: Intervals::new(
                start_ns + warmup_periods * spec.period_ns,
                start_ns + total_periods * spec.period_ns,
                interval_ns,
            ),
        }
    }

    #[inline]
    fn deadline_ns(&self, period: u64) -> u64 {
        self.start_ns + period * self.period_ns
    }
}

/// What one period's send left to record.
struct Sent {
    /// The message's send timestamp.
    send_ns: u64,
    seq: u64,
    /// The first (the RT subscriber's) wake call.
    first_call_ns: u64,
    /// When the first wake call returned.
    first_end_ns: u64,
    /// From the first wake call's start to the last one's end.
    fanout_ns: u64,
}

/// The publisher loop's state: built before `READY`, where it may allocate; from then on only
/// stepped.
struct Publisher<'a, W: Waker> {
    spec: &'a QueueSpec,
    region: &'static Region,
    slot: &'static WorkerSlot,
    waker: W,
    series: Recorders,
    counters: Counters,
    /// The `rt-wake-lost` fault: never wake the RT subscriber.
    skip_rt_wake: bool,
    late_wake: Option<LateWake>,
    break_on: BreakOn,
    on_threshold: OnThreshold,
    io_wq_after_setup: Option<u64>,
    /// Read when the first measured period begins.
    usage_before: Option<sched::Usage>,
    /// The membership epoch the waker has reached; read when the run starts.
    seen_epoch: u64,
    /// The next message's sequence number (also the messages published so far).
    seq: u64,
}

impl<'a, W: Waker> Publisher<'a, W> {
    /// Everything before the loop: the recorders, the faults, `--break-on`, the first reach of
    /// the subscribers; then `READY`.
    fn setup(
        context: &mut WorkerContext,
        spec: &'a QueueSpec,
        mut waker: W,
    ) -> anyhow::Result<Self> {
        let region = context.region();
        let rt = spec.rt();
        let outliers = rt.map_or(0, |rt| rt.outliers_max as usize);
        // The injected faults (tests only, the RT publisher's): it never wakes the RT
        // subscriber, or wakes it late now and then.
        let fault = rt.and_then(|rt| rt.inject_fault);
        let break_on_spec = rt.and_then(|rt| rt.break_on.as_ref());
        let break_on = BreakOn::new(break_on_spec, Series::SendCall, region)?;
        let on_threshold = OnThreshold::new(
            rt.and_then(|rt| rt.on_threshold.as_ref()),
            &region.crossings[RT_PUBLISHER_SLOT],
            context.bell.take(),
        );

        waker
            .refresh(region)
            .context("reaching the RT subscriber (is it running?)")?;
        if waker.targets() == 0 && rt.is_some() {
            bail!("no subscriber to wake: the RT subscriber is not a member of the queue");
        }
        // Outside the measuring loop (reading /proc allocates): once now, once right after it.
        let io_wq_after_setup = io_wq::workers();
        context.ready();
        Ok(Publisher {
            spec,
            region,
            slot: context.slot(),
            waker,
            series: Recorders::new(spec.threshold_ns, outliers),
            counters: Counters::default(),
            skip_rt_wake: fault == Some(Fault::RtWakeLost),
            late_wake: (fault == Some(Fault::RtWakeLate)).then(|| LateWake::of(spec)),
            break_on,
            on_threshold,
            io_wq_after_setup,
            usage_before: None,
            seen_epoch: 0,
            seq: 0,
        })
    }

    /// Wait for the coordinator to start the run and fix its periods; `None` if it stopped the
    /// run instead.
    fn start(&mut self) -> Option<Periods> {
        while self.region.phase() == phase::SETUP {
            sleep_until_ns(now_ns() + 1_000_000);
        }
        if self.region.phase() == phase::STOP {
            return None;
        }
        let periods = Periods::of(self.spec, self.region, now_ns());
        self.counters.planned_periods = periods.total_periods - periods.warmup_periods;
        self.seen_epoch = self.region.control.members_epoch.load(Ordering::Acquire);
        self.slot
            .state
            .store(worker_state::RUNNING, Ordering::Release);
        Some(periods)
    }

    /// One period: sleep to its deadline, publish and wake, record, reach new members, ship a
    /// finished interval. Returns the next period to run (past any missed), or `None` when the
    /// coordinator stopped the run. Inlined into `run`'s loop, so the loop compiles as one body.
    #[inline]
    fn period(
        &mut self,
        context: &mut WorkerContext,
        periods: &mut Periods,
        period: u64,
    ) -> Option<u64> {
        let deadline_ns = periods.deadline_ns(period);
        sleep_until_ns(deadline_ns);
        let woke_ns = now_ns();
        if self.region.phase() == phase::STOP {
            return None;
        }
        let measured = period >= periods.warmup_periods;
        if measured && self.usage_before.is_none() {
            self.usage_before = Some(sched::usage());
        }
        let sent = self.send(measured);
        let measure_start_ns = periods.intervals.measure_start_ns;
        if measured {
            self.record(&sent, woke_ns - deadline_ns, measure_start_ns);
        } else {
            self.counters.warmup_messages += 1;
        }
        self.reach_new_members(measured, measure_start_ns);

        let now = now_ns();
        self.slot.heartbeat_ns.store(now, Ordering::Relaxed);
        let next = self.skip_missed(periods, period + 1, now);
        if measured && periods.intervals.due(now) {
            sched::current_cpu_into(&mut context.report.setup.cpus_observed);
            periods
                .intervals
                .advance(now, &mut context.stream, &mut self.series.all());
        }
        Some(next)
    }

    /// Publish, then the timed send call(s): target 0 (the RT subscriber) first.
    #[inline]
    fn send(&mut self, measured: bool) -> Sent {
        let message = Message {
            seq: self.seq,
            send_ns: now_ns(),
            publisher_id: self.spec.publisher_id,
            flags: if measured { 0 } else { FLAG_WARMUP },
        };
        self.region.queue.publish(&message);
        if measured && let Some(late) = &self.late_wake {
            late.hold(self.seq);
        }
        let targets = self.waker.targets();
        let mut first_call_ns = 0;
        let mut first_end_ns = 0;
        let mut first_start_ns = 0;
        let mut last_end_ns = 0;
        for index in 0..targets {
            let before_ns = now_ns();
            let result = if self.skip_rt_wake && index == 0 {
                Ok(())
            } else {
                self.waker.wake(index, &message)
            };
            let after_ns = now_ns();
            if index == 0 {
                first_start_ns = before_ns;
                first_call_ns = after_ns - before_ns;
                first_end_ns = after_ns;
            }
            last_end_ns = after_ns;
            if result.is_err() {
                if index > 0 && self.waker.departed(self.region, index) {
                    self.counters.departed_wakes += 1;
                } else {
                    self.counters.wake_errors += 1;
                }
            }
        }
        if self.waker.settle().is_err() {
            self.counters.wake_errors += 1;
        }
        self.seq += 1;
        // Only now, with its wake calls returned: the subscriber's fallback poll reads it.
        self.slot.published_total.store(self.seq, Ordering::Release);
        Sent {
            send_ns: message.send_ns,
            seq: message.seq,
            first_call_ns,
            first_end_ns,
            fanout_ns: last_end_ns - first_start_ns,
        }
    }

    /// Record a measured period's send, fan-out and timer latency, and the live figures.
    #[inline]
    fn record(&mut self, sent: &Sent, timer_ns: u64, measure_start_ns: u64) {
        let at_ns = sent.send_ns.saturating_sub(measure_start_ns);
        let series = &mut self.series;
        series.send.record(at_ns, sent.first_call_ns);
        series.fanout.record(at_ns, sent.fanout_ns);
        series.timer.record(at_ns, timer_ns);
        self.break_on.check(sent.first_call_ns, sent.seq, at_ns);
        self.on_threshold.check(
            sent.first_call_ns,
            sent.seq,
            sent.send_ns,
            sent.first_end_ns,
        );
        self.counters.messages += 1;
        let slot = self.slot;
        slot.messages
            .store(self.counters.messages, Ordering::Relaxed);
        slot.longest_ns
            .store(series.send.total_stats.max_ns, Ordering::Relaxed);
        slot.over_threshold
            .store(series.send.total_stats.over_threshold, Ordering::Relaxed);
    }

    /// Membership changed: reach the new members now, for the next period's send (timed as
    /// `member_refresh`, apart from the send).
    #[inline]
    fn reach_new_members(&mut self, measured: bool, measure_start_ns: u64) {
        let epoch = self.region.control.members_epoch.load(Ordering::Acquire);
        if epoch == self.seen_epoch {
            return;
        }
        self.seen_epoch = epoch;
        self.counters.member_refreshes += 1;
        let before_ns = now_ns();
        if self.waker.refresh(self.region).is_err() {
            self.counters.wake_errors += 1;
        }
        if measured {
            let at_ns = before_ns.saturating_sub(measure_start_ns);
            self.series.refresh.record(at_ns, now_ns() - before_ns);
        }
    }

    /// The period after `next` unless its deadline has already passed at `now_ns`: then skip
    /// (and count) the periods we missed, as cyclictest does, rather than fire a burst of late
    /// sends.
    #[inline]
    fn skip_missed(&mut self, periods: &Periods, next: u64, now_ns: u64) -> u64 {
        if now_ns <= periods.deadline_ns(next) {
            return next;
        }
        let due = (now_ns - periods.start_ns) / periods.period_ns + 1;
        let resume = due.min(periods.total_periods);
        // Of the skipped periods, those before the end of the warm-up are the warm-up's.
        let warmup_skipped = periods.warmup_periods.clamp(next, resume) - next;
        self.counters.warmup_missed_periods += warmup_skipped;
        self.counters.missed_periods += resume - next - warmup_skipped;
        resume
    }

    /// After the loop (it may allocate again): the last interval, hygiene, counters and series
    /// into the report.
    fn finish(self, context: &mut WorkerContext, mut intervals: Intervals) -> anyhow::Result<()> {
        let Publisher {
            counters,
            mut series,
            break_on,
            usage_before,
            io_wq_after_setup,
            ..
        } = self;
        let end_ns = now_ns();
        let usage_after = sched::usage();
        let io_wq_workers = io_wq::most(io_wq_after_setup, io_wq::workers());
        sched::current_cpu_into(&mut context.report.setup.cpus_observed);
        let shipped = intervals.finish(end_ns, &mut context.stream, &mut series.all());
        context.report.hygiene = hygiene(
            usage_before.unwrap_or(usage_after),
            usage_after,
            io_wq_workers,
        );
        context.report.counters = counters;
        context.report.break_event = break_on.event;
        context.report.series = series
            .all()
            .into_iter()
            .zip(Series::PUBLISHER)
            .map(|(recorder, name)| (name, SeriesReport::from_recorder(recorder)))
            .collect();
        shipped
    }
}

/// Resource use between two readings (the peak RSS is the later reading's), and the io-wq
/// workers seen over the same phase ([`io_wq::most`]).
pub(super) fn hygiene(
    before: sched::Usage,
    after: sched::Usage,
    io_wq_workers: Option<u64>,
) -> Hygiene {
    Hygiene {
        minor_faults: after.minor_faults - before.minor_faults,
        major_faults: after.major_faults - before.major_faults,
        voluntary_switches: after.voluntary_switches - before.voluntary_switches,
        involuntary_switches: after.involuntary_switches - before.involuntary_switches,
        peak_rss_bytes: after.peak_rss_bytes,
        allocations: after.allocations - before.allocations,
        io_wq_workers,
    }
}

/// The `rt-wake-late` fault: every `every`th message waits `hold_ns` between being published and
/// its wake calls, long enough for the subscriber's fallback poll to find it first.
struct LateWake {
    every: u64,
    hold_ns: u64,
}

impl LateWake {
    fn of(spec: &QueueSpec) -> Self {
        let poll_ns = spec.poll_ns();
        LateWake {
            // Three poll intervals of sending between holds, so each hold starts from a
            // subscriber that has been waiting a while.
            every: (3 * poll_ns / spec.period_ns).max(1),
            hold_ns: poll_ns + poll_ns / 2,
        }
    }

    fn hold(&self, seq: u64) {
        if seq.is_multiple_of(self.every) {
            sleep_until_ns(now_ns() + self.hold_ns);
        }
    }
}
