//! The subscriber's io_uring event loop, shared by every transport: wait (with a timeout, never
//! busy-polling a `DEFER_TASKRUN` ring), reap completions, drain the queue, record each message's
//! delivery latency, re-arm and submit the re-arm, then wait again.
//!
//! What it records (`docs/figures.md`): `delivery` for every RT message; `own_wake` where the
//! transport tells the RT publisher's own wake apart ([`super::own_wake`]); `handling`, from a
//! wakeup to waiting again with the re-arm submitted (so a one-shot wait's re-arm is in it);
//! `other_delivery` for noise messages. It counts messages first seen through a wait that ended
//! with no completion at all (the fallback poll) although their wakes had been sent, which no
//! transport should need, apart from those the poll found before the RT publisher had sent
//! their wakes (a publisher held up longer than the poll, not a transport failure). It counts the
//! process's io-wq worker threads with the first wait armed and again right after the loop,
//! while the last one still is (`hygiene.io_wq_workers`): none should ever serve a wait.
//!
//! Between `READY` and the end of the loop nothing allocates, logs or formats.

use std::sync::atomic::Ordering;

use anyhow::Context;
use io_uring::IoUring;
use io_uring::types::{SubmitArgs, Timespec};

use super::WorkerContext;
use super::break_on::BreakOn;
use super::intervals::Intervals;
use super::on_threshold::OnThreshold;
use super::own_wake::OwnWakes;
use crate::protocol::{Life, QueueSpec, SeriesReport};
use crate::transport::{Completion, Own, Waiter};
use rtsoak_analysis::stats::{Recorder, SeqTracker};
use rtsoak_record::Attribution;
use rtsoak_record::{Counters, Series};
use rtsoak_sys::clock::now_ns;
use rtsoak_sys::queue::{Cursor, FLAG_WARMUP};
use rtsoak_sys::region::{
    RT_PUBLISHER_SLOT, RT_SUBSCRIBER_SLOT, Region, WorkerSlot, phase, worker_state,
};
use rtsoak_sys::{io_wq, sched, uring};

/// The subscriber's latency series, in [`Series::SUBSCRIBER`] order.
struct Recorders {
    delivery: Recorder,
    other: Recorder,
    own_wake: Recorder,
    handling: Recorder,
}

impl Recorders {
    fn new(threshold_ns: u64, outliers_max: usize) -> Self {
        let recorder = || Recorder::new(threshold_ns, outliers_max);
        Recorders {
            delivery: recorder(),
            other: recorder(),
            own_wake: recorder(),
            handling: recorder(),
        }
    }

    fn all(&mut self) -> [&mut Recorder; 4] {
        [
            &mut self.delivery,
            &mut self.other,
            &mut self.own_wake,
            &mut self.handling,
        ]
    }
}

/// Run the subscriber with waiter `W` until the run stops and everything in flight is accounted.
pub(super) fn run<W: Waiter>(
    context: &mut WorkerContext,
    spec: &QueueSpec,
    waiter: W,
) -> anyhow::Result<()> {
    let mut subscriber = Subscriber::setup(context, spec, waiter)?;
    // The loop looks at the clock, the phase and lost messages at least this often. Built here:
    // the submit arguments borrow their timeouts.
    let poll_ns = spec.poll_ns();
    let poll_timeout = Timespec::new()
        .sec(poll_ns / 1_000_000_000)
        .nsec((poll_ns % 1_000_000_000) as u32);
    let no_wait = Timespec::new();
    let waits = Waits {
        poll: SubmitArgs::new().timespec(&poll_timeout),
        poll_ns,
        look_again: SubmitArgs::new().timespec(&no_wait),
    };
    while subscriber.on_wakeup(context, &waits)? {}
    subscriber.finish(context)
}

/// How the loop waits: up to the poll interval, and once more without waiting.
struct Waits<'t> {
    poll: SubmitArgs<'t, 't>,
    poll_ns: u64,
    look_again: SubmitArgs<'t, 't>,
}

