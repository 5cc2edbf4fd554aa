//! Per-CPU time from `/proc/stat`, to show where the load of a run actually went: the noise
//! CPUs busy, the RT CPUs running little beyond the RT pair; and, for a kernel campaign, whether
//! a fresh boot has gone idle enough to measure.

use std::collections::BTreeMap;
use std::path::Path;

/// Where the kernel keeps the counts.
pub const PROC_STAT: &str = "/proc/stat";

/// Cumulative time of one CPU, in the kernel's ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTicks {
    /// Ticks spent doing anything (user, nice, system, irq, softirq, steal).
    pub busy: u64,
    /// All ticks, idle and iowait included.
    pub total: u64,
}

/// Read every `cpuN` line of `/proc/stat`. Missing or unreadable: empty.
pub fn read(proc_stat: impl AsRef<Path>) -> BTreeMap<usize, CpuTicks> {
    let Ok(text) = std::fs::read_to_string(proc_stat) else {
        return BTreeMap::new();
    };
    text.lines()
        .filter_map(|line| {
            let rest = line.strip_prefix("cpu")?;
            let (number, fields) = rest.split_once(' ')?;
            let cpu: usize = number.parse().ok()?;
            let values: Vec<u64> = fields
                .split_whitespace()
                .filter_map(|v| v.parse().ok())
                .collect();
            // user nice system idle iowait irq softirq steal (guest is already in user)
            let get = |i: usize| values.get(i).copied().unwrap_or(0);
            let idle = get(3) + get(4);
            let busy = get(0) + get(1) + get(2) + get(5) + get(6) + get(7);
            Some((
                cpu,
                CpuTicks {
                    busy,
                    total: busy + idle,
                },
            ))
        })
        .collect()
}

/// Busy share of each CPU between two readings, percent (CPUs with no ticks in between are
/// left out).
pub(crate) fn busy_percent(
    before: &BTreeMap<usize, CpuTicks>,
    after: &BTreeMap<usize, CpuTicks>,
) -> BTreeMap<usize, f64> {
    after
        .iter()
        .filter_map(|(cpu, a)| {
            let b = before.get(cpu)?;
            let total = a.total.checked_sub(b.total)?;
            let busy = a.busy.checked_sub(b.busy)?;
            (total > 0).then(|| (*cpu, (1000.0 * busy as f64 / total as f64).round() / 10.0))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_share_counts_everything_but_idle_and_iowait() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("stat");
        let write = |text: &str| std::fs::write(&root, text).unwrap();
        write(
            "cpu  1 1 1 1 1 1 1 1 0 0\ncpu0 10 0 10 80 0 0 0 0 0 0\ncpu1 0 0 0 100 0 0 0 0 0 0\nintr 5\n",
        );
        let before = read(&root);
        write(
            "cpu  1 1 1 1 1 1 1 1 0 0\ncpu0 60 0 20 100 10 5 5 0 0 0\ncpu1 1 0 0 199 0 0 0 0 0 0\n",
        );
        let after = read(&root);
        let busy = busy_percent(&before, &after);
        // cpu0: busy 50+10+5+5 = 70 of 70+30 = 100 ticks.
        assert_eq!(busy[&0], 70.0);
        assert_eq!(busy[&1], 1.0);
        assert_eq!(busy.len(), 2, "the aggregate `cpu` line is not a CPU");
    }
}
