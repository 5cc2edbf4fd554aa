//! The floor publisher: the RT publisher's periods and wake calls, nothing else. Each period it
//! sleeps to the absolute deadline, stores the send time in the floor's stamps, and makes the same
//! timed wake calls the harness makes (every member, the RT subscriber's first), keeping the
//! timer latency and the first call's duration in preallocated arrays. Membership changes
//! (queue noise joining and leaving) are followed outside the timed calls, as the harness does.
//! Missed periods are skipped and counted the same way.

use std::sync::atomic::Ordering;

use anyhow::{Context, bail};

use super::{Finished, Samples};
use crate::protocol::{QueueSpec, RtSpec};
use crate::transport::Waker;
use crate::worker::WorkerContext;
use rtsoak_analysis::stats::Recorder;
use rtsoak_record::{Counters, Series};
use rtsoak_sys::clock::{now_ns, sleep_until_ns};
use rtsoak_sys::queue::{FLAG_WARMUP, Message};
use rtsoak_sys::region::{Region, WorkerSlot, phase, worker_state};
use rtsoak_sys::sched;

/// Run the floor publisher with waker `W` for the run's periods.
pub(crate) fn run<W: Waker>(
    context: &mut WorkerContext,
    spec: &QueueSpec,
    mut waker: W,
) -> anyhow::Result<()> {
    let rt = spec.rt().context("the floor pair is the RT pair's only")?;
    let region = context.region();
    reach(&mut waker, region)?;
    let mut send_call = Samples::new(rt.measured_periods);
    let mut timer = Samples::new(rt.measured_periods);
    let mut counters = Counters::default();
    context.ready();

    let slot = context.slot();
    let Some(periods) = start(region, slot, spec, rt) else {
        return Ok(());
    };
    counters.planned_periods = rt.measured_periods;
    let mut seen_epoch = region.control.members_epoch.load(Ordering::Acquire);
    let mut usage_before = None;
    let mut sent = 0u64;
    let mut period = 0u64;
    while period < periods.total {
        let deadline_ns = periods.deadline_ns(period);
        sleep_until_ns(deadline_ns);
        let woke_ns = now_ns();
        if region.phase() == phase::STOP {
            break;
        }
        let measured = period >= periods.warmup;
        if measured && usage_before.is_none() {
            usage_before = Some(sched::usage());
            // What is warm-up is the publisher's to say: a late warm-up period's send may fall
            // after the measured phase's start.
            region.floor_stamps.measure_from(sent);
        }
        let first_call_ns = send(&mut waker, region, spec, sent, measured, &mut counters);
        sent += 1;
        slot.published_total.store(sent, Ordering::Release);
        if measured {
            timer.push(woke_ns - deadline_ns);
            send_call.push(first_call_ns);
            counters.messages += 1;
        } else {
            counters.warmup_messages += 1;
        }
        follow_members(&mut waker, region, &mut seen_epoch, &mut counters);
        let now = now_ns();
        slot.heartbeat_ns.store(now, Ordering::Relaxed);
        period = periods.next_after(period, now, &mut counters);
    }

    let published = Published {
        send_call,
        timer,
        counters,
        usage_before,
    };
    published.finished(spec, rt, &periods).report(context)
}

/// Before the loop: the floor subscriber, reached through the membership table as the
/// harness's publisher reaches its subscribers.
fn reach<W: Waker>(waker: &mut W, region: &Region) -> anyhow::Result<()> {
    waker
        .refresh(region)
        .context("reaching the floor subscriber (is it running?)")?;
    if waker.targets() == 0 {
        bail!("no subscriber to wake: the floor subscriber is not a member of the queue");
    }
    Ok(())
}

/// What the publisher's loop took: its two series' samples, its counters, and its resource
/// use from the first measured period on.
struct Published {
    send_call: Samples,
    timer: Samples,
    counters: Counters,
    usage_before: Option<sched::Usage>,
}

impl Published {
    /// What the publisher leaves once its loop is over (after the loop, where it may
    /// allocate): its series over the measured phase of `periods`.
    fn finished(self, spec: &QueueSpec, rt: &RtSpec, periods: &Periods) -> Finished<4> {
        let outliers = rt.outliers_max as usize;
        let (threshold_ns, period_ns) = (spec.threshold_ns, periods.period_ns);
        Finished {
            names: Series::PUBLISHER,
            series: [
                self.send_call
                    .into_recorder(threshold_ns, outliers, period_ns),
                Recorder::new(threshold_ns, 0),
                self.timer.into_recorder(threshold_ns, outliers, period_ns),
                Recorder::new(threshold_ns, 0),
            ],
            measure_start_ns: periods.deadline_ns(periods.warmup),
            measure_end_ns: periods.deadline_ns(periods.total),
            counters: self.counters,
            usage_before: self.usage_before,
        }
    }
}