/// How one wait ended.
struct Wakeup {
    /// When the wait returned.
    woke_ns: u64,
    reaped: Reaped,
    /// RT messages whose wake calls had all returned (the publisher counts a message as
    /// published only after them); `u64::MAX` unless the wait ended with no completion, the
    /// only case that needs it.
    woken_before: u64,
}

/// The subscriber loop's state: built before `READY`, where it may allocate and make system
/// calls; from then on only stepped, once per wakeup.
struct Subscriber<'a, W: Waiter> {
    spec: &'a QueueSpec,
    region: &'static Region,
    slot: &'static WorkerSlot,
    /// The RT publisher's slot: how far it has published, whether it is done.
    publisher: &'static WorkerSlot,
    waiter: W,
    ring: Option<IoUring>,
    cursor: Cursor,
    /// Queue position when this subscriber joined.
    joined_at: u64,
    series: Recorders,
    counters: Counters,
    tracker: SeqTracker,
    break_on: BreakOn,
    on_threshold: OnThreshold,
    own: OwnWakes,
    /// A noise subscriber: lives its lifetime, does not look for the RT publisher's wakes.
    noise: bool,
    io_wq_after_setup: Option<u64>,
    /// Fixed when the run starts.
    intervals: Option<Intervals>,
    /// Read when the first measured message arrives.
    usage_before: Option<sched::Usage>,
    /// The first wakeup that saw the stop, 0 before.
    stop_seen_ns: u64,
    running: bool,
    born_ns: u64,
    /// A noise subscriber's end of life; `u64::MAX` for the RT subscriber, which stays to the
    /// end.
    end_of_life_ns: u64,
}

impl<'a, W: Waiter> Subscriber<'a, W> {
    /// Everything before the loop: the recorders, `--break-on`, the ring, joining the queue,
    /// the first wait armed; then `READY`.
    fn setup(
        context: &mut WorkerContext,
        spec: &'a QueueSpec,
        mut waiter: W,
    ) -> anyhow::Result<Self> {
        let region = context.region();
        let rt = spec.rt();
        let outliers = rt.map_or(0, |rt| rt.outliers_max as usize);
        let break_on_spec = rt.and_then(|rt| rt.break_on.as_ref());
        let break_on = BreakOn::new(break_on_spec, Series::Delivery, region)?;
        let on_threshold = OnThreshold::new(
            rt.and_then(|rt| rt.on_threshold.as_ref()),
            &region.crossings[RT_SUBSCRIBER_SLOT],
            context.bell.take(),
        );
        let noise = rt.is_none();
        let own = OwnWakes::new(if noise {
            Attribution::None
        } else {
            waiter.attribution()
        });

        let mut ring = subscriber_ring::<W>(context, spec)?;
        let cursor = Cursor::at(region.queue.head());
        let joined_at = cursor.position();
        region.join(
            spec.member,
            std::process::id() as i32,
            waiter.wake_fd(ring.as_ref()),
            cursor.position(),
        );
        waiter.before_drain();
        if let Some(ring) = ring.as_mut() {
            waiter.arm(ring)?;
            ring.submit().context("arming the first wait")?;
        }
        // With the first wait armed, and outside the loop (reading /proc allocates); again right
        // after the loop, while the last wait is still armed.
        let io_wq_after_setup = io_wq::workers();
        context.ready();

        let born_ns = now_ns();
        let end_of_life_ns = match spec.life {
            Life::Noise { lifetime_ns } if lifetime_ns > 0 => born_ns + lifetime_ns,
            _ => u64::MAX,
        };
        Ok(Subscriber {
            spec,
            region,
            slot: context.slot(),
            publisher: &region.workers[RT_PUBLISHER_SLOT],
            waiter,
            ring,
            cursor,
            joined_at,
            series: Recorders::new(spec.threshold_ns, outliers),
            counters: Counters::default(),
            tracker: SeqTracker::default(),
            break_on,
            on_threshold,
            own,
            noise,
            io_wq_after_setup,
            intervals: None,
            usage_before: None,
            stop_seen_ns: 0,
            running: false,
            born_ns,
            end_of_life_ns,
        })
    }

