//! The ordered steps that make a worker real-time, each outcome recorded (never fatal on its
//! own: a run without privileges still runs, and its result says what it lacked). Memory is
//! locked last, when the worker's setup is over ([`lock_memory`]), so everything the measuring
//! loop touches is mapped by then and nothing needs to be locked later.

use crate::protocol::WorkerSpec;

use rtsoak_record::{Policy, Role, RtSetup};
use rtsoak_sys::{SysError, sched};

/// What the first steps of becoming real-time got: each step's error, if it failed.
pub struct Steps {
    /// Pinning to the CPUs.
    pub pin: Result<(), SysError>,
    /// Taking the policy and priority.
    pub policy: Result<(), SysError>,
}

/// The steps every measuring thread takes (a worker's and a microbenchmark's), in this order:
/// pin the calling thread to `cpus` first, so that nothing runs on the wrong CPU at real-time
/// priority; take `policy` at `priority`; then, if `prefault`, touch the stack the loop will use.
pub fn take_cpus_and_policy(cpus: &[usize], policy: Policy, priority: u8, prefault: bool) -> Steps {
    let pin = sched::pin_to(cpus);
    let policy = sched::set_policy(policy.into(), priority);
    if prefault {
        sched::prefault_stack();
    }
    Steps { pin, policy }
}

/// Pin, take the policy, pre-fault the stack, and (subscribers) let the run's other workers
/// duplicate our fds. Returns what was achieved.
pub(crate) fn become_realtime(spec: &WorkerSpec) -> RtSetup {
    let mut setup = RtSetup {
        cpus_requested: spec.cpus.clone(),
        policy_requested: spec.policy.name().to_string(),
        priority_requested: spec.priority,
        // Room for every CPU a worker could be seen on, so recording one never allocates.
        cpus_observed: Vec::with_capacity(rtsoak_sys::region::MAX_WORKERS),
        ..Default::default()
    };
    let steps = take_cpus_and_policy(&spec.cpus, spec.policy, spec.priority, spec.lock_memory);
    if let Err(error) = steps.pin {
        setup.policy_error = Some(format!("pinning to CPUs {:?}: {error}", spec.cpus));
    }
    setup.cpus_allowed = sched::affinity();
    if let Err(error) = steps.policy {
        setup.policy_error = Some(sched::policy_error(&error));
    }
    let (policy, priority) = sched::current_policy();
    setup.policy = policy;
    setup.priority = priority;
    if matches!(spec.role, Role::Subscriber | Role::NoiseSubscriber) {
        // Publishers reach our ring or eventfd with pidfd_getfd, which Yama's ptrace_scope=1
        // allows only to an ancestor we name; they are all the coordinator's descendants.
        let _ = sched::allow_fd_access_from(spec.coordinator_pid);
    }
    setup
}

/// At the end of setup: lock what fits under `RLIMIT_MEMLOCK` (everything, with room to spare
/// or `CAP_IPC_LOCK`; else what is mapped now; else as much as fits, what the loop needs first)
/// and record it.
pub fn lock_memory(setup: &mut RtSetup) {
    let lock = rtsoak_sys::memlock::lock_what_fits();
    setup.memory_locked = lock.current;
    setup.memory_locked_future = lock.future;
    setup.memory_locked_bytes = lock.locked_bytes;
    setup.memory_lock_error = lock.note;
}
