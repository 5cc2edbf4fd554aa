//! The burst worker: one SCHED_FIFO thread per noise CPU, each busy-looping for a random time
//! (20 us to 1 ms by default) and then sleeping a random gap never shorter than what keeps its
//! busy share under the duty-cycle cap. This is the higher-priority work that preempts a
//! lower-priority task while it holds a lock the RT pair needs.
//!
//! The cap is enforced per burst, so no window of the run exceeds it: a bad profile cannot
//! starve a CPU, whatever RT throttling is set to.

use std::sync::atomic::Ordering;

use anyhow::Context;

use super::WorkerContext;
use crate::plan::{BurstPlan, Policy};
use crate::protocol::BurstReport;
use crate::region::{Region, phase};
use crate::sys::clock::{now_ns, sleep_until_ns};
use crate::sys::sched;

/// The shortest gap after a burst of `busy_ns` that keeps the busy share at or under
/// `cap_percent`: busy / (busy + gap) <= cap.
pub fn min_gap_ns(busy_ns: u64, cap_percent: u8) -> u64 {
    let cap = u64::from(cap_percent.clamp(1, 100));
    (busy_ns * (100 - cap)).div_ceil(cap)
}

/// What one burst thread did.
#[derive(Debug, Default, Clone, Copy)]
struct ThreadTotals {
    bursts: u64,
    busy_ns: u64,
    elapsed_ns: u64,
    longest_ns: u64,
    cpu: Option<usize>,
}

/// Run the burst threads until the run stops.
pub fn run(context: &mut WorkerContext) -> anyhow::Result<()> {
    let plan = context
        .spec
        .bursts
        .clone()
        .context("a burst worker needs burst settings")?;
    let region = context.region();
    let cpus = context.spec.cpus.clone();
    context
        .slot()
        .state
        .store(crate::region::worker_state::READY, Ordering::Release);
    let totals: Vec<ThreadTotals> = std::thread::scope(|scope| {
        let threads: Vec<_> = cpus
            .iter()
            .map(|&cpu| {
                let plan = plan.clone();
                scope.spawn(move || burst_thread(region, cpu, &plan))
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().unwrap_or_default())
            .collect()
    });
    let mut report = BurstReport {
        threads: totals.len() as u32,
        ..Default::default()
    };
    for t in &totals {
        report.bursts += t.bursts;
        report.busy_ns += t.busy_ns;
        report.elapsed_ns += t.elapsed_ns;
        report.longest_ns = report.longest_ns.max(t.longest_ns);
        if t.elapsed_ns > 0 {
            let duty = 100.0 * t.busy_ns as f64 / t.elapsed_ns as f64;
            report.max_duty_percent = report.max_duty_percent.max(duty);
        }
        if let Some(cpu) = t.cpu
            && !context.report.setup.cpus_observed.contains(&cpu)
        {
            context.report.setup.cpus_observed.push(cpu);
        }
    }
    context.report.bursts = Some(report);
    Ok(())
}

/// One CPU's bursts. A thread that cannot be pinned or take its priority does nothing rather
/// than run somewhere it was not meant to.
fn burst_thread(region: &Region, cpu: usize, plan: &BurstPlan) -> ThreadTotals {
    let mut totals = ThreadTotals::default();
    if sched::pin_to(&[cpu]).is_err() || sched::set_policy(Policy::Fifo, plan.priority).is_err() {
        // Without FIFO the busy loop would still load the CPU; run it at SCHED_OTHER so the
        // result still shows load, and say so through the observed policy being absent.
        let _ = sched::set_policy(Policy::Other, 0);
    }
    let started_ns = now_ns();
    let mut rng = fastrand::Rng::new();
    while region.phase() != phase::STOP {
        let busy_ns = rng.u64(plan.min_ns..=plan.max_ns);
        let begin_ns = now_ns();
        let mut now = begin_ns;
        while now < begin_ns + busy_ns {
            std::hint::spin_loop();
            now = now_ns();
        }
        let burst_ns = now - begin_ns;
        totals.bursts += 1;
        totals.busy_ns += burst_ns;
        totals.longest_ns = totals.longest_ns.max(burst_ns);
        // A random gap, but never shorter than the cap allows.
        let gap_ns = min_gap_ns(burst_ns, plan.duty_cap_percent) + rng.u64(0..=plan.max_ns);
        sleep_until_ns(now + gap_ns);
    }
    totals.cpu = usize::try_from(sched::current_cpu()).ok();
    totals.elapsed_ns = now_ns() - started_ns;
    totals
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_minimum_gap_keeps_the_busy_share_under_the_cap() {
        for cap in [1u8, 10, 33, 50, 90, 95] {
            for busy in [1u64, 20_000, 123_457, 1_000_000] {
                let gap = min_gap_ns(busy, cap);
                let share = busy as f64 / (busy + gap) as f64;
                assert!(
                    share <= f64::from(cap) / 100.0 + 1e-12,
                    "cap {cap}% busy {busy}: {share}"
                );
            }
        }
        assert_eq!(min_gap_ns(1_000, 50), 1_000);
        assert_eq!(min_gap_ns(1_000, 25), 3_000);
    }
}