    /// One wakeup: wait, reap, drain and record, re-arm, ship a finished interval. Returns
    /// whether to wait again. Inlined into `run`'s loop, so the loop compiles as one body.
    #[inline]
    fn on_wakeup(
        &mut self,
        context: &mut WorkerContext,
        waits: &Waits<'_>,
    ) -> anyhow::Result<bool> {
        let Wakeup {
            woke_ns,
            reaped,
            woken_before,
        } = self.wait_and_reap(waits)?;
        // Nothing woke us: whatever the drain finds now, only the fallback poll delivered it.
        // A message whose wake had been sent came through no wakeup (a transport failure); one
        // whose publisher was still in its wake calls was merely found before its wakeup.
        let by_fallback = reaped.completions == 0;
        if !self.running && self.region.phase() != phase::SETUP {
            self.running = true;
            self.slot
                .state
                .store(worker_state::RUNNING, Ordering::Release);
            self.intervals = Some(measured_intervals(self.spec, self.region, self.born_ns));
        }
        let measure_start_ns = self
            .intervals
            .as_ref()
            .map_or(u64::MAX, |i| i.measure_start_ns);

        self.waiter.before_drain();
        let delivered = self.drain(woke_ns, by_fallback, woken_before, measure_start_ns);
        let own_wake = &mut self.series.own_wake;
        self.own.arrived(woke_ns, |send_ns, own_wake_ns| {
            let at_ns = send_ns.saturating_sub(measure_start_ns);
            own_wake.record(at_ns, own_wake_ns);
        });
        if reaped.woken {
            self.counters.wakeups += 1;
            self.counters.empty_wakeups += u64::from(delivered == 0);
        }
        if reaped.rearm
            && let Some(ring) = self.ring.as_mut()
        {
            rearm_and_submit(&mut self.waiter, ring)?;
        }
        if !by_fallback && woke_ns > measure_start_ns {
            self.series
                .handling
                .record(woke_ns - measure_start_ns, now_ns() - woke_ns);
        }
        publish_progress(self.slot, &self.counters, &self.series.delivery, woke_ns);

        if let Some(intervals) = self.intervals.as_mut()
            && woke_ns > intervals.measure_start_ns
            && intervals.due(woke_ns)
        {
            sched::current_cpu_into(&mut context.report.setup.cpus_observed);
            intervals.advance(woke_ns, &mut context.stream, &mut self.series.all());
        }
        Ok(!self.done(woke_ns))
    }

    /// Wait once and take every completion; if none came, look once more without waiting.
    #[inline]
    fn wait_and_reap(&mut self, waits: &Waits<'_>) -> anyhow::Result<Wakeup> {
        let (waited, outside) = wait(
            self.ring.as_mut(),
            &mut self.waiter,
            &waits.poll,
            waits.poll_ns,
        );
        let woke_ns = now_ns();
        self.own.begin();
        let mut reaped = Reaped::default();
        self.reap(&mut reaped, outside);
        match waited {
            Err(e) if e.raw_os_error() == Some(libc::ETIME) => self.counters.wait_timeouts += 1,
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
            Err(e) => return Err(e).context("waiting on the subscriber's ring"),
            Ok(_) => {}
        }
        let mut woken_before = u64::MAX;
        if reaped.completions == 0 {
            // Nothing came. Note which messages' wakes had been sent, then look once more
            // without waiting: a wake sent as the wait timed out may have queued its completion
            // after the kernel's last look, and it is here now.
            woken_before = self.publisher.published_total.load(Ordering::Acquire);
            let (looked, outside) =
                wait(self.ring.as_mut(), &mut self.waiter, &waits.look_again, 0);
            self.reap(&mut reaped, outside);
            match looked {
                Err(e) if matches!(e.raw_os_error(), Some(libc::ETIME) | Some(libc::EINTR)) => {}
                Err(e) => return Err(e).context("looking at the subscriber's ring again"),
                Ok(_) => {}
            }
        }
        Ok(Wakeup {
            woke_ns,
            reaped,
            woken_before,
        })
    }

