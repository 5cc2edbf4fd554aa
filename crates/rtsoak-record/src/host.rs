//! What a result records about the host it ran on: the kernel, its boot isolation and each CPU.
//! `sysinfo` reads these from `/proc` and `/sys`; results, checks and exports read them here.

use serde::{Deserialize, Serialize};

/// Everything recorded about the host in a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostFacts {
    /// `/proc/sys/kernel/hostname`
    pub hostname: Option<String>,
    /// `/proc/sys/kernel/osrelease`, e.g. `6.12.117+deb13-rt-arm64`
    pub kernel_release: Option<String>,
    /// `/proc/sys/kernel/version`, e.g. `#1 SMP PREEMPT_RT Debian 6.12.117-1`
    pub kernel_version: Option<String>,
    /// `std::env::consts::ARCH` of this build.
    pub arch: String,
    /// `/sys/kernel/realtime` is `1`, or the version string contains `PREEMPT_RT`.
    pub preempt_rt: bool,
    /// Which of the two said so, or that neither did.
    pub preempt_rt_source: String,
    /// `/proc/cmdline`
    pub cmdline: Option<String>,
    /// Isolation parameters from the command line, raw.
    pub boot_isolation: BootIsolation,
    /// `/proc/cpuinfo` model, or the device-tree board model.
    pub cpu_model: Option<String>,
    /// One per CPU in `/sys/devices/system/cpu/possible` (or `online` if that is missing).
    pub cpus: Vec<CpuFacts>,
    /// `/sys/devices/system/cpu/online`
    pub online: Vec<usize>,
    /// `/sys/devices/system/cpu/isolated` (empty file: none)
    pub isolated: Vec<usize>,
    /// `/sys/devices/system/cpu/nohz_full` (`(null)` or missing: none)
    pub nohz_full: Vec<usize>,
    /// `/proc/sys/kernel/sched_rt_runtime_us`; -1 means RT throttling is off.
    pub sched_rt_runtime_us: Option<i64>,
    /// `/proc/sys/kernel/sched_rt_period_us`
    pub sched_rt_period_us: Option<i64>,
    /// `/sys/devices/system/clocksource/clocksource0/current_clocksource`
    pub clocksource: Option<String>,
    /// `/proc/sys/kernel/io_uring_disabled` (absent before Linux 6.6)
    pub io_uring_disabled: Option<u32>,
    /// What names the board: the device tree's model and compatible strings, the L4T release
    /// (absent where none of them exists, and in older results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub board: Option<crate::Board>,
}

impl HostFacts {
    /// CPUs online now, sorted.
    pub fn online_cpus(&self) -> Vec<usize> {
        self.online.clone()
    }

    /// CPUs the kernel keeps out of the scheduler's load balancing
    /// (`/sys/devices/system/cpu/isolated`), sorted.
    pub fn isolated_cpus(&self) -> Vec<usize> {
        self.isolated.clone()
    }
}

/// What is recorded about one CPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuFacts {
    pub cpu: usize,
    pub online: bool,
    /// `cpufreq/scaling_governor`; `None` where there is no cpufreq (VMs, some boards).
    pub governor: Option<String>,
    /// `cpuidle/stateN/name` in state order.
    pub idle_states: Vec<String>,
    /// Other CPUs sharing this CPU's core, from `topology/thread_siblings_list`.
    pub smt_siblings: Vec<usize>,
}

/// CPU isolation requested on the boot command line, as written there.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BootIsolation {
    pub isolcpus: Option<String>,
    pub nohz_full: Option<String>,
    pub rcu_nocbs: Option<String>,
    pub irqaffinity: Option<String>,
}
