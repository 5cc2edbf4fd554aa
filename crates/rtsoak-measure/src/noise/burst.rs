//! The burst worker: one SCHED_FIFO thread per noise CPU, each busy-looping for a random time
//! (20 us to 1 ms by default) and then sleeping a random gap never shorter than what keeps its
//! busy share under the duty-cycle cap. This is the higher-priority work that preempts a
//! lower-priority task while it holds a lock the RT pair needs.
//!
//! The cap is enforced per burst, so no window of the run exceeds it: a bad profile cannot
//! starve a CPU, whatever RT throttling is set to.
//!
//! Each thread records the CPU, policy and priority it really got (and why not, when it did not)
//! in the report's `thread_setups`: a burst thread that runs without its FIFO priority is
//! toothless noise, and must never pass for the real thing.

use std::sync::Barrier;
use std::sync::atomic::Ordering;

use crate::protocol::WorkerReport;
use rtsoak_record::Policy;
use rtsoak_record::plan::BurstPlan;
use rtsoak_record::{BurstReport, RtSetup};
use rtsoak_sys::clock::{now_ns, sleep_until_ns};
use rtsoak_sys::region::{Region, WorkerSlot, phase};
use rtsoak_sys::sched;

/// The policy every burst thread takes (at the plan's priority).
pub(crate) const POLICY: Policy = Policy::Fifo;

/// The shortest gap after a burst of `busy_ns` that keeps the busy share at or under
/// `cap_percent`: busy / (busy + gap) <= cap.
pub(crate) fn min_gap_ns(busy_ns: u64, cap_percent: u8) -> u64 {
    let cap = u64::from(cap_percent.clamp(1, 100));
    (busy_ns * (100 - cap)).div_ceil(cap)
}

/// What one burst thread did, and what it ran with.
#[derive(Debug, Default, Clone)]
struct ThreadTotals {
    bursts: u64,
    busy_ns: u64,
    elapsed_ns: u64,
    longest_ns: u64,
    setup: RtSetup,
}

/// Run `plan`'s burst threads, one on each of `cpus`, until the run stops; `slot` (this worker's)
/// says when they are all set up.
pub(crate) fn run(
    plan: &BurstPlan,
    cpus: &[usize],
    slot: &WorkerSlot,
    region: &'static Region,
    out: &mut WorkerReport,
) -> anyhow::Result<()> {
    // Ready only once every thread has its CPU and priority: until then a thread is an
    // ordinary task on a CPU full of real-time noise, and an emulated machine starved one
    // there for a whole run.
    let set_up = Barrier::new(cpus.len() + 1);
    let totals: Vec<ThreadTotals> = std::thread::scope(|scope| {
        let threads: Vec<_> = cpus
            .iter()
            .map(|&cpu| {
                let set_up = &set_up;
                (
                    cpu,
                    scope.spawn(move || burst_thread(region, cpu, plan, set_up)),
                )
            })
            .collect();
        set_up.wait();
        slot.state
            .store(rtsoak_sys::region::worker_state::READY, Ordering::Release);
        threads
            .into_iter()
            .map(|(cpu, t)| t.join().unwrap_or_else(|_| panicked(cpu, plan)))
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
        for &cpu in &t.setup.cpus_observed {
            if !out.setup.cpus_observed.contains(&cpu) {
                out.setup.cpus_observed.push(cpu);
            }
        }
    }
    out.thread_setups = totals.into_iter().map(|t| t.setup).collect();
    out.bursts = Some(report);
    Ok(())
}

/// Pin the calling thread to `cpu` and take [`POLICY`] at the plan's priority, recording what
/// it got. A thread that cannot be pinned or take its priority runs its bursts at SCHED_OTHER
/// (never FIFO on a CPU it was not meant for): the CPU is still loaded, and the record says it
/// was not the noise the profile asked for, and why.
fn take_setup(cpu: usize, plan: &BurstPlan) -> RtSetup {
    let mut setup = RtSetup {
        cpus_requested: vec![cpu],
        policy_requested: POLICY.name().to_string(),
        priority_requested: plan.priority,
        ..Default::default()
    };
    setup.policy_error = match sched::pin_to(&[cpu]) {
        Err(error) => Some(format!("pinning to CPU {cpu}: {error}")),
        Ok(()) => sched::set_policy(POLICY.into(), plan.priority)
            .err()
            .map(|error| sched::policy_error(&error)),
    };
    if setup.policy_error.is_some() {
        let _ = sched::set_policy(sched::SchedPolicy::Other, 0);
    }
    setup.cpus_allowed = sched::affinity();
    (setup.policy, setup.priority) = sched::current_policy();
    sched::current_cpu_into(&mut setup.cpus_observed);
    setup
}

/// What a burst thread that panicked leaves: no bursts, and a setup that says so.
fn panicked(cpu: usize, plan: &BurstPlan) -> ThreadTotals {
    ThreadTotals {
        setup: RtSetup {
            cpus_requested: vec![cpu],
            policy_requested: POLICY.name().to_string(),
            priority_requested: plan.priority,
            policy: "unknown".to_string(),
            policy_error: Some(format!("the burst thread for CPU {cpu} panicked")),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// One CPU's bursts, from when every thread has taken its setup (`set_up`).
fn burst_thread(region: &Region, cpu: usize, plan: &BurstPlan, set_up: &Barrier) -> ThreadTotals {
    let mut totals = ThreadTotals {
        setup: take_setup(cpu, plan),
        ..Default::default()
    };
    set_up.wait();
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
    sched::current_cpu_into(&mut totals.setup.cpus_observed);
    totals.elapsed_ns = now_ns() - started_ns;
    totals
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> BurstPlan {
        rtsoak_record::plan::NoisePlan::off().bursts
    }

    /// `take_setup` on a scratch thread, so the test's own thread keeps its CPUs and policy.
    fn setup_on_scratch_thread(cpu: usize) -> RtSetup {
        std::thread::scope(|scope| scope.spawn(|| take_setup(cpu, &plan())).join().unwrap())
    }

    #[test]
    fn a_burst_thread_records_the_cpu_policy_and_priority_it_got() {
        let setup = setup_on_scratch_thread(0);
        assert_eq!(setup.cpus_requested, [0]);
        assert_eq!(
            (setup.policy_requested.as_str(), setup.priority_requested),
            ("fifo", 50)
        );
        assert_eq!(setup.cpus_allowed, [0]);
        assert_eq!(setup.cpus_observed, [0]);
        // As root it gets FIFO 50; unprivileged it runs SCHED_OTHER and the error says why.
        match &setup.policy_error {
            None => assert_eq!((setup.policy.as_str(), setup.priority), ("fifo", 50)),
            Some(error) => {
                assert_eq!((setup.policy.as_str(), setup.priority), ("other", 0));
                assert!(error.contains("sched_setscheduler"), "{error}");
            }
        }
    }

    #[test]
    fn a_burst_thread_that_cannot_be_pinned_never_takes_fifo_and_says_why() {
        // No machine this runs on has a CPU 1000 online: the kernel refuses the mask.
        let setup = setup_on_scratch_thread(1000);
        let error = setup
            .policy_error
            .expect("pinning to a CPU that does not exist fails");
        assert!(error.starts_with("pinning to CPU"), "{error}");
        assert_eq!((setup.policy.as_str(), setup.priority), ("other", 0));
    }

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