    #[inline]
    fn reap(&mut self, reaped: &mut Reaped, outside: Option<Completion>) {
        reaped.take_all(
            self.ring.as_mut(),
            &mut self.waiter,
            outside,
            &mut self.counters,
            &mut self.own,
        );
    }

    /// Drain the queue, recording each message's delivery latency (or `other_delivery` for
    /// noise messages); the number drained.
    #[inline]
    fn drain(
        &mut self,
        woke_ns: u64,
        by_fallback: bool,
        woken_before: u64,
        measure_start_ns: u64,
    ) -> u64 {
        let Subscriber {
            spec,
            region,
            cursor,
            series,
            counters,
            tracker,
            break_on,
            on_threshold,
            own,
            usage_before,
            ..
        } = self;
        cursor.drain(&region.queue, |message| {
            // A message published while we drain was stamped after our wakeup: it is observed
            // now, not at the wakeup (which would make its latency negative).
            let observed_ns = if message.send_ns > woke_ns {
                now_ns()
            } else {
                woke_ns
            };
            let latency_ns = observed_ns.saturating_sub(message.send_ns);
            let at_ns = message.send_ns.saturating_sub(measure_start_ns);
            if message.publisher_id != spec.publisher_id {
                counters.other_messages += 1;
                series.other.record(at_ns, latency_ns);
                return;
            }
            if !tracker.observe(message.seq) || message.flags & FLAG_WARMUP != 0 {
                return;
            }
            if usage_before.is_none() {
                *usage_before = Some(sched::usage());
            }
            if let Some(own_wake_ns) = own.first_seen(message.seq, message.send_ns, woke_ns) {
                series.own_wake.record(at_ns, own_wake_ns);
            }
            if by_fallback && message.seq < woken_before {
                counters.fallback_deliveries += 1;
            } else if by_fallback {
                counters.polled_before_wake += 1;
            }
            if latency_ns > spec.delivery_timeout_ns {
                counters.late += 1;
            } else {
                counters.messages += 1;
                series.delivery.record(at_ns, latency_ns);
                break_on.check(latency_ns, message.seq, at_ns);
                on_threshold.check(latency_ns, message.seq, message.send_ns, observed_ns);
            }
        })
    }

    /// Whether the loop is over at `woke_ns`: a noise subscriber at its end of life or the
    /// stop; the RT subscriber once everything is accounted after the stop, or the delivery
    /// timeout has passed since.
    #[inline]
    fn done(&mut self, woke_ns: u64) -> bool {
        if self.noise {
            return woke_ns >= self.end_of_life_ns || self.region.phase() == phase::STOP;
        }
        if self.region.phase() != phase::STOP {
            return false;
        }
        if self.stop_seen_ns == 0 {
            self.stop_seen_ns = woke_ns;
        }
        all_accounted(self.region, self.publisher, &self.tracker, &self.own)
            || woke_ns > self.stop_seen_ns + self.spec.delivery_timeout_ns
    }