/// Queue noise joined or left (the membership epoch moved past `seen_epoch`): reach it from
/// the next send on, outside the timed calls, as the harness does.
#[inline]
fn follow_members<W: Waker>(
    waker: &mut W,
    region: &Region,
    seen_epoch: &mut u64,
    counters: &mut Counters,
) {
    let epoch = region.control.members_epoch.load(Ordering::Acquire);
    if epoch != *seen_epoch {
        *seen_epoch = epoch;
        counters.member_refreshes += 1;
        if waker.refresh(region).is_err() {
            counters.wake_errors += 1;
        }
    }
}

/// Wait (1 ms at a time) for the coordinator to start the run, then mark this worker running
/// (`slot`) and fix the run's periods; `None` if the coordinator stopped the run instead.
fn start(region: &Region, slot: &WorkerSlot, spec: &QueueSpec, rt: &RtSpec) -> Option<Periods> {
    while region.phase() == phase::SETUP {
        sleep_until_ns(now_ns() + 1_000_000);
    }
    if region.phase() == phase::STOP {
        return None;
    }
    slot.state.store(worker_state::RUNNING, Ordering::Release);
    Some(Periods {
        start_ns: region.control.start_ns.load(Ordering::Acquire),
        period_ns: spec.period_ns,
        warmup: rt.warmup_periods,
        total: rt.warmup_periods + rt.measured_periods,
    })
}

/// Send number `n`: its time into the stamps, then the wake calls, every member's, the RT
/// subscriber's first, as the harness makes them. Returns how long the first call took.
#[inline]
fn send<W: Waker>(
    waker: &mut W,
    region: &Region,
    spec: &QueueSpec,
    n: u64,
    measured: bool,
    counters: &mut Counters,
) -> u64 {
    let message = Message {
        seq: n,
        send_ns: now_ns(),
        publisher_id: spec.publisher_id,
        flags: if measured { 0 } else { FLAG_WARMUP },
    };
    region.floor_stamps.stamp(n, message.send_ns);
    let mut first_call_ns = 0;
    for index in 0..waker.targets() {
        let before_ns = now_ns();
        let result = waker.wake(index, &message);
        if index == 0 {
            first_call_ns = now_ns() - before_ns;
        }
        // A member that left since the last refresh is a membership race, not an error.
        if result.is_err() && !(index > 0 && waker.departed(region, index)) {
            counters.wake_errors += 1;
        }
    }
    if waker.settle().is_err() {
        counters.wake_errors += 1;
    }
    first_call_ns
}

/// The run's periods, fixed when it starts.
struct Periods {
    /// `CLOCK_MONOTONIC` ns of period 0's deadline.
    start_ns: u64,
    period_ns: u64,
    /// Warm-up periods, before the measured ones.
    warmup: u64,
    /// Warm-up and measured periods together.
    total: u64,
}

impl Periods {
    #[inline]
    fn deadline_ns(&self, period: u64) -> u64 {
        self.start_ns + period * self.period_ns
    }

    /// The period to run after `period`, at `now_ns`: the next one, or, where its deadline has
    /// already passed, the first still ahead, the skipped ones counted (warm-up and measured
    /// apart) as the harness's publisher counts them.
    #[inline]
    fn next_after(&self, period: u64, now_ns: u64, counters: &mut Counters) -> u64 {
        let next = period + 1;
        if now_ns <= self.deadline_ns(next) {
            return next;
        }
        let resume = ((now_ns - self.start_ns) / self.period_ns + 1).min(self.total);
        let warmup_skipped = self.warmup.clamp(next, resume) - next;
        counters.warmup_missed_periods += warmup_skipped;
        counters.missed_periods += resume - next - warmup_skipped;
        resume
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missed_periods_are_skipped_and_counted_warm_up_apart() {
        let periods = Periods {
            start_ns: 1_000,
            period_ns: 100,
            warmup: 5,
            total: 20,
        };
        let mut counters = Counters::default();
        assert_eq!(periods.next_after(2, 1_250, &mut counters), 3);
        // Period 3 ended at 1_950: periods 4 to 9 were due and are skipped; 4 is warm-up.
        assert_eq!(periods.next_after(3, 1_950, &mut counters), 10);
        assert_eq!(
            (counters.warmup_missed_periods, counters.missed_periods),
            (1, 5)
        );
        // Never past the last period.
        assert_eq!(periods.next_after(10, 9_000, &mut counters), 20);
    }
}
