//! Where every worker spec is built: the part every worker has, from its role (`worker_spec`),
//! and the work of its kind, from the plan (one constructor per kind). What the profile asked of
//! each kind of noise is read back from these specs (`coordinator::noise::fold::asked`), so they
//! are also the record of what was asked.

use std::path::Path;

use crate::protocol::{BreakOnSpec, Life, OnThresholdSpec, QueueSpec, RtSpec, Work, WorkerSpec};
use rtsoak_record::plan::RunPlan;
use rtsoak_record::transport::Name;
use rtsoak_record::{Policy, Role, Series};
use rtsoak_sys::region::RT_MEMBER;

/// The id the RT publisher stamps on its messages, and the one the RT subscriber measures.
const RT_PUBLISHER_ID: u32 = 0;

/// The spec of the RT publisher or subscriber (`role`) in region slot `slot`, running
/// `transport`: measuring the plan's periods, and the only ones that watch `--break-on` and
/// `--on-threshold` (both are for the RT pair's samples only; each worker watches its own
/// series: the publisher `send_call`, the subscriber `delivery`). A floor plan gets the floor
/// pair's loops.
pub(crate) fn rt_spec(plan: &RunPlan, transport: Name, role: Role, slot: usize) -> WorkerSpec {
    debug_assert!(matches!(role, Role::Publisher | Role::Subscriber));
    let break_on = plan.break_on_ns.map(|limit_ns| BreakOnSpec {
        limit_ns,
        carry_on: plan.break_on_continue,
        tracefs_dir: rtsoak_sys::trace::find_tracefs(Path::new("/")).ok(),
    });
    let series = if role == Role::Publisher {
        Series::SendCall
    } else {
        Series::Delivery
    };
    let on_threshold = plan.actions.watches(series).then_some(OnThresholdSpec {
        limit_ns: plan.actions.limit_ns,
        every_ns: plan.actions.every_ns,
    });
    let rt = RtSpec {
        warmup_periods: plan.warmup_periods(),
        measured_periods: plan.measured_periods(),
        interval_ns: plan.interval_ns,
        outliers_max: plan.outliers_per_list(),
        break_on,
        on_threshold,
        inject_fault: plan.inject_fault,
    };
    let queue = queue_spec(plan, transport, RT_MEMBER, RT_PUBLISHER_ID, Life::Rt(rt));
    let work = if plan.floor {
        Work::Floor(queue)
    } else {
        Work::Queue(queue)
    };
    worker_spec(plan, role, slot, work)
}

/// The spec of one queue-noise process of `role` in region slot `slot` (subscribers: membership
/// `member`), stamping `publisher_id` on its messages (subscribers: tracking it) and living
/// `lifetime_ns`: what differs from process to process is the caller's to draw.
pub(crate) fn queue_noise_spec(
    plan: &RunPlan,
    transport: Name,
    role: Role,
    slot: usize,
    member: usize,
    publisher_id: u32,
    lifetime_ns: u64,
) -> WorkerSpec {
    debug_assert!(matches!(role, Role::NoisePublisher | Role::NoiseSubscriber));
    let life = Life::Noise { lifetime_ns };
    let queue = queue_spec(plan, transport, member, publisher_id, life);
    worker_spec(plan, role, slot, Work::Queue(queue))
}

/// The spec of the burst worker in region slot `slot`.
pub(crate) fn burst_spec(plan: &RunPlan, slot: usize) -> WorkerSpec {
    let work = Work::Burst(plan.noise.bursts.clone());
    worker_spec(plan, Role::Burst, slot, work)
}

/// The spec of the load worker in region slot `slot`, its file writers writing under
/// `scratch_dir`.
pub(crate) fn load_spec(plan: &RunPlan, slot: usize, scratch_dir: &Path) -> WorkerSpec {
    let work = Work::Load {
        plan: plan.noise.load.clone(),
        scratch_dir: scratch_dir.to_path_buf(),
    };
    worker_spec(plan, Role::Load, slot, work)
}

/// The part every worker has, from its role:
///
/// - The RT pair: each on its RT CPU with the RT policy and priority, memory locked.
/// - Queue noise: on the noise CPUs with the queue noise's policy and priority.
/// - Bursts: on the burst CPUs (the worker's own thread only waits; each burst thread takes
///   the burst priority itself). Load: on the noise CPUs.
fn worker_spec(plan: &RunPlan, role: Role, slot: usize, work: Work) -> WorkerSpec {
    let noise = &plan.noise;
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
    WorkerSpec {
        role,
        slot,
        cpus,
        policy,
        priority,
        coordinator_pid: std::process::id() as i32,
        lock_memory: matches!(role, Role::Publisher | Role::Subscriber),
        work,
    }
}

/// What a queue worker living `life` needs from the plan: the RT pair keeps the plan's period,
/// queue noise the queue noise's.
fn queue_spec(
    plan: &RunPlan,
    transport: Name,
    member: usize,
    publisher_id: u32,
    life: Life,
) -> QueueSpec {
    let noise = &plan.noise;
    let period_ns = match life {
        Life::Rt(_) => plan.period_ns,
        Life::Noise { .. } => noise.queue.period_ns,
    };
    QueueSpec {
        transport,
        member,
        publisher_id,
        period_ns,
        threshold_ns: plan.threshold_ns,
        delivery_timeout_ns: plan.delivery_timeout_ns,
        ring_setup: plan.ring_setup,
        transport_settings: plan.transport_settings.clone(),
        abi: plan.abi,
        noise_wakes_rt_subscriber: noise.enabled
            && noise.queue.publishers > 0
            && noise.queue.wake_rt_subscriber,
        life,
    }
}