    /// After the loop (it may allocate again): leave the queue, take what is left, the last
    /// interval, hygiene, counters and series into the report.
    fn finish(mut self, context: &mut WorkerContext) -> anyhow::Result<()> {
        let region = self.region;
        region.leave(self.spec.member);
        // Every noise message published while we were a member must be ours: take what is left
        // up to the moment we left (the last noise publishers may have sent after our last
        // drain).
        let left_at = region.queue.head();
        let left_ns = now_ns();
        let (counters, other) = (&mut self.counters, &mut self.series.other);
        let publisher_id = self.spec.publisher_id;
        self.cursor.drain_to(&region.queue, left_at, |message| {
            if message.publisher_id != publisher_id {
                counters.other_messages += 1;
                other.record(0, left_ns.saturating_sub(message.send_ns));
            }
        });
        if self.noise {
            // Then count what never came (holes still being written are in flight, not
            // missing).
            let published = left_at.saturating_sub(self.joined_at);
            self.counters.member_misses = published
                .saturating_sub(self.cursor.taken)
                .saturating_sub(self.cursor.pending_holes() as u64);
        }
        let end_ns = now_ns();
        let usage_after = sched::usage();
        let io_wq_workers = io_wq::most(self.io_wq_after_setup, io_wq::workers());
        sched::current_cpu_into(&mut context.report.setup.cpus_observed);
        if let Some(intervals) = self.intervals.as_mut() {
            intervals.finish(end_ns, &mut context.stream, &mut self.series.all())?;
        }
        self.report_into(context, usage_after, io_wq_workers);
        Ok(())
    }

    /// The counters, hygiene and series into the report.
    fn report_into(
        mut self,
        context: &mut WorkerContext,
        usage_after: sched::Usage,
        io_wq_workers: Option<u64>,
    ) {
        let counters = &mut self.counters;
        counters.overrun = self.cursor.overrun;
        counters.duplicated = self.tracker.duplicated;
        counters.reordered = self.tracker.reordered;
        counters.own_wakes = self.own.wakes;
        counters.piggybacked = self.own.piggybacked;
        if self.own.attribution() == Attribution::Exact {
            let sent = self.publisher.published_total.load(Ordering::Acquire);
            counters.wakes_missing = sent.saturating_sub(self.own.wakes);
        }
        context.report.attribution = self.own.attribution();
        context.report.hygiene = super::publisher::hygiene(
            self.usage_before.unwrap_or(usage_after),
            usage_after,
            io_wq_workers,
        );
        context.report.counters = self.counters;
        context.report.break_event = self.break_on.event;
        context.report.series = Series::SUBSCRIBER
            .into_iter()
            .zip(self.series.all())
            .map(|(name, recorder)| (name, SeriesReport::from_recorder(recorder)))
            .collect();
    }
}

/// The measured phase's intervals, fixed when the run starts: the RT subscriber's on the run's
/// clock, after the warm-up, for the measured periods; a noise subscriber's from its birth
/// (`born_ns`) to the end of its life, in one interval.
fn measured_intervals(spec: &QueueSpec, region: &Region, born_ns: u64) -> Intervals {
    match &spec.life {
        Life::Rt(rt) => {
            let start_ns = region.control.start_ns.load(Ordering::Acquire);
            let measure_start_ns = start_ns + rt.warmup_periods * spec.period_ns;
            let measure_end_ns = measure_start_ns + rt.measured_periods * spec.period_ns;
            Intervals::new(measure_start_ns, measure_end_ns, rt.interval_ns)
        }
        Life::Noise { lifetime_ns } => Intervals::new(born_ns, born_ns + lifetime_ns, 0),
    }
}

/// The subscriber's ring, for a waiter that has one, with its setup in the report. The floor
/// pair builds it so too.
pub(super) fn subscriber_ring<W: Waiter>(
    context: &mut WorkerContext,
    spec: &QueueSpec,
) -> anyhow::Result<Option<IoUring>> {
    if !W::USES_RING {
        return Ok(None);
    }
    let (ring, ring_setup) =
        uring::build(spec.ring_setup.into()).context("creating the subscriber's ring")?;
    context.report.setup.ring_setup = Some(ring_setup.into());
    Ok(Some(ring))
}

