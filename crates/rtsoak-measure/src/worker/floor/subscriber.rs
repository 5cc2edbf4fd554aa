//! The floor subscriber: the RT subscriber's ring, membership and waits, nothing else. It joins
//! the membership table as the RT subscriber (so the publisher reaches it as it would the
//! harness's), arms the transport's wait, and per wakeup: the time, the completions, the
//! transport's pre-read step, the send times of every send since the last wakeup (the floor's
//! stamps), one store per send of its latency into a preallocated array, the re-arm. A wakeup
//! with no new send (a noise publisher's wake, or one whose send an earlier wakeup took)
//! records nothing; a send first seen by a wait that timed out is recorded and counted as a
//! fallback delivery, as in the harness.

use std::sync::atomic::Ordering;

use anyhow::Context;
use io_uring::IoUring;
use io_uring::types::{SubmitArgs, Timespec};

use super::{Finished, Samples};
use crate::protocol::{QueueSpec, RtSpec};
use crate::transport::Waiter;
use crate::worker::WorkerContext;
use crate::worker::own_wake::OwnWakes;
use crate::worker::subscriber::{Reaped, rearm_and_submit, subscriber_ring, wait};
use rtsoak_analysis::stats::Recorder;
use rtsoak_record::Attribution;
use rtsoak_record::{Counters, Series};
use rtsoak_sys::clock::now_ns;
use rtsoak_sys::region::{FloorStamps, RT_PUBLISHER_SLOT, phase, worker_state};
use rtsoak_sys::sched;

/// Run the floor subscriber with waiter `W` until the run stops and the last send is seen (or
/// the delivery timeout has passed since the stop).
pub(crate) fn run<W: Waiter>(
    context: &mut WorkerContext,
    spec: &QueueSpec,
    mut waiter: W,
) -> anyhow::Result<()> {
    let rt = spec.rt().context("the floor pair is the RT pair's only")?;
    let region = context.region();
    let mut ring = join(context, spec, &mut waiter)?;
    let poll_ns = spec.poll_ns();
    let poll_timeout = Timespec::new()
        .sec(poll_ns / 1_000_000_000)
        .nsec((poll_ns % 1_000_000_000) as u32);
    let poll = SubmitArgs::new().timespec(&poll_timeout);
    // The completions are read through the harness's own reaping, which wants somewhere to note
    // whose wakes they were: the floor tells none apart.
    let mut own = OwnWakes::new(Attribution::None);
    let mut sends = Sends {
        stamps: &region.floor_stamps,
        taken: 0,
        measure_start_ns: u64::MAX,
        delivery_timeout_ns: spec.delivery_timeout_ns,
        delivery: Samples::new(rt.measured_periods),
        counters: Counters::default(),
        usage_before: None,
    };
    context.ready();

    let slot = context.slot();
    let publisher = &region.workers[RT_PUBLISHER_SLOT];
    let mut stop_seen_ns = 0;
    loop {
        let (waited, outside) = wait(ring.as_mut(), &mut waiter, &poll, poll_ns);
        let woke_ns = now_ns();
        let mut reaped = Reaped::default();
        let counters = &mut sends.counters;
        reaped.take_all(ring.as_mut(), &mut waiter, outside, counters, &mut own);
        match waited {
            Err(e) if e.raw_os_error() == Some(libc::ETIME) => counters.wait_timeouts += 1,
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
            Err(e) => return Err(e).context("waiting on the subscriber's ring"),
            Ok(_) => {}
        }
        if sends.measure_start_ns == u64::MAX && region.phase() != phase::SETUP {
            slot.state.store(worker_state::RUNNING, Ordering::Release);
            let start_ns = region.control.start_ns.load(Ordering::Acquire);
            sends.measure_start_ns = start_ns + rt.warmup_periods * spec.period_ns;
        }
        waiter.before_drain();
        let new_sends = sends.take(woke_ns, reaped.completions == 0);
        if reaped.woken {
            sends.counters.wakeups += 1;
            sends.counters.empty_wakeups += u64::from(new_sends == 0);
        }
        if reaped.rearm
            && let Some(ring) = ring.as_mut()
        {
            rearm_and_submit(&mut waiter, ring)?;
        }
        slot.heartbeat_ns.store(woke_ns, Ordering::Relaxed);
        if region.phase() == phase::STOP {
            if stop_seen_ns == 0 {
                stop_seen_ns = woke_ns;
            }
            let finished = publisher.state.load(Ordering::Acquire) != worker_state::RUNNING;
            if (finished && sends.taken == sends.stamps.sent())
                || woke_ns > stop_seen_ns + spec.delivery_timeout_ns
            {
                break;
            }
        }
    }

    // After the loop: it may allocate again.
    region.leave(spec.member);
    sends.finished(spec, rt).report(context)
}

