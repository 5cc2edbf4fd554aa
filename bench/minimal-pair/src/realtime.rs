//! Becoming real-time and reading the clock: the few system calls every RT test makes, each
//! failure named with what to do.

use std::fs::File;
use std::io::Write;

/// `CLOCK_MONOTONIC` now, ns (the vDSO: no system call).
#[inline]
pub(crate) fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call's duration.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleep until `deadline_ns` of `CLOCK_MONOTONIC` (absolute, so lateness never accumulates).
#[inline]
pub(crate) fn sleep_until(deadline_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (deadline_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: `ts` is a valid timespec; a null remainder is allowed with TIMER_ABSTIME.
    // EINTR only wakes early, which the caller sees as a small timer sample and nothing else.
    unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    };
}

/// Lock every page of the process, now and later (each thread's stack included).
pub(crate) fn lock_memory() -> Result<(), String> {
    // SAFETY: plain system call with constant flags.
    if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } != 0 {
        return Err(format!(
            "mlockall: {}: run as root, or raise RLIMIT_MEMLOCK (ulimit -l unlimited)",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// Pin the calling thread to `cpu` and make it SCHED_FIFO at `priority`.
pub(crate) fn become_realtime(cpu: usize, priority: i32) -> Result<(), String> {
    // SAFETY: `set` is a zeroed cpu_set_t, which CPU_SET fills in bounds (cpu < 4096 is
    // checked by the caller's parser, under CPU_SETSIZE's 1024 only where asked for).
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(format!("CPU {cpu} is beyond CPU_SETSIZE"));
    }
    // SAFETY: `cpu` is below CPU_SETSIZE (checked above).
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: `set` is a valid cpu_set_t of the size passed; pid 0 is the calling thread.
    if unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) } != 0 {
        return Err(format!(
            "pinning to CPU {cpu}: {}: is the CPU online?",
            std::io::Error::last_os_error()
        ));
    }
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: `param` is valid for the call; pid 0 is the calling thread.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } != 0 {
        return Err(format!(
            "SCHED_FIFO {priority}: {}: run as root, or raise RLIMIT_RTPRIO",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// Hold `/dev/cpu_dma_latency` at 0 while the returned file is open (no deep idle states, as
/// rtsoak and cyclictest do by default); `None` where the device cannot be opened.
pub(crate) fn hold_cpu_dma_latency() -> Option<File> {
    let mut file = File::options()
        .write(true)
        .open("/dev/cpu_dma_latency")
        .ok()?;
    file.write_all(&0i32.to_ne_bytes()).ok()?;
    Some(file)
}