/// Wait once, up to `args`' timeout on the ring or `timeout_ns` for a ring-less waiter: how the
/// wait ended, and a ring-less waiter's completion. The floor pair waits with it too.
pub(super) fn wait<W: Waiter>(
    ring: Option<&mut IoUring>,
    waiter: &mut W,
    args: &SubmitArgs<'_, '_>,
    timeout_ns: u64,
) -> (std::io::Result<()>, Option<Completion>) {
    match ring {
        Some(ring) => (ring.submitter().submit_with_args(1, args).map(drop), None),
        None => match waiter.block(timeout_ns) {
            Ok(completion) => (Ok(()), Some(completion)),
            Err(error) => (Err(error), None),
        },
    }
}

/// What the completions of one wakeup said.
#[derive(Default)]
pub(super) struct Reaped {
    /// Completions of any kind.
    pub(super) completions: u64,
    /// Whether one was a wakeup by the run's publishers.
    pub(super) woken: bool,
    /// Whether the wait is used up and must be submitted again.
    pub(super) rearm: bool,
}

impl Reaped {
    /// Take every completion the ring holds, and a ring-less waiter's `outside` one.
    pub(super) fn take_all<W: Waiter>(
        &mut self,
        ring: Option<&mut IoUring>,
        waiter: &mut W,
        outside: Option<Completion>,
        counters: &mut Counters,
        own: &mut OwnWakes,
    ) {
        if let Some(ring) = ring {
            for cqe in ring.completion() {
                self.take(waiter.complete(&cqe), counters, own);
            }
        }
        if let Some(completion) = outside {
            self.take(completion, counters, own);
        }
    }

    fn take(&mut self, completion: Completion, counters: &mut Counters, own: &mut OwnWakes) {
        self.completions += 1;
        match completion {
            Completion::Woken { rearm, own: whose } => {
                self.woken = true;
                self.rearm |= rearm;
                counters.other_wakeups += u64::from(whose == Own::No);
                own.completion(whose);
            }
            Completion::Foreign { rearm } => {
                counters.foreign_wakeups += 1;
                self.rearm |= rearm;
            }
            Completion::Error(_) => {
                counters.cqe_errors += 1;
                self.rearm = true;
            }
        }
    }
}

/// Push the completed waits again and submit them now, so the re-arm's cost (a one-shot futex
/// wait takes the hash-bucket lock here) is part of `handling` rather than hidden in the next
/// wait.
pub(super) fn rearm_and_submit<W: Waiter>(
    waiter: &mut W,
    ring: &mut IoUring,
) -> anyhow::Result<()> {
    waiter.arm(ring)?;
    match ring.submit() {
        Ok(_) => Ok(()),
        // Interrupted: the SQEs stay queued and go with the next wait.
        Err(e) if e.raw_os_error() == Some(libc::EINTR) => Ok(()),
        Err(e) => Err(e).context("submitting the re-armed wait"),
    }
}

/// The live figures the coordinator shows and the watchdog reads.
fn publish_progress(slot: &WorkerSlot, counters: &Counters, delivery: &Recorder, now_ns: u64) {
    slot.messages.store(counters.messages, Ordering::Relaxed);
    slot.longest_ns
        .store(delivery.total_stats.max_ns, Ordering::Relaxed);
    slot.over_threshold
        .store(delivery.total_stats.over_threshold, Ordering::Relaxed);
    slot.heartbeat_ns.store(now_ns, Ordering::Relaxed);
}

/// Done when the RT publisher has finished, every message it sent has been seen, where each own
/// wake is counted every one of them has arrived, and no noise publisher can still publish.
fn all_accounted(
    region: &Region,
    publisher: &WorkerSlot,
    tracker: &SeqTracker,
    own: &OwnWakes,
) -> bool {
    let state = publisher.state.load(Ordering::Acquire);
    let finished = matches!(
        state,
        worker_state::DONE | worker_state::FAILED | worker_state::EMPTY
    );
    let sent = publisher.published_total.load(Ordering::Acquire);
    let wakes_in = own.attribution() != Attribution::Exact || own.wakes >= sent;
    let noise_ended = region.control.queue_noise_live.load(Ordering::Acquire) == 0;
    finished && tracker.distinct >= sent && wakes_in && noise_ended
}