/// Before the loop: the ring (for a waiter that has one), membership as the RT subscriber, the
/// first wait armed, as the harness's subscriber sets itself up.
fn join<W: Waiter>(
    context: &mut WorkerContext,
    spec: &QueueSpec,
    waiter: &mut W,
) -> anyhow::Result<Option<IoUring>> {
    let mut ring = subscriber_ring::<W>(context, spec)?;
    context.region().join(
        spec.member,
        std::process::id() as i32,
        waiter.wake_fd(ring.as_ref()),
        0,
    );
    waiter.before_drain();
    if let Some(ring) = ring.as_mut() {
        waiter.arm(ring)?;
        ring.submit().context("arming the first wait")?;
    }
    Ok(ring)
}

/// The sends the floor subscriber takes from the stamps, and what it made of them.
impl Sends<'_> {
    /// What the subscriber leaves once its loop is over: the delivery series over the
    /// measured phase (from its start, or from now if the run never started).
    fn finished(self, spec: &QueueSpec, rt: &RtSpec) -> Finished<4> {
        let measure_start_ns = self.measure_start_ns.min(now_ns());
        let threshold_ns = spec.threshold_ns;
        let outliers = rt.outliers_max as usize;
        Finished {
            names: Series::SUBSCRIBER,
            series: [
                self.delivery
                    .into_recorder(threshold_ns, outliers, spec.period_ns),
                Recorder::new(threshold_ns, 0),
                Recorder::new(threshold_ns, 0),
                Recorder::new(threshold_ns, 0),
            ],
            measure_start_ns,
            measure_end_ns: measure_start_ns + rt.measured_periods * spec.period_ns,
            counters: self.counters,
            usage_before: self.usage_before,
        }
    }
}

struct Sends<'r> {
    stamps: &'r FloorStamps,
    /// Sends taken so far, warm-up included.
    taken: u64,
    /// Where the measured phase starts (its interval frame's start); `u64::MAX` until the run
    /// has started.
    measure_start_ns: u64,
    delivery_timeout_ns: u64,
    delivery: Samples,
    counters: Counters,
    usage_before: Option<sched::Usage>,
}

impl Sends<'_> {
    /// Take every send made since the last wakeup, each observed at `woke_ns` (or now, for one
    /// stamped after it); `by_fallback`: the wait ended with no completion. Returns how many.
    #[inline]
    fn take(&mut self, woke_ns: u64, by_fallback: bool) -> u64 {
        let sent = self.stamps.sent();
        let new_sends = sent - self.taken;
        while self.taken < sent {
            let n = self.taken;
            self.taken += 1;
            let Some(send_ns) = self.stamps.send_ns(n) else {
                self.counters.overrun += 1;
                continue;
            };
            if !self.stamps.is_measured(n) {
                self.counters.warmup_messages += 1;
                continue;
            }
            // A send stamped after this wakeup (which was for an earlier one, someone else's,
            // or a timeout) is observed now, not at the wakeup, as the harness's drain does.
            let observed_ns = if send_ns > woke_ns { now_ns() } else { woke_ns };
            let latency_ns = observed_ns - send_ns;
            if self.usage_before.is_none() {
                self.usage_before = Some(sched::usage());
            }
            // As in the harness: a send first seen by a wait that timed out still counts, and
            // is counted as the fallback poll's.
            self.counters.fallback_deliveries += u64::from(by_fallback);
            if latency_ns > self.delivery_timeout_ns {
                self.counters.late += 1;
            } else {
                self.delivery.push(latency_ns);
                self.counters.messages += 1;
            }
        }
        new_sends
    }
}
