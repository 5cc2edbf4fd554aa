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

use anyhow::{Context, bail};
use io_uring::IoUring;
use io_uring::types::{SubmitArgs, Timespec};

use super::WorkerContext;
use super::break_on::BreakOn;
use super::intervals::Intervals;
use super::own_wake::OwnWakes;
use crate::protocol::{Life, QueueSpec, SeriesReport};
use crate::queue::{Cursor, FLAG_WARMUP};
use crate::record::{Counters, Series};
use crate::region::{RT_PUBLISHER_SLOT, Region, WorkerSlot, phase, worker_state};
use crate::stats::{Attribution, Recorder, SeqTracker};
use crate::sys::clock::now_ns;
use crate::sys::{io_wq, sched, uring};
use crate::transport::{Completion, Own, Waiter};

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
#[allow(
    clippy::too_many_lines,
    reason = "a measuring loop: to be split into setup, one step per period and finish, with `rtsoak bench` before and after to show the loop's cost did not move"
)]
pub fn run<W: Waiter>(
    context: &mut WorkerContext,
    spec: &QueueSpec,
    mut waiter: W,
) -> anyhow::Result<()> {
    let region = context.region();
    let slot = context.slot();
    let publisher = &region.workers[RT_PUBLISHER_SLOT];
    let rt = spec.rt();
    let outliers = rt.map_or(0, |rt| rt.outliers_max as usize);
    let mut series = Recorders::new(spec.threshold_ns, outliers);
    let mut counters = Counters::default();
    let mut tracker = SeqTracker::default();
    let break_on_spec = rt.and_then(|rt| rt.break_on.as_ref());
    let mut break_on = BreakOn::new(break_on_spec, Series::Delivery, region)?;
    // A noise subscriber does not look for the RT publisher's wakes.
    let noise = rt.is_none();
    let mut own = OwnWakes::new(if noise {
        Attribution::None
    } else {
        waiter.attribution()
    });

    let mut ring = if W::USES_RING {
        let (ring, ring_setup) =
            uring::build(spec.ring_setup.into()).context("creating the subscriber's ring")?;
        context.report.setup.ring_setup = Some(ring_setup.into());
        Some(ring)
    } else {
        None
    };
    let mut cursor = Cursor::at(region.queue.head());
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

    // The loop looks at the clock, the phase and lost messages at least this often.
    let wait_ns = spec.poll_ns();
    let timeout = Timespec::new()
        .sec(wait_ns / 1_000_000_000)
        .nsec((wait_ns % 1_000_000_000) as u32);
    let args = SubmitArgs::new().timespec(&timeout);
    let mut intervals: Option<Intervals> = None;
    let mut usage_before = None;
    let mut stop_seen_ns = 0u64;
    let mut running = false;
    // A noise subscriber lives its lifetime, then leaves; the RT subscriber stays to the end.
    let born_ns = now_ns();
    let end_of_life_ns = match spec.life {
        Life::Noise { lifetime_ns } if lifetime_ns > 0 => born_ns + lifetime_ns,
        _ => u64::MAX,
    };

    let no_wait = Timespec::new();
    let look_again = SubmitArgs::new().timespec(&no_wait);

    loop {
        let (waited, outside) = wait(ring.as_mut(), &mut waiter, &args, wait_ns);
        let woke_ns = now_ns();
        own.begin();
        let mut reaped = Reaped::default();
        reaped.take_all(ring.as_mut(), &mut waiter, outside, &mut counters, &mut own);
        match waited {
            Err(e) if e.raw_os_error() == Some(libc::ETIME) => counters.wait_timeouts += 1,
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
            Err(e) => return Err(e).context("waiting on the subscriber's ring"),
            Ok(_) => {}
        }
        // RT messages whose wake calls had all returned (the publisher counts a message as
        // published only after them); only a wait that ended with no completion needs it.
        let mut woken_before = u64::MAX;
        if reaped.completions == 0 {
            // Nothing came. Note which messages' wakes had been sent, then look once more
            // without waiting: a wake sent as the wait timed out may have queued its completion
            // after the kernel's last look, and it is here now.
            woken_before = publisher.published_total.load(Ordering::Acquire);
            let (looked, outside) = wait(ring.as_mut(), &mut waiter, &look_again, 0);
            reaped.take_all(ring.as_mut(), &mut waiter, outside, &mut counters, &mut own);
            match looked {
                Err(e) if matches!(e.raw_os_error(), Some(libc::ETIME) | Some(libc::EINTR)) => {}
                Err(e) => return Err(e).context("looking at the subscriber's ring again"),
                Ok(_) => {}
            }
        }
        let Reaped {
            completions,
            woken,
            rearm,
        } = reaped;
        // Nothing woke us: whatever the drain finds now, only the fallback poll delivered it.
        // A message whose wake had been sent came through no wakeup (a transport failure); one
        // whose publisher was still in its wake calls was merely found before its wakeup.
        let by_fallback = completions == 0;
        if !running && region.phase() != phase::SETUP {
            running = true;
            slot.state.store(worker_state::RUNNING, Ordering::Release);
            intervals = Some(measured_intervals(spec, region, born_ns));
        }
        let measure_start_ns = intervals.as_ref().map_or(u64::MAX, |i| i.measure_start_ns);

        waiter.before_drain();
        let delivered = cursor.drain(&region.queue, |message| {
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
                usage_before = Some(sched::usage());
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
            }
        });
        own.arrived(woke_ns, |send_ns, own_wake_ns| {
            let at_ns = send_ns.saturating_sub(measure_start_ns);
            series.own_wake.record(at_ns, own_wake_ns);
        });
        if woken {
            counters.wakeups += 1;
            counters.empty_wakeups += u64::from(delivered == 0);
        }
        if rearm && let Some(ring) = ring.as_mut() {
            rearm_and_submit(&mut waiter, ring)?;
        }
        if !by_fallback && woke_ns > measure_start_ns {
            series
                .handling
                .record(woke_ns - measure_start_ns, now_ns() - woke_ns);
        }
        publish_progress(slot, &counters, &series.delivery, woke_ns);

        if let Some(intervals) = intervals.as_mut()
            && woke_ns > intervals.measure_start_ns
            && intervals.due(woke_ns)
        {
            sched::current_cpu_into(&mut context.report.setup.cpus_observed);
            intervals.advance(woke_ns, &mut context.stream, &mut series.all());
        }

        if noise {
            if woke_ns >= end_of_life_ns || region.phase() == phase::STOP {
                break;
            }
            continue;
        }
        if region.phase() == phase::STOP {
            if stop_seen_ns == 0 {
                stop_seen_ns = woke_ns;
            }
            if all_accounted(region, publisher, &tracker, &own)
                || woke_ns > stop_seen_ns + spec.delivery_timeout_ns
            {
                break;
            }
        }
    }

    region.leave(spec.member);
    // Every noise message published while we were a member must be ours: take what is left up
    // to the moment we left (the last noise publishers may have sent after our last drain).
    let left_at = region.queue.head();
    let left_ns = now_ns();
    cursor.drain_to(&region.queue, left_at, |message| {
        if message.publisher_id != spec.publisher_id {
            counters.other_messages += 1;
            series
                .other
                .record(0, left_ns.saturating_sub(message.send_ns));
        }
    });
    if noise {
        // Then count what never came (holes still being written are in flight, not missing).
        let published = left_at.saturating_sub(joined_at);
        counters.member_misses = published
            .saturating_sub(cursor.taken)
            .saturating_sub(cursor.pending_holes() as u64);
    }
    let end_ns = now_ns();
    let usage_after = sched::usage();
    let io_wq_workers = io_wq::most(io_wq_after_setup, io_wq::workers());
    sched::current_cpu_into(&mut context.report.setup.cpus_observed);
    if let Some(intervals) = intervals.as_mut() {
        intervals.finish(end_ns, &mut context.stream, &mut series.all());
        if intervals.write_errors > 0 {
            bail!(
                "{} interval frames could not be written",
                intervals.write_errors
            );
        }
    }
    counters.overrun = cursor.overrun;
    counters.duplicated = tracker.duplicated;
    counters.reordered = tracker.reordered;
    counters.own_wakes = own.wakes;
    counters.piggybacked = own.piggybacked;
    if own.attribution() == Attribution::Exact {
        let sent = publisher.published_total.load(Ordering::Acquire);
        counters.wakes_missing = sent.saturating_sub(own.wakes);
    }
    context.report.attribution = own.attribution();
    context.report.hygiene = super::publisher::hygiene(
        usage_before.unwrap_or(usage_after),
        usage_after,
        io_wq_workers,
    );
    context.report.counters = counters;
    context.report.break_event = break_on.event;
    context.report.series = Series::SUBSCRIBER
        .into_iter()
        .zip(series.all())
        .map(|(name, recorder)| (name, SeriesReport::from_recorder(recorder)))
        .collect();
    Ok(())
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

/// Wait once, up to `args`' timeout on the ring or `timeout_ns` for a ring-less waiter: how the
/// wait ended, and a ring-less waiter's completion.
fn wait<W: Waiter>(
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
struct Reaped {
    /// Completions of any kind.
    completions: u64,
    /// Whether one was a wakeup by the run's publishers.
    woken: bool,
    /// Whether the wait is used up and must be submitted again.
    rearm: bool,
}

impl Reaped {
    /// Take every completion the ring holds, and a ring-less waiter's `outside` one.
    fn take_all<W: Waiter>(
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
fn rearm_and_submit<W: Waiter>(waiter: &mut W, ring: &mut IoUring) -> anyhow::Result<()> {
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
