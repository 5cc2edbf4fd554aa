//! Per-CPU facts from `/sys/devices/system/cpu`: the host-wide lists (possible, online,
//! isolated, nohz_full), and for each CPU its online state, frequency governor, idle states and
//! SMT siblings; plus the CPU model from `/proc/cpuinfo` or the device tree, and whether the CPUs
//! are a virtual machine's.
//!
//! Owns: reading and parsing these files. Never judges whether a governor or idle state is
//! suitable for a real-time run.

use super::SysRoot;
use rtsoak_record::cpulist;
use rtsoak_record::{CpuFacts, Hypervisor, IdleState};

const CPU_DIR: &str = "/sys/devices/system/cpu";

/// A CPU list file under `/sys/devices/system/cpu` (`online`, `isolated`, ...). Missing,
/// unreadable or malformed files give an empty list: facts are recorded, never fatal.
pub(crate) fn cpu_list(root: &SysRoot, name: &str) -> Vec<usize> {
    root.read_trimmed(&format!("{CPU_DIR}/{name}"))
        .and_then(|text| cpulist::parse_or_empty(&text).ok())
        .unwrap_or_default()
}

/// The CPUs the kernel could ever bring up (`possible`), or the online ones if that file is
/// missing.
pub(crate) fn possible_cpus(root: &SysRoot, online: &[usize]) -> Vec<usize> {
    if root.exists(&format!("{CPU_DIR}/possible")) {
        cpu_list(root, "possible")
    } else {
        online.to_vec()
    }
}

/// Facts for one CPU. `online` is the host-wide online list: cpu0 often has no `online` file
/// of its own (it cannot be unplugged), so the list is asked first.
pub(crate) fn cpu_facts(root: &SysRoot, cpu: usize, online: &[usize]) -> CpuFacts {
    let dir = format!("{CPU_DIR}/cpu{cpu}");
    let own_online_file = root.read_trimmed(&format!("{dir}/online"));
    CpuFacts {
        cpu,
        online: online.contains(&cpu) || own_online_file.as_deref() == Some("1"),
        governor: root.read_trimmed(&format!("{dir}/cpufreq/scaling_governor")),
        idle_states: idle_states(root, &dir),
        smt_siblings: root
            .read_trimmed(&format!("{dir}/topology/thread_siblings_list"))
            .and_then(|text| cpulist::parse_or_empty(&text).ok())
            .unwrap_or_default()
            .into_iter()
            .filter(|&sibling| sibling != cpu)
            .collect(),
    }
}

/// `cpuidle/stateN/name`, ordered by N numerically (`state10` after `state9`).
fn idle_states(root: &SysRoot, cpu_dir: &str) -> Vec<String> {
    let idle_dir = format!("{cpu_dir}/cpuidle");
    state_numbers(root, &idle_dir)
        .into_iter()
        .filter_map(|n| root.read_trimmed(&format!("{idle_dir}/state{n}/name")))
        .collect()
}

/// The N of every `stateN` directory, sorted numerically.
fn state_numbers(root: &SysRoot, idle_dir: &str) -> Vec<usize> {
    let mut states: Vec<usize> = root
        .list_dir(idle_dir)
        .iter()
        .filter_map(|entry| entry.strip_prefix("state")?.parse().ok())
        .collect();
    states.sort_unstable();
    states
}

/// Every cpuidle state of `cpu` with its exit latency and whether it is disabled, in state
/// order; empty without cpuidle.
pub(crate) fn idle_state_details(root: &SysRoot, cpu: usize) -> Vec<IdleState> {
    let idle_dir = format!("{CPU_DIR}/cpu{cpu}/cpuidle");
    state_numbers(root, &idle_dir)
        .into_iter()
        .map(|index| {
            let dir = format!("{idle_dir}/state{index}");
            IdleState {
                index,
                name: root
                    .read_trimmed(&format!("{dir}/name"))
                    .unwrap_or_else(|| format!("state{index}")),
                exit_latency_us: root.parsed(&format!("{dir}/latency")),
                disabled: root.read_trimmed(&format!("{dir}/disable")).as_deref() == Some("1"),
            }
        })
        .collect()
}

/// Keys in `/proc/cpuinfo` that name the CPU, most descriptive first: x86 has `model name`;
/// arm64 has only `CPU part` (a hex part number), older ARM kernels `Hardware`.
const CPUINFO_MODEL_KEYS: [&str; 3] = ["model name", "CPU part", "Hardware"];

/// The CPU model: the first of [`CPUINFO_MODEL_KEYS`] found in `/proc/cpuinfo`, else the
/// device-tree board model (`/proc/device-tree/model`, NUL-terminated).
pub(crate) fn cpu_model(root: &SysRoot) -> Option<String> {
    let cpuinfo = root.read("/proc/cpuinfo").unwrap_or_default();
    CPUINFO_MODEL_KEYS
        .iter()
        .find_map(|key| cpuinfo_value(&cpuinfo, key))
        .or_else(|| root.read_trimmed("/proc/device-tree/model"))
        .filter(|model| !model.is_empty())
}

/// What shows the CPUs are a virtual machine's, if anything does: the `hypervisor` CPU flag
/// (x86), `/sys/hypervisor` (Xen), or a device tree a hypervisor made (arm64; `compatible` is
/// the device tree's list, as the board facts hold it). A hypervisor that hides itself from all
/// of these is not seen.
pub(crate) fn hypervisor(root: &SysRoot, compatible: &[String]) -> Option<Hypervisor> {
    let cpuinfo = root.read("/proc/cpuinfo").unwrap_or_default();
    let flagged = cpuinfo_value(&cpuinfo, "flags")
        .is_some_and(|flags| flags.split_whitespace().any(|flag| flag == "hypervisor"));
    if flagged {
        Some(Hypervisor::CpuFlag)
    } else if root.exists("/sys/hypervisor/type") {
        Some(Hypervisor::SysHypervisor)
    } else if compatible.iter().any(|c| c == "linux,dummy-virt") {
        Some(Hypervisor::QemuVirt)
    } else if root.exists("/proc/device-tree/hypervisor") {
        Some(Hypervisor::DeviceTreeNode)
    } else {
        None
    }
}

/// The value of the first `key : value` line in `/proc/cpuinfo` text.
fn cpuinfo_value(cpuinfo: &str, key: &str) -> Option<String> {
    cpuinfo.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        (name.trim() == key).then(|| rtsoak_record::text::visible(value.trim()).into_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpuinfo_values_are_found_whatever_the_tab_padding() {
        let cpuinfo = "processor\t: 0\nmodel name\t: AMD EPYC\nCPU part\t: 0xd42\n";
        assert_eq!(
            cpuinfo_value(cpuinfo, "model name"),
            Some("AMD EPYC".into())
        );
        assert_eq!(cpuinfo_value(cpuinfo, "CPU part"), Some("0xd42".into()));
        assert_eq!(cpuinfo_value(cpuinfo, "Hardware"), None);
    }
}
