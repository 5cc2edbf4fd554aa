//! Checks of the RT CPUs themselves: frequency governor, idle states, SMT siblings, and whether
//! they are a virtual machine's.

use super::inputs::{Inputs, cpus_named};

use rtsoak_record::cpulist;
use rtsoak_record::{CheckId, Finding, Hypervisor, Level};

pub(super) fn findings(inputs: &Inputs) -> Vec<Finding> {
    vec![
        governor(inputs),
        idle_states(inputs),
        smt(inputs),
        virtual_cpus(inputs),
    ]
}

/// Whether the CPUs are a virtual machine's. A warning, not a problem: an RT guest on an RT host
/// with its vCPUs pinned to isolated host CPUs is a real deployment, and its figures are real
/// figures of that stack; but every latency then includes the host's scheduling of the vCPUs
/// (a stall of the host is a stall of the guest that no guest-side trace shows), so they are
/// not this kernel's alone.
fn virtual_cpus(inputs: &Inputs) -> Finding {
    let id = CheckId::CpuVirtual;
    let subject = "virtual CPUs";
    let Some(sign) = inputs.facts.hypervisor else {
        return Finding::ok(
            id,
            subject,
            "none seen: no hypervisor CPU flag, /sys/hypervisor or hypervisor device tree",
        );
    };
    let shown_by = match sign {
        Hypervisor::CpuFlag => "the CPUs carry the hypervisor flag (/proc/cpuinfo)",
        Hypervisor::SysHypervisor => "/sys/hypervisor/type exists (a Xen guest)",
        Hypervisor::QemuVirt => "the device tree is QEMU's virt machine (linux,dummy-virt)",
        Hypervisor::DeviceTreeNode => "the device tree has a hypervisor node",
        Hypervisor::Other => "a sign this build does not name",
    };
    Finding::bad(
        id,
        Level::Warning,
        subject,
        format!(
            "a virtual machine: {shown_by}; the host schedules these CPUs, so every latency \
             includes the host's stalls, which no trace in the guest shows"
        ),
        "measure on bare metal for this kernel's own figures; in a guest, give each vCPU an \
         isolated host CPU under a PREEMPT_RT host kernel, and compare against cyclictest in the \
         same guest",
        Some(
            "a virtual machine: every latency includes the host's scheduling of its CPUs"
                .to_string(),
        ),
    )
}

/// Facts of the RT CPUs, in CPU order.
fn rt_cpu_facts<'a>(inputs: &'a Inputs) -> Vec<&'a rtsoak_record::CpuFacts> {
    let pair = inputs.cpus.pair();
    inputs
        .host
        .cpus
        .iter()
        .filter(|c| pair.contains(&c.cpu))
        .collect()
}

fn governor(inputs: &Inputs) -> Finding {
    let id = CheckId::CpuGovernor;
    let pair = inputs.cpus.pair();
    let facts = rt_cpu_facts(inputs);
    let scaled: Vec<(usize, &str)> = facts
        .iter()
        .filter_map(|c| Some((c.cpu, c.governor.as_deref()?)))
        .collect();
    if scaled.is_empty() {
        return Finding::ok(
            id,
            "frequency",
            format!(
                "no cpufreq on RT {}: the kernel does not scale their frequency (a VM, or a fixed \
                 clock)",
                cpus_named(&pair)
            ),
        );
    }
    let slow: Vec<(usize, &str)> = scaled
        .iter()
        .copied()
        .filter(|(_, governor)| *governor != "performance")
        .collect();
    if slow.is_empty() {
        return Finding::ok(
            id,
            "frequency",
            format!("governor performance on RT {}", cpus_named(&pair)),
        );
    }
    let cpus: Vec<usize> = slow.iter().map(|(cpu, _)| *cpu).collect();
    let listed = slow
        .iter()
        .map(|(cpu, governor)| format!("CPU {cpu} {governor}"))
        .collect::<Vec<_>>()
        .join(", ");
    Finding::bad(
        id,
        Level::Warning,
        "frequency",
        format!("frequency scaling on RT CPUs: {listed}"),
        format!(
            "`for c in {}; do echo performance > /sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor; done` \
             (or `cpupower -c {} frequency-set -g performance`)",
            cpus.iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(" "),
            cpulist::format(&cpus)
        ),
        Some(format!(
            "frequency scaling on the RT CPUs ({listed}): a wakeup may run at a low clock"
        )),
    )
}

fn idle_states(inputs: &Inputs) -> Finding {
    let id = CheckId::CpuIdle;
    let pair = inputs.cpus.pair();
    // State 0 is the shallowest (POLL, WFI): only deeper, enabled states cost exit latency.
    let deep: Vec<String> = inputs
        .facts
        .rt_cpu_idle_states
        .iter()
        .flat_map(|cpu| {
            cpu.states
                .iter()
                .filter(|s| s.index > 0 && !s.disabled)
                .map(move |s| match s.exit_latency_us {
                    Some(us) => format!("CPU {} {} (exit {us} us)", cpu.cpu, s.name),
                    None => format!("CPU {} {}", cpu.cpu, s.name),
                })
        })
        .collect();
    if deep.is_empty() {
        return Finding::ok(
            id,
            "idle states",
            format!("no enabled deep idle state on RT {}", cpus_named(&pair)),
        );
    }
    let first = pair[0];
    Finding::bad(
        id,
        Level::Warning,
        "idle states",
        format!("RT CPUs may enter deep idle states: {}", deep.join(", ")),
        format!(
            "rtsoak holds /dev/cpu_dma_latency at 0 while it runs (profile key \
             `system.hold_cpu_dma_latency`), which keeps CPUs out of them; for your own \
             application do the same, or disable them, e.g. \
             `echo 1 > /sys/devices/system/cpu/cpu{first}/cpuidle/state1/disable`"
        ),
        Some(
            "the RT CPUs have deep idle states, kept off only while /dev/cpu_dma_latency is held"
                .to_string(),
        ),
    )
}

fn smt(inputs: &Inputs) -> Finding {
    let id = CheckId::CpuSmt;
    let pair = inputs.cpus.pair();
    let shared: Vec<String> = rt_cpu_facts(inputs)
        .iter()
        .filter(|c| !c.smt_siblings.is_empty())
        .map(|c| {
            format!(
                "CPU {} shares its core with {}",
                c.cpu,
                cpus_named(&c.smt_siblings)
            )
        })
        .collect();
    if shared.is_empty() {
        return Finding::ok(
            id,
            "SMT",
            format!("RT {} have no SMT siblings", cpus_named(&pair)),
        );
    }
    Finding::bad(
        id,
        Level::Warning,
        "SMT",
        shared.join("; "),
        "keep the siblings idle (isolate them too, and run nothing there), or turn SMT off: \
         `echo off > /sys/devices/system/cpu/smt/control` (at boot: `nosmt`)",
        Some(
            "the RT CPUs share cores with other CPUs (SMT): a sibling's work slows them"
                .to_string(),
        ),
    )
}
