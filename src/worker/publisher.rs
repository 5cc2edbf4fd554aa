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
use crate::plan::Fault;
use crate::protocol::{Life, QueueSpec, SeriesReport};
use crate::queue::{FLAG_WARMUP, Message};
use crate::record::{Counters, Hygiene, Series};
use crate::region::{phase, worker_state};
use crate::stats::Recorder;
use crate::sys::clock::{now_ns, sleep_until_ns};
use crate::sys::{io_wq, sched};
use crate::transport::Waker;

/// Run the publisher with waker `W` until its periods are done or the coordinator stops it.
#[allow(
    clippy::too_many_lines,
    reason = "a measuring loop: to be split into setup, one step per period and finish, with `rtsoak bench` before and after to show the loop's cost did not move"
)]
pub fn run<W: Waker>(
    context: &mut WorkerContext,
    spec: &QueueSpec,
    mut waker: W,
) -> anyhow::Result<()> {
    let region = context.region();
    let slot = context.slot();
    let rt = spec.rt();
    let outliers = rt.map_or(0, |rt| rt.outliers_max as usize);
    let mut send = Recorder::new(spec.threshold_ns, outliers);
    let mut fanout = Recorder::new(spec.threshold_ns, outliers);
    let mut timer = Recorder::new(spec.threshold_ns, outliers);
    let mut refresh = Recorder::new(spec.threshold_ns, outliers);
    let mut counters = Counters::default();
    // The injected faults (tests only, the RT publisher's): it never wakes the RT subscriber,
    // or wakes it late now and then.
    let fault = rt.and_then(|rt| rt.inject_fault);
    let skip_rt_wake = fault == Some(Fault::RtWakeLost);
    let late_wake = (fault == Some(Fault::RtWakeLate)).then(|| LateWake::of(spec));
    let break_on_spec = rt.and_then(|rt| rt.break_on.as_ref());
    let mut break_on = BreakOn::new(break_on_spec, Series::SendCall, region)?;

    waker
        .refresh(region)
        .context("reaching the RT subscriber (is it running?)")?;
    if waker.targets() == 0 && rt.is_some() {
        bail!("no subscriber to wake: the RT subscriber is not a member of the queue");
    }
    // Outside the measuring loop (reading /proc allocates): once now, once right after it.
    let io_wq_after_setup = io_wq::workers();
    context.ready();
    while region.phase() == phase::SETUP {
        sleep_until_ns(now_ns() + 1_000_000);
    }
    if region.phase() == phase::STOP {
        return Ok(());
    }
    // The RT publisher keeps the run's clock and its periods; a noise publisher starts its own
    // periods when it is born, lives its lifetime, and ships one interval when it exits.
    let (start_ns, warmup_periods, total_periods, interval_ns) = match &spec.life {
        Life::Rt(rt) => (
            region.control.start_ns.load(Ordering::Acquire),
            rt.warmup_periods,
            rt.warmup_periods + rt.measured_periods,
            rt.interval_ns,
        ),
        Life::Noise { lifetime_ns } => (now_ns(), 0, lifetime_ns / spec.period_ns, 0),
    };
    counters.planned_periods = total_periods - warmup_periods;
    let mut intervals = Intervals::new(
        start_ns + warmup_periods * spec.period_ns,
        start_ns + total_periods * spec.period_ns,
        interval_ns,
    );
    let mut usage_before = None;
    let mut seen_epoch = region.control.members_epoch.load(Ordering::Acquire);
    let mut seq = 0u64;
    let mut period = 0u64;
    slot.state.store(worker_state::RUNNING, Ordering::Release);

    while period < total_periods {
        let deadline_ns = start_ns + period * spec.period_ns;
        sleep_until_ns(deadline_ns);
        let woke_ns = now_ns();
        if region.phase() == phase::STOP {
            break;
        }
        let measured = period >= warmup_periods;
        if measured && usage_before.is_none() {
            usage_before = Some(sched::usage());
        }

        // Publish, then the timed send call(s): target 0 (the RT subscriber) first.
        let message = Message {
            seq,
            send_ns: now_ns(),
            publisher_id: spec.publisher_id,
            flags: if measured { 0 } else { FLAG_WARMUP },
        };
        region.queue.publish(&message);
        if measured && let Some(late) = &late_wake {
            late.hold(seq);
        }
        let targets = waker.targets();
        let mut first_call_ns = 0;
        let mut first_start_ns = 0;
        let mut last_end_ns = 0;
        for index in 0..targets {
            let before_ns = now_ns();
            let result = if skip_rt_wake && index == 0 {
                Ok(())
            } else {
                waker.wake(index, &message)
            };
            let after_ns = now_ns();
            if index == 0 {
                first_start_ns = before_ns;
                first_call_ns = after_ns - before_ns;
            }
            last_end_ns = after_ns;
            if result.is_err() {
                if index > 0 && waker.departed(region, index) {
                    counters.departed_wakes += 1;
                } else {
                    counters.wake_errors += 1;
                }
            }
        }
        if waker.settle().is_err() {
            counters.wake_errors += 1;
        }
        seq += 1;
        // Only now, with its wake calls returned: the subscriber's fallback poll reads it.
        slot.published_total.store(seq, Ordering::Release);

        if measured {
            let at_ns = message.send_ns.saturating_sub(intervals.measure_start_ns);
            send.record(at_ns, first_call_ns);
            fanout.record(at_ns, last_end_ns - first_start_ns);
            timer.record(at_ns, woke_ns - deadline_ns);
            break_on.check(first_call_ns, message.seq, at_ns);
            counters.messages += 1;
            slot.messages.store(counters.messages, Ordering::Relaxed);
            slot.longest_ns
                .store(send.total_stats.max_ns, Ordering::Relaxed);
            slot.over_threshold
                .store(send.total_stats.over_threshold, Ordering::Relaxed);
        } else {
            counters.warmup_messages += 1;
        }

        // Membership changed: reach the new members now, for the next period's send.
        let epoch = region.control.members_epoch.load(Ordering::Acquire);
        if epoch != seen_epoch {
            seen_epoch = epoch;
            counters.member_refreshes += 1;
            let before_ns = now_ns();
            if waker.refresh(region).is_err() {
                counters.wake_errors += 1;
            }
            if measured {
                let at_ns = before_ns.saturating_sub(intervals.measure_start_ns);
                refresh.record(at_ns, now_ns() - before_ns);
            }
        }

        // Next deadline; if it has already passed, skip (and count) the periods we missed, as
        // cyclictest does, rather than firing a burst of late sends.
        period += 1;
        let now = now_ns();
        slot.heartbeat_ns.store(now, Ordering::Relaxed);
        let next_deadline = start_ns + period * spec.period_ns;
        if now > next_deadline {
            let due = (now - start_ns) / spec.period_ns + 1;
            let resume = due.min(total_periods);
            // Of the skipped periods, those before the end of the warm-up are the warm-up's.
            let warmup_skipped = warmup_periods.clamp(period, resume) - period;
            counters.warmup_missed_periods += warmup_skipped;
            counters.missed_periods += resume - period - warmup_skipped;
            period = resume;
        }
        if measured && intervals.due(now) {
            sched::current_cpu_into(&mut context.report.setup.cpus_observed);
            intervals.advance(
                now,
                &mut context.stream,
                &mut [&mut send, &mut fanout, &mut timer, &mut refresh],
            );
        }
    }

    let end_ns = now_ns();
    let usage_after = sched::usage();
    let io_wq_workers = io_wq::most(io_wq_after_setup, io_wq::workers());
    sched::current_cpu_into(&mut context.report.setup.cpus_observed);
    intervals.finish(
        end_ns,
        &mut context.stream,
        &mut [&mut send, &mut fanout, &mut timer, &mut refresh],
    );
    context.report.hygiene = hygiene(
        usage_before.unwrap_or(usage_after),
        usage_after,
        io_wq_workers,
    );
    context.report.counters = counters;
    context.report.break_event = break_on.event;
    context.report.series = [&send, &fanout, &timer, &refresh]
        .iter()
        .zip(Series::PUBLISHER)
        .map(|(recorder, name)| (name, SeriesReport::from_recorder(recorder)))
        .collect();
    if intervals.write_errors > 0 {
        bail!(
            "{} interval frames could not be written",
            intervals.write_errors
        );
    }
    Ok(())
}

/// Resource use between two readings (the peak RSS is the later reading's), and the io-wq
/// workers seen over the same phase ([`io_wq::most`]).
pub fn hygiene(before: sched::Usage, after: sched::Usage, io_wq_workers: Option<u64>) -> Hygiene {
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
