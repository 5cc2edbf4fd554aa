//! Locking a measuring process's memory without ever making it die for it.
//!
//! `mlockall(MCL_CURRENT)` fails with `ENOMEM` unless everything mapped fits under
//! `RLIMIT_MEMLOCK` (or the process has `CAP_IPC_LOCK`). `MCL_FUTURE` is the trap: it succeeds
//! while the process is small, and every later `mmap` or heap growth that would pass the limit
//! then fails, so an ordinary user's default 8 MiB limit turns a later allocation into an abort.
//! So `MCL_FUTURE` is asked for only where the limit cannot be reached (`CAP_IPC_LOCK`, no
//! limit, or room to spare); otherwise only what is mapped when setup ends is locked, and the
//! record says what was left out and why. Callers lock at the end of their setup, when
//! everything the measuring loop touches is mapped (the loops map and allocate nothing).
//!
//! Owns: the decision and the record. Never changes the limit.

use nix::sys::mman::{MlockAllFlags, mlockall};
use nix::sys::resource::{Resource, getrlimit};

/// Room beyond what is mapped that `MCL_FUTURE` needs under a finite limit: the report written
/// after the loop, and a margin. Below it, future mappings are left unlocked.
pub const FUTURE_HEADROOM_BYTES: u64 = 8 << 20;

/// What was locked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryLock {
    /// Everything mapped at the call was locked (`MCL_CURRENT` succeeded).
    pub current: bool,
    /// Later mappings are locked too (`MCL_FUTURE`).
    pub future: bool,
    /// What was not locked and why, with what to do; none when both are locked.
    pub note: Option<String>,
}

/// Lock what is mapped now and, where the limit leaves room, what is mapped later.
pub fn lock_what_fits() -> MemoryLock {
    release_free_heap();
    let limit = memlock_limit_bytes();
    let mapped = mapped_bytes();
    let unlimited = limit.is_none() || has_ipc_lock();
    let room_for_future = unlimited
        || matches!((limit, mapped), (Some(l), Some(m)) if m + FUTURE_HEADROOM_BYTES <= l);
    let raise = |limit: u64| {
        format!(
            "RLIMIT_MEMLOCK is {}, this process maps {}",
            mib(limit),
            mapped.map_or("an unknown amount".to_string(), mib)
        )
    };
    let advice = format!(
        "run as root, or raise RLIMIT_MEMLOCK to {} or more (ulimit -l {}, LimitMEMLOCK=)",
        mib(suggested_limit(mapped)),
        suggested_limit(mapped) >> 10
    );
    let flags = if room_for_future {
        MlockAllFlags::MCL_CURRENT | MlockAllFlags::MCL_FUTURE
    } else {
        MlockAllFlags::MCL_CURRENT
    };
    match mlockall(flags) {
        Ok(()) if room_for_future => MemoryLock {
            current: true,
            future: true,
            note: None,
        },
        Ok(()) => MemoryLock {
            current: true,
            future: false,
            note: Some(format!(
                "only the memory mapped at the end of setup was locked, not later mappings \
                 ({}, too little room for MCL_FUTURE); the measured loop maps nothing, so it \
                 runs locked: {advice}",
                raise(limit.unwrap_or(0))
            )),
        },
        Err(errno) => MemoryLock {
            current: false,
            future: false,
            note: Some(match limit {
                Some(limit) if errno == nix::errno::Errno::ENOMEM => {
                    format!("nothing was locked ({}): {advice}", raise(limit))
                }
                _ => format!("nothing was locked (mlockall failed: {errno}): {advice}"),
            }),
        },
    }
}

/// Give the free memory at the top of the heap back to the kernel. `MCL_CURRENT` locks (and so
/// makes resident) the heap's whole mapping, which after setup ends in free room the allocator
/// kept for later (128 KiB and more): nothing the measuring loop uses.
fn release_free_heap() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim only returns free memory to the kernel; no allocation is affected.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// `RLIMIT_MEMLOCK`'s soft limit in bytes; `None` when unlimited.
pub fn memlock_limit_bytes() -> Option<u64> {
    match getrlimit(Resource::RLIMIT_MEMLOCK) {
        Ok((soft, _)) if soft != libc::RLIM_INFINITY => Some(soft),
        Ok(_) => None,
        // Unknown: assume the common default rather than unlimited.
        Err(_) => Some(8 << 20),
    }
}

/// The process's mapped size (`VmSize`), which `MCL_CURRENT` must fit under the limit.
pub fn mapped_bytes() -> Option<u64> {
    status_field("VmSize:").map(|kib| kib << 10)
}

/// True with `CAP_IPC_LOCK` in the effective set, which lifts the limit.
pub fn has_ipc_lock() -> bool {
    const CAP_IPC_LOCK: u32 = 14;
    status_value("CapEff:")
        .and_then(|hex| u64::from_str_radix(&hex, 16).ok())
        .is_some_and(|caps| caps & (1 << CAP_IPC_LOCK) != 0)
}

/// A `kB` field of `/proc/self/status`, in kB.
pub(crate) fn status_field(name: &str) -> Option<u64> {
    status_value(name)?.parse().ok()
}

/// The first word after `name` on its line of `/proc/self/status`.
fn status_value(name: &str) -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(name))?;
    line.split_whitespace().nth(1).map(str::to_string)
}

/// A limit that lets this process lock everything now and later: mapped plus the headroom,
/// rounded up to a MiB.
fn suggested_limit(mapped: Option<u64>) -> u64 {
    let wanted = mapped.unwrap_or(16 << 20) + FUTURE_HEADROOM_BYTES;
    wanted.div_ceil(1 << 20) << 20
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_suggested_limit_covers_the_mapping_and_the_headroom_in_whole_mib() {
        assert_eq!(suggested_limit(Some(8_600_000)), 17 << 20);
        assert_eq!(suggested_limit(Some(8 << 20)), 16 << 20);
    }

    #[test]
    fn the_mapped_size_is_read_from_proc() {
        let mapped = mapped_bytes().expect("/proc/self/status has VmSize");
        assert!(mapped > 1 << 20, "{mapped}");
    }
}
