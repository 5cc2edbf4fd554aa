//! Becoming a real-time worker: CPU affinity, scheduling policy and priority, locked memory,
//! a pre-faulted stack, death with the parent. Each step reports what it achieved so the result
//! can say exactly what a worker ran with; none of them aborts the run on its own.

use nix::sched::{CpuSet, sched_getaffinity, sched_setaffinity};
use nix::unistd::Pid;

use super::SysError;

/// Pin the calling thread (a worker is single-threaded, so: the process) to `cpus`.
pub fn pin_to(cpus: &[usize]) -> Result<(), SysError> {
    let mut set = CpuSet::new();
    for &cpu in cpus {
        set.set(cpu)
            .map_err(|e| SysError::new("sched_setaffinity", e))?;
    }
    sched_setaffinity(Pid::from_raw(0), &set).map_err(|e| SysError::new("sched_setaffinity", e))
}

/// The CPUs the calling thread may run on.
pub fn affinity() -> Vec<usize> {
    match sched_getaffinity(Pid::from_raw(0)) {
        Ok(set) => (0..CpuSet::count())
            .filter(|&cpu| set.is_set(cpu).unwrap_or(false))
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// The CPU the calling thread is running on right now (cheap: read from rseq/vDSO), or -1.
#[inline]
pub fn current_cpu() -> i32 {
    nix::sched::sched_getcpu().map_or(-1, |cpu| cpu as i32)
}

/// A scheduling policy, as the kernel names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchedPolicy {
    /// `SCHED_FIFO`.
    Fifo,
    /// `SCHED_RR`.
    RoundRobin,
    /// `SCHED_OTHER`.
    Other,
}

/// Why a policy could not be taken, with what to do when it is a matter of privileges.
pub fn policy_error(error: &SysError) -> String {
    let hint = if error.errno == nix::errno::Errno::EPERM {
        ": run as root, or grant CAP_SYS_NICE or an RLIMIT_RTPRIO of at least the priority"
    } else {
        ""
    };
    format!("{error}{hint}")
}

/// Set the calling thread's scheduling policy and priority. `EPERM` means no `CAP_SYS_NICE`
/// and `RLIMIT_RTPRIO` below the priority.
pub fn set_policy(policy: SchedPolicy, priority: u8) -> Result<(), SysError> {
    let (policy, priority) = match policy {
        SchedPolicy::Fifo => (libc::SCHED_FIFO, priority),
        SchedPolicy::RoundRobin => (libc::SCHED_RR, priority),
        SchedPolicy::Other => (libc::SCHED_OTHER, 0),
    };
    let param = libc::sched_param {
        sched_priority: i32::from(priority),
    };
    // SAFETY: `param` is a valid `sched_param` for the whole call; pid 0 is the calling thread.
    match unsafe { libc::sched_setscheduler(0, policy, &param) } {
        0 => Ok(()),
        _ => Err(SysError::last("sched_setscheduler")),
    }
}

/// The policy and priority the calling thread actually has, as the kernel reports them.
pub fn current_policy() -> (String, u8) {
    // SAFETY: pid 0 is the calling thread; the call only returns its policy.
    let policy = unsafe { libc::sched_getscheduler(0) };
    let mut param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `param` is a valid, writable `sched_param` for the whole call.
    if policy < 0 || unsafe { libc::sched_getparam(0, &mut param) } != 0 {
        return ("unknown".to_string(), 0);
    }
    let name = match policy & !libc::SCHED_RESET_ON_FORK {
        libc::SCHED_FIFO => "fifo",
        libc::SCHED_RR => "rr",
        libc::SCHED_OTHER => "other",
        libc::SCHED_BATCH => "batch",
        libc::SCHED_IDLE => "idle",
        libc::SCHED_DEADLINE => "deadline",
        _ => "unknown",
    };
    (name.to_string(), param.sched_priority.clamp(0, 99) as u8)
}

/// Bytes of stack touched by [`prefault_stack`]: far more than any measuring loop uses.
pub(crate) const STACK_PREFAULT_BYTES: usize = 256 * 1024;

/// Touch [`STACK_PREFAULT_BYTES`] of stack below the caller, so later calls never fault a stack
/// page in (and the stack mapping covers them when the memory is locked).
#[inline(never)]
pub fn prefault_stack() {
    let mut page = [0u8; STACK_PREFAULT_BYTES];
    // black_box makes the compiler keep the writes.
    for byte in page.iter_mut().step_by(4096) {
        *byte = 1;
    }
    std::hint::black_box(&mut page);
}

/// Name the calling thread (`prctl(PR_SET_NAME)`; cut to the kernel's 15 bytes). Threads it
/// starts afterwards inherit the name.
pub fn set_thread_name(name: &str) -> Result<(), SysError> {
    let name = std::ffi::CString::new(name.as_bytes())
        .map_err(|_| SysError::new("prctl(PR_SET_NAME)", nix::errno::Errno::EINVAL))?;
    nix::sys::prctl::set_name(&name).map_err(|e| SysError::new("prctl(PR_SET_NAME)", e))
}

/// Let the calling thread's timed sleeps end within `slack_ns` of their deadline
/// (`prctl(PR_SET_TIMERSLACK)`). A SCHED_OTHER thread's sleeps are otherwise allowed to end up
/// to 50 us late, so that the kernel can batch timer interrupts: too loose for a supervisor
/// that must wake in the quiet part of a real-time period.
///
/// The slack is inherited by every process this thread starts and kept across `exec`, so it
/// is lowered only for as long as the returned guard lives: the noise processes started before
/// and after keep the slack they would have had (a load generator's timers firing twice as
/// often in a later run would make the noise depend on the order of the runs).
pub fn lower_timer_slack_ns(slack_ns: u64) -> Result<TimerSlack, SysError> {
    let previous = nix::sys::prctl::get_timerslack()
        .map_err(|e| SysError::new("prctl(PR_GET_TIMERSLACK)", e))?;
    nix::sys::prctl::set_timerslack(slack_ns as libc::c_ulong)
        .map_err(|e| SysError::new("prctl(PR_SET_TIMERSLACK)", e))?;
    Ok(TimerSlack { previous })
}

/// The calling thread's timer slack lowered by [`lower_timer_slack_ns`]: put back on drop.
#[derive(Debug)]
pub struct TimerSlack {
    previous: libc::c_int,
}

impl Drop for TimerSlack {
    fn drop(&mut self) {
        // Best effort: the value was read from this thread a moment ago.
        let _ = nix::sys::prctl::set_timerslack(self.previous as libc::c_ulong);
    }
}

/// Ask for SIGKILL when the parent (the coordinator) dies, then make sure it has not already
/// died between fork and this call (in which case our parent is now someone else).
pub fn die_with_parent(expected_parent: i32) -> Result<(), SysError> {
    nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
        .map_err(|e| SysError::new("prctl(PR_SET_PDEATHSIG)", e))?;
    if nix::unistd::getppid().as_raw() != expected_parent {
        return Err(SysError::new("getppid", nix::errno::Errno::ESRCH));
    }
    Ok(())
}

/// Let `tracer` and its descendants use `pidfd_getfd` on us even under Yama `ptrace_scope=1`
/// (the other workers are the coordinator's descendants).
pub fn allow_fd_access_from(tracer: i32) -> Result<(), SysError> {
    // SAFETY: PR_SET_PTRACER takes a pid as its only argument.
    let rc = unsafe { libc::prctl(libc::PR_SET_PTRACER, tracer as libc::c_ulong, 0, 0, 0) };
    if rc < 0 {
        let error = SysError::last("prctl(PR_SET_PTRACER)");
        // EINVAL: Yama is not built in; nothing to grant.
        if error.errno == nix::errno::Errno::EINVAL {
            return Ok(());
        }
        return Err(error);
    }
    Ok(())
}

/// Resource usage of the calling process (`getrusage(RUSAGE_SELF)`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Usage {
    /// Minor page faults.
    pub minor_faults: u64,
    /// Major page faults.
    pub major_faults: u64,
    /// Voluntary context switches (blocking waits).
    pub voluntary_switches: u64,
    /// Involuntary context switches (preemptions).
    pub involuntary_switches: u64,
    /// Peak resident set size, bytes (`ru_maxrss`). Linux keeps it across `exec`, so for a
    /// process started by `posix_spawn` (`CLONE_VM`, as rtsoak starts workers) it is at least its
    /// parent's peak: a worker reports [`peak_rss_bytes`] instead.
    pub peak_rss_bytes: u64,
    /// Heap allocations so far (see `sys::alloc`).
    pub allocations: u64,
}

