//! The system check as a result records it: the CPUs judged, the privileges found by trying,
//! the facts read and every finding. `preflight` makes one; results, caveats and the probe report
//! read it here.

use serde::{Deserialize, Serialize};

use super::{BoardCheck, CheckId, Finding, Level, Privileges};

/// The whole check, as `rtsoak probe --json` prints it and every result records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SystemCheck {
    /// The CPUs judged.
    pub cpus: RtCpus,
    /// What trying found this process may do.
    pub privileges: Privileges,
    /// What was read.
    pub facts: CheckFacts,
    /// Every verdict, grouped by area (kernel, isolation, CPUs, access).
    pub findings: Vec<Finding>,
    /// "What a result measured here is worth": one line per distinct non-ok condition,
    /// problems first. Empty on a properly set up RT machine.
    pub worth: Vec<String>,
    /// The board check, on a Jetson: which kernel boots next, the default entry's isolation,
    /// device interrupts on the RT CPUs. Absent elsewhere and in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub board: Option<BoardCheck>,
}

impl SystemCheck {
    /// The most serious level among the findings, the board's included.
    pub fn verdict(&self) -> Level {
        let board = self.board.iter().flat_map(|b| &b.findings);
        self.findings
            .iter()
            .map(|f| f.level)
            .chain(board.map(|f| f.level()))
            .max()
            .unwrap_or(Level::Ok)
    }

    /// Findings with this id.
    pub fn by_id<'a>(&'a self, id: &CheckId) -> impl Iterator<Item = &'a Finding> + 'a {
        let id = id.clone();
        self.findings.iter().filter(move |f| f.id == id)
    }
}

/// The CPUs a run uses (or would use), as the check judges them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RtCpus {
    /// CPU of the RT publisher.
    pub publisher: usize,
    /// CPU of the RT subscriber.
    pub subscriber: usize,
    /// CPUs of noise and the coordinator.
    pub noise: Vec<usize>,
}

impl RtCpus {
    /// Publisher and subscriber CPU, sorted.
    pub fn pair(&self) -> Vec<usize> {
        let mut pair = vec![self.publisher, self.subscriber];
        pair.sort_unstable();
        pair.dedup();
        pair
    }
}

/// What the check read beyond the host facts a result already records, kept so a result can be
/// judged again later.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CheckFacts {
    /// `/proc/sys/kernel/timer_migration`.
    pub timer_migration: Option<u32>,
    /// `/proc/sys/vm/compact_unevictable_allowed`: 1 lets memory compaction move locked pages;
    /// `None` where the kernel has no such file, and in results written before it was read.
    #[serde(default)]
    pub compact_unevictable_allowed: Option<u32>,
    /// What shows the CPUs are a virtual machine's; `None` where nothing does (bare metal, as far
    /// as the kernel tells), and in results written before it was read.
    #[serde(default)]
    pub hypervisor: Option<Hypervisor>,
    /// Pids of running `irqbalance` processes.
    pub irqbalance_pids: Vec<i32>,
    /// Numbered interrupts whose affinity includes an RT CPU.
    pub irqs_on_rt_cpus: Vec<Irq>,
    /// Threads (other than rtsoak's own) allowed on an RT CPU.
    pub tasks_on_rt_cpus: Vec<Task>,
    /// cpuidle states of the RT CPUs.
    pub rt_cpu_idle_states: Vec<CpuIdle>,
}

/// What shows that the CPUs are a virtual machine's: the host schedules them, so its stalls
/// are in every latency the guest measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Hypervisor {
    /// The `hypervisor` flag in `/proc/cpuinfo` (x86: CPUID leaf 1, ECX bit 31, which KVM,
    /// Hyper-V, VMware, Xen HVM and Firecracker set).
    CpuFlag,
    /// `/sys/hypervisor/type` exists (a Xen guest).
    SysHypervisor,
    /// The device tree is QEMU's arm64 `virt` machine's (`linux,dummy-virt`).
    QemuVirt,
    /// The device tree has a `hypervisor` node (a Xen guest on arm64).
    DeviceTreeNode,
    /// A sign this build does not know (a result from a newer build).
    #[serde(other)]
    Other,
}

/// One CPU's idle states.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuIdle {
    /// The CPU.
    pub cpu: usize,
    /// Its cpuidle states in order.
    pub states: Vec<IdleState>,
}

/// One cpuidle state of one CPU, as the system checks need it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdleState {
    /// N of `cpuidle/stateN`; 0 is the shallowest (`POLL` on x86, `WFI` on arm64).
    pub index: usize,
    /// `name`
    pub name: String,
    /// `latency`: exit latency in microseconds, if the kernel states it.
    pub exit_latency_us: Option<u64>,
    /// `disable` is `1`: the state was turned off by hand.
    pub disabled: bool,
}

/// One numbered interrupt whose affinity was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Irq {
    /// Its number, the `N` of `/proc/irq/N`.
    pub irq: u32,
    /// The handlers named in `/proc/interrupts` (`eth0`, `nvme0q1`), if listed there.
    pub name: Option<String>,
    /// `smp_affinity_list`: the CPUs it may be delivered to.
    pub affinity: Vec<usize>,
}

/// One thread whose allowed CPUs include one of the CPUs asked about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Task {
    /// Process id (thread group).
    pub pid: i32,
    /// Thread id (equal to `pid` for the main thread).
    pub tid: i32,
    /// `comm`, from `stat`.
    pub comm: String,
    /// A kernel thread (`PF_KTHREAD`).
    pub kernel_thread: bool,
    /// `Cpus_allowed_list`.
    pub allowed: Vec<usize>,
}

impl Task {
    /// Bound to exactly the CPUs it is allowed on and nothing else, like `ksoftirqd/5`: a per-CPU
    /// kernel thread that the kernel needs there and nobody can move.
    pub fn is_per_cpu_kernel_thread(&self) -> bool {
        self.kernel_thread && self.allowed.len() == 1
    }
}
