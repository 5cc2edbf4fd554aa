//! The one constructor of worker specs: what every worker of a run gets from the plan, and
//! what its role changes. What the profile asked of each kind of noise is read back from these
//! specs (`coordinator::noise::fold::asked`), so they are also the record of what was asked.

use std::path::Path;

use crate::plan::RunPlan;
use crate::protocol::WorkerSpec;
use crate::record::{Policy, Role};
use crate::transport::Name;

/// The spec of the worker of `role` in region slot `slot` (subscribers: membership `member`)
/// running `transport` under `plan`.
///
/// - The RT pair: each on its RT CPU with the RT policy and priority, measuring the plan's
///   periods, memory locked, and the only ones that watch `--break-on`.
/// - Queue noise: on the noise CPUs with the queue noise's policy and priority; one histogram
///   per process, shipped when it exits; its lifetime is set per process by the caller.
/// - Bursts: on the burst CPUs (the worker's own thread only waits; each burst thread takes
///   the burst priority itself). Load: on the noise CPUs.
pub fn worker_spec(
    plan: &RunPlan,
    transport: Name,
    role: Role,
    slot: usize,
    member: usize,
) -> WorkerSpec {
    let noise = &plan.noise;
    let rt = matches!(role, Role::Publisher | Role::Subscriber);
    let (cpus, policy, priority) = match role {
        Role::Publisher => (
            vec![plan.rt.publisher_cpu],
            plan.rt.policy,
            plan.rt.publisher_priority,
        ),
        Role::Subscriber => (
            vec![plan.rt.subscriber_cpu],
            plan.rt.policy,
            plan.rt.subscriber_priority,
        ),
        Role::NoisePublisher | Role::NoiseSubscriber => (
            plan.noise_cpus.clone(),
            noise.queue.policy,
            noise.queue.priority,
        ),
        Role::Burst => (noise.bursts.cpus.clone(), Policy::Other, 0),
        Role::Load => (plan.noise_cpus.clone(), Policy::Other, 0),
    };
    // Breaks are for the RT pair's samples only.
    let break_on_ns = plan.break_on_ns.filter(|_| rt);
    WorkerSpec {
        role,
        slot,
        member,
        publisher_id: 0,
        transport,
        cpus,
        policy,
        priority,
        period_ns: if rt {
            plan.period_ns
        } else {
            noise.queue.period_ns
        },
        warmup_periods: if rt { plan.warmup_periods() } else { 0 },
        measured_periods: if rt { plan.measured_periods() } else { 0 },
        threshold_ns: plan.threshold_ns,
        interval_ns: if rt { plan.interval_ns } else { 0 },
        delivery_timeout_ns: plan.delivery_timeout_ns,
        outliers_max: if rt { plan.outliers_max } else { 0 },
        ring_setup: plan.ring_setup,
        transport_settings: plan.transport_settings.clone(),
        coordinator_pid: std::process::id() as i32,
        lifetime_ns: 0,
        lock_memory: rt,
        bursts: (role == Role::Burst).then(|| noise.bursts.clone()),
        load: (role == Role::Load).then(|| noise.load.clone()),
        scratch_dir: None,
        abi: plan.abi,
        break_on_ns,
        break_on_continue: rt && plan.break_on_continue,
        tracefs_dir: break_on_ns.and_then(|_| crate::sys::trace::find_tracefs(Path::new("/")).ok()),
        noise_wakes_rt_subscriber: noise.enabled
            && noise.queue.publishers > 0
            && noise.queue.wake_rt_subscriber,
        inject_fault: if rt { plan.inject_fault } else { None },
    }
}