/// Peak resident set size of this process image (`VmHWM`, which starts anew at `exec`), bytes.
/// Reads `/proc/self/status`: not for a measuring loop.
pub fn peak_rss_bytes() -> Option<u64> {
    super::memlock::status_field("VmHWM:").map(|kib| kib << 10)
}

/// Read [`Usage`] now.
pub fn usage() -> Usage {
    use nix::sys::resource::{UsageWho, getrusage};
    match getrusage(UsageWho::RUSAGE_SELF) {
        Ok(u) => Usage {
            minor_faults: u.minor_page_faults() as u64,
            major_faults: u.major_page_faults() as u64,
            voluntary_switches: u.voluntary_context_switches() as u64,
            involuntary_switches: u.involuntary_context_switches() as u64,
            peak_rss_bytes: u.max_rss() as u64 * 1024,
            allocations: super::alloc::allocations(),
        },
        Err(_) => Usage {
            allocations: super::alloc::allocations(),
            ..Usage::default()
        },
    }
}

/// Add the CPU we are running on to `seen` if it is not there yet. `seen` must have spare
/// capacity (reserved before the measured loop) for this not to allocate; it only grows when a
/// worker is seen on a new CPU, which a pinned worker never is.
pub fn current_cpu_into(seen: &mut Vec<usize>) {
    let cpu = current_cpu();
    if cpu >= 0 && !seen.contains(&(cpu as usize)) {
        seen.push(cpu as usize);
    }
}

