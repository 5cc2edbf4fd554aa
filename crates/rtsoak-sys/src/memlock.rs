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
//! When even that does not fit (an RT worker maps a little over 8 MiB, most of it code, and an
//! ordinary user's limit is 8 MiB), the mappings are locked one by one in the order the loop
//! needs them ([`rank`]) until the limit is reached: its stack, the shared memory, the heap,
//! rtsoak's own code, the C library; what is left out (usually `libm`, which the loop never
//! calls) is named in the record.
//!
//! Owns: the decision and the record. Never changes the limit.

use std::ptr::NonNull;

use nix::errno::Errno;
use nix::sys::mman::{MlockAllFlags, mlock, mlockall};
use nix::sys::resource::{Resource, getrlimit};

/// Room beyond what is mapped that `MCL_FUTURE` needs under a finite limit: the report written
/// after the loop, and a margin. Below it, future mappings are left unlocked.
pub(crate) const FUTURE_HEADROOM_BYTES: u64 = 8 << 20;

/// What was locked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryLock {
    /// Everything mapped at the call was locked (`MCL_CURRENT` succeeded).
    pub current: bool,
    /// Later mappings are locked too (`MCL_FUTURE`).
    pub future: bool,
    /// Bytes locked once done (`VmLck`): all that is mapped, part of it, or 0.
    pub locked_bytes: Option<u64>,
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
            locked_bytes: locked_bytes(),
            note: None,
        },
        Ok(()) => MemoryLock {
            current: true,
            future: false,
            locked_bytes: locked_bytes(),
            note: Some(format!(
                "only the memory mapped at the end of setup was locked, not later mappings \
                 ({}, too little room for MCL_FUTURE); the measured loop maps nothing, so it \
                 runs locked: {advice}",
                limit_and_mapped(limit.unwrap_or(0), mapped)
            )),
        },
        Err(Errno::ENOMEM) if let Some(limit) = limit => lock_one_by_one(limit, mapped, &advice),
        Err(errno) => MemoryLock {
            current: false,
            future: false,
            locked_bytes: locked_bytes(),
            note: Some(format!(
                "nothing was locked (mlockall failed: {errno}): {advice}"
            )),
        },
    }
}

/// `mlockall(MCL_CURRENT)` found more mapped than `limit` lets this process lock: lock the
/// mappings one by one ([`lock_in_order`]) and say what was locked and what was left out.
fn lock_one_by_one(limit: u64, mapped: Option<u64>, advice: &str) -> MemoryLock {
    let left_out = lock_in_order(limit);
    let locked = locked_bytes();
    let all = left_out.is_empty() && locked.is_some_and(|bytes| bytes > 0);
    let note = match (locked, left_out.is_empty()) {
        // mlockall counts guard pages and the kernel's own mappings too.
        (Some(1..), true) => format!(
            "everything mapped was locked mapping by mapping ({}), but not later \
             mappings (RLIMIT_MEMLOCK is {}); the measured loop maps nothing, so it \
             runs locked: {advice}",
            mib(locked.unwrap_or(0)),
            mib(limit)
        ),
        (Some(1..), false) => format!(
            "only part was locked: {} of {}, mapping by mapping (stack, shared memory, \
             heap, rtsoak's code, the C library first) until RLIMIT_MEMLOCK ({}) was \
             reached; left unlocked: {}: {advice}",
            mib(locked.unwrap_or(0)),
            mapped.map_or("an unknown amount".to_string(), mib),
            mib(limit),
            left_out.join(", ")
        ),
        _ => format!(
            "nothing was locked ({}): {advice}",
            limit_and_mapped(limit, mapped)
        ),
    };
    MemoryLock {
        current: all,
        future: false,
        locked_bytes: locked,
        note: Some(note),
    }
}

/// The limit against what this process maps, for a note that says why not all was locked.
fn limit_and_mapped(limit: u64, mapped: Option<u64>) -> String {
    format!(
        "RLIMIT_MEMLOCK is {}, this process maps {}",
        mib(limit),
        mapped.map_or("an unknown amount".to_string(), mib)
    )
}

/// A mapping of this process, as a line of `/proc/self/maps` gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Mapping {
    start: usize,
    end: usize,
    /// No access at all (`---p`): a guard page, never touched, which `mlock` refuses.
    guard: bool,
    /// The path or pseudo-name (`[stack]`, `/memfd:rtsoak-region (deleted)`); empty for
    /// anonymous memory.
    name: String,
}