/// Find out by trying whether this process may take `policy`/`priority`: a scratch thread sets
/// it on itself and exits, leaving the caller untouched.
pub fn try_policy(policy: SchedPolicy, priority: u8) -> Result<(), SysError> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| set_policy(policy, priority))
            .join()
            .unwrap_or(Err(SysError::new(
                "sched_setscheduler",
                nix::errno::Errno::EIO,
            )))
    })
}

/// Find out by trying whether this process may lock `bytes` of memory (what each worker's
/// `mlockall` will need), then unlock them again.
pub fn try_lock(bytes: usize) -> Result<(), SysError> {
    use nix::sys::mman::{mlock, munlock};
    let mut buffer = vec![0u8; bytes];
    let start = std::ptr::NonNull::from(buffer.as_mut_slice()).cast();
    // SAFETY: the range is a live allocation we own; mlock/munlock do not change its contents.
    unsafe { mlock(start, bytes) }.map_err(|e| SysError::new("mlock", e))?;
    // SAFETY: as above; the range was locked just now.
    let _ = unsafe { munlock(start, bytes) };
    Ok(())
}

/// The policy a plan asks for, as the kernel takes it.
impl From<rtsoak_record::Policy> for SchedPolicy {
    fn from(policy: rtsoak_record::Policy) -> Self {
        match policy {
            rtsoak_record::Policy::Fifo => SchedPolicy::Fifo,
            rtsoak_record::Policy::Rr => SchedPolicy::RoundRobin,
            rtsoak_record::Policy::Other => SchedPolicy::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lowered_timer_slack_is_put_back_when_its_guard_ends() {
        let before = nix::sys::prctl::get_timerslack().unwrap();
        {
            let _slack = lower_timer_slack_ns(1_000).unwrap();
            assert_eq!(nix::sys::prctl::get_timerslack().unwrap(), 1_000);
        }
        assert_eq!(nix::sys::prctl::get_timerslack().unwrap(), before);
    }
}