impl Mapping {
    fn bytes(&self) -> u64 {
        (self.end - self.start) as u64
    }

    /// The name without the ` (deleted)` the kernel appends to a file that is gone.
    fn path(&self) -> &str {
        self.name.strip_suffix(" (deleted)").unwrap_or(&self.name)
    }
}

/// Parse `/proc/self/maps`; lines that do not parse are left out.
fn parse_maps(text: &str) -> Vec<Mapping> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.splitn(6, char::is_whitespace);
            let (start, end) = fields.next()?.split_once('-')?;
            let guard = fields.next()?.starts_with("---");
            let name = fields.nth(3).unwrap_or("").trim().to_string();
            Some(Mapping {
                start: usize::from_str_radix(start, 16).ok()?,
                end: usize::from_str_radix(end, 16).ok()?,
                guard,
                name,
            })
        })
        .collect()
}

/// Which mappings matter most to a measuring loop, lowest first; `None` for guard pages and
/// for what the kernel provides and never pages out (vDSO, vvar, io_uring rings), which are
/// left alone.
fn rank(mapping: &Mapping, exe: &str) -> Option<u8> {
    if mapping.guard {
        return None;
    }
    let path = mapping.path();
    Some(match path {
        "[stack]" => 0,
        _ if path.starts_with("/memfd:") => 1,
        "[heap]" | "" => 2,
        _ if path == exe => 3,
        _ if path.contains("/libc.so") || path.contains("/ld-linux") => 4,
        _ if path.starts_with('[') || path.starts_with("anon_inode:") => return None,
        _ => 5,
    })
}

/// The mappings to lock within `budget_bytes`, in [`rank`] order (a mapping that does not fit
/// is passed over, a smaller later one may still fit), and those left out.
fn choose<'m>(
    mappings: &'m [Mapping],
    exe: &str,
    budget_bytes: u64,
) -> (Vec<&'m Mapping>, Vec<&'m Mapping>) {
    let mut ranked: Vec<(u8, &Mapping)> = mappings
        .iter()
        .filter_map(|m| Some((rank(m, exe)?, m)))
        .collect();
    ranked.sort_by_key(|(rank, m)| (*rank, m.start));
    let mut left = budget_bytes;
    let (mut chosen, mut left_out) = (Vec::new(), Vec::new());
    for (_, mapping) in ranked {
        if mapping.bytes() <= left {
            left -= mapping.bytes();
            chosen.push(mapping);
        } else {
            left_out.push(mapping);
        }
    }
    (chosen, left_out)
}

/// Lock this process's mappings one by one in [`rank`] order while they fit under `limit`.
/// Returns what was left unlocked, one entry per file (`libm.so.6 0.8 MiB`).
fn lock_in_order(limit: u64) -> Vec<String> {
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return vec!["everything (/proc/self/maps unreadable)".to_string()];
    };
    let exe = std::fs::read_link("/proc/self/exe")
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let exe = exe.strip_suffix(" (deleted)").unwrap_or(&exe);
    let mappings = parse_maps(&maps);
    let (chosen, mut left_out) = choose(&mappings, exe, limit);
    for mapping in chosen {
        let Some(start) = NonNull::new(mapping.start as *mut libc::c_void) else {
            continue;
        };
        // SAFETY: mlock only pins pages of a range this process has mapped (read from its own
        // /proc/self/maps just now, with nothing unmapped since); it changes no memory.
        if unsafe { mlock(start, mapping.bytes() as usize) }.is_err() {
            left_out.push(mapping);
        }
    }
    summarize(&left_out)
}

/// One entry per file name (anonymous memory as `anonymous`), largest first.
fn summarize(left_out: &[&Mapping]) -> Vec<String> {
    let mut by_name: Vec<(String, u64)> = Vec::new();
    for mapping in left_out {
        let path = mapping.path();
        let name = match path.rsplit_once('/') {
            Some((_, file)) => file,
            None if path.is_empty() => "anonymous",
            None => path,
        };
        match by_name.iter_mut().find(|(n, _)| n == name) {
            Some((_, bytes)) => *bytes += mapping.bytes(),
            None => by_name.push((name.to_string(), mapping.bytes())),
        }
    }
    by_name.sort_by_key(|(_, bytes)| std::cmp::Reverse(*bytes));
    by_name
        .into_iter()
        .map(|(name, bytes)| match bytes {
            ..0x10_0000 => format!("{name} {} KiB", bytes >> 10),
            _ => format!("{name} {}", mib(bytes)),
        })
        .collect()
}

/// What this process has locked (`VmLck`), in bytes.
fn locked_bytes() -> Option<u64> {
    status_field("VmLck:").map(|kib| kib << 10)
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
pub(crate) fn mapped_bytes() -> Option<u64> {
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

    const MAPS: &str = "\
55d0c5a79000-55d0c5b1a000 r--p 00000000 fe:01 1234 /usr/bin/rtsoak
55d0c5b1a000-55d0c5e14000 r-xp 000a1000 fe:01 1234 /usr/bin/rtsoak
55d0ee989000-55d0eea22000 rw-p 00000000 00:00 0 [heap]
7f966f794000-7f966f7d6000 rw-s 00000000 00:01 77 /memfd:rtsoak-region (deleted)
7f966f7d6000-7f966f7e9000 rw-p 00000000 00:00 0
7f966f7e9000-7f966f7ea000 ---p 00000000 00:00 0
7f966f80f000-7f966f965000 r-xp 00028000 fe:01 99 /usr/lib/x86_64-linux-gnu/libc.so.6
7f966f9db000-7f966fa4f000 r-xp 00010000 fe:01 98 /usr/lib/x86_64-linux-gnu/libm.so.6
7f966fa60000-7f966fa61000 rw-s 00000000 00:0f 5 anon_inode:[io_uring]
7ffe4da20000-7ffe4da66000 rw-p 00000000 00:00 0 [stack]
7ffe4dbf0000-7ffe4dbf4000 r--p 00000000 00:00 0 [vvar]
7ffe4dbf4000-7ffe4dbf6000 r-xp 00000000 00:00 0 [vdso]
";

    #[test]
    fn maps_lines_parse_with_and_without_a_name() {
        let maps = parse_maps(MAPS);
        assert_eq!(maps.len(), 12);
        assert_eq!(maps[3].path(), "/memfd:rtsoak-region");
        assert_eq!(maps[4].name, "");
        assert!(!maps[4].guard && maps[5].guard);
        assert_eq!(maps[9].bytes(), 0x46000);
    }

    #[test]
    fn the_loops_memory_is_locked_first_and_what_does_not_fit_is_named() {
        let maps = parse_maps(MAPS);
        let everything: u64 = maps
            .iter()
            .filter_map(|m| rank(m, "/usr/bin/rtsoak").map(|_| m.bytes()))
            .sum();
        let libm = 0x74000;
        let (chosen, left_out) = choose(&maps, "/usr/bin/rtsoak", everything - libm);
        let order: Vec<&str> = chosen.iter().map(|m| m.path()).collect();
        assert_eq!(
            order,
            [
                "[stack]",
                "/memfd:rtsoak-region",
                "[heap]",
                "",
                "/usr/bin/rtsoak",
                "/usr/bin/rtsoak",
                "/usr/lib/x86_64-linux-gnu/libc.so.6",
            ],
            "stack, shared memory, heap and anonymous memory, rtsoak, libc; never a guard page, \
             the vDSO or a ring"
        );
        assert_eq!(summarize(&left_out), ["libm.so.6 464 KiB"]);
    }

    #[test]
    fn a_mapping_too_big_for_what_is_left_is_passed_over_for_smaller_ones() {
        let maps = parse_maps(MAPS);
        // Room for the stack (280 KiB) and the region (264 KiB), not the 600 KiB heap, but the
        // 76 KiB of anonymous memory after it.
        let (chosen, left_out) = choose(&maps, "/usr/bin/rtsoak", 0x46000 + 0x42000 + 0x13000);
        assert_eq!(chosen.len(), 3);
        assert_eq!(chosen[2].name, "");
        assert!(left_out.iter().any(|m| m.name == "[heap]"));
    }

    #[test]
    fn the_mapped_size_is_read_from_proc() {
        let mapped = mapped_bytes().expect("/proc/self/status has VmSize");
        assert!(mapped > 1 << 20, "{mapped}");
    }
}
