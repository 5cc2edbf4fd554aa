//! The board check, on a Jetson: does the bootloader's default entry boot the running kernel
//! (and is that kernel PREEMPT_RT)? Does the default entry's command line isolate the RT CPUs,
//! so the next boot does too? Which device interrupts (GPU, host1x, Ethernet, CAN, ...) may
//! land on the RT CPUs? The usual mistakes there: an update that made the non-RT `primary`
//! entry the default again, isolation typed on a running board but never written into
//! `extlinux.conf`, and the GPU's interrupts left on every CPU.
//!
//! Owns: judging the boot menu, the command line and the interrupts. Findings are data
//! ([`BoardFinding`]): `export::board` words them. Never edits `extlinux.conf` or an affinity.

use super::inputs::Inputs;

use crate::sysinfo::SysRoot;
use crate::sysinfo::extlinux::{EXTLINUX_CONF, boot_config};
use crate::sysinfo::irqs::{delivered_on, handler_dirs};
use crate::sysinfo::kernel::cmdline_value;
use rtsoak_record::cpulist;
use rtsoak_record::{
    BoardCheck, BoardFinding, BootConfig, BootEntry, BootParameter, DeviceClass, DeviceIrq,
};

/// Per-CPU interrupts every CPU has its own of (timers, performance counters): nothing to move.
const PER_CPU_HANDLERS: [&str; 4] = ["arch_timer", "arm-pmu", "arm_pmu", "arch_mem_timer"];

/// The board check under `root`, or `None` where the board is not a Jetson.
pub(super) fn check(root: &SysRoot, inputs: &Inputs) -> Option<BoardCheck> {
    if !inputs.host.board.as_ref().is_some_and(|b| b.is_jetson()) {
        return None;
    }
    let boot = boot_config(root);
    let mut findings = boot_findings(boot.as_ref(), inputs);
    if let Some(default) = boot.as_ref().and_then(BootConfig::default_entry) {
        findings.push(isolation(default, inputs));
    }
    let interrupts = root.read("/proc/interrupts").unwrap_or_default();
    findings.extend(device_irqs(root, &interrupts, inputs));
    Some(BoardCheck { boot, findings })
}

/// Which entry boots by default, whether the running boot is that one, and whether its kernel
/// is PREEMPT_RT.
fn boot_findings(boot: Option<&BootConfig>, inputs: &Inputs) -> Vec<BoardFinding> {
    let Some(boot) = boot else {
        return vec![BoardFinding::NoBootConfig {
            path: EXTLINUX_CONF.to_string(),
        }];
    };
    let Some(default) = boot.default_entry() else {
        return vec![BoardFinding::NoDefaultEntry {
            default_label: boot.default_label.clone(),
        }];
    };
    let host = inputs.host;
    let running = running_entry(boot, inputs);
    let mut findings = vec![if running.is_some_and(|e| e.label == default.label) {
        BoardFinding::BootsDefault {
            label: default.label.clone(),
        }
    } else {
        BoardFinding::BootsOtherThanDefault {
            default_label: default.label.clone(),
            running_label: running.map(|e| e.label.clone()),
            running_release: host.kernel_release.clone(),
            running_preempt_rt: host.preempt_rt,
        }
    }];
    if let (Some(release), Some(rt)) = (&default.kernel_release, default.kernel_preempt_rt) {
        let label = default.label.clone();
        let release = release.clone();
        findings.push(if rt {
            BoardFinding::DefaultKernelRt { label, release }
        } else {
            BoardFinding::DefaultKernelNotRt {
                label,
                release,
                rt_label: boot
                    .entries
                    .iter()
                    .find(|e| e.kernel_preempt_rt == Some(true))
                    .map(|e| e.label.clone()),
                running_preempt_rt: host.preempt_rt,
            }
        });
    }
    findings
}

/// The entry the running boot came from: its image's release is the running kernel's (where
/// the image could be read) and every word of its `APPEND` is on the running command line
/// (`${cbootargs}` and other bootloader variables aside). The default entry wins a tie.
fn running_entry<'a>(boot: &'a BootConfig, inputs: &Inputs) -> Option<&'a BootEntry> {
    let cmdline: Vec<&str> = inputs
        .host
        .cmdline
        .as_deref()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let running_release = inputs.host.kernel_release.as_deref();
    let matches = |entry: &&BootEntry| {
        let release = entry
            .kernel_release
            .as_deref()
            .is_none_or(|r| Some(r) == running_release);
        let append = entry
            .append
            .as_deref()
            .unwrap_or("")
            .split_whitespace()
            .filter(|word| !word.contains("${"))
            .all(|word| cmdline.contains(&word));
        release && append
    };
    let candidates: Vec<&BootEntry> = boot.entries.iter().filter(matches).collect();
    candidates
        .iter()
        .find(|e| Some(e.label.as_str()) == boot.default_label.as_deref())
        .or(candidates.first())
        .copied()
}

/// Whether the default entry's command line puts both RT CPUs in `isolcpus=`, `nohz_full=` and
/// `rcu_nocbs=` (a `nohz_full` CPU has its RCU callbacks offloaded too), and if not, the
/// `APPEND` line that does.
fn isolation(default: &BootEntry, inputs: &Inputs) -> BoardFinding {
    let append = default.append.as_deref().unwrap_or("");
    let pair = inputs.cpus.pair();
    let listed = |parameter: BootParameter| -> Vec<usize> {
        cmdline_value(append, parameter.name())
            .map(|value| parameter_cpus(&value, inputs.host.online.as_slice()))
            .unwrap_or_default()
    };
    let nohz_full = listed(BootParameter::NohzFull);
    let lacking: Vec<BootParameter> = BootParameter::ALL
        .into_iter()
        .filter(|&parameter| {
            let mut covered = listed(parameter);
            if parameter == BootParameter::RcuNocbs {
                covered.extend(&nohz_full);
            }
            !pair.iter().all(|cpu| covered.contains(cpu))
        })
        .collect();
    if lacking.is_empty() {
        return BoardFinding::DefaultEntryIsolates {
            label: default.label.clone(),
        };
    }
    BoardFinding::DefaultEntryLacks {
        label: default.label.clone(),
        fixed_append: fixed_append(append, &lacking, &pair, &inputs.housekeeping()),
        parameters: lacking,
    }
}

/// The CPUs a parameter's value names: flags before the list (`managed_irq,domain,4-5`) are
/// skipped, `all` is every online CPU.
fn parameter_cpus(value: &str, online: &[usize]) -> Vec<usize> {
    if value == "all" {
        return online.to_vec();
    }
    let list: Vec<&str> = value
        .split(',')
        .skip_while(|part| part.starts_with(|c: char| c.is_ascii_alphabetic()))
        .collect();
    cpulist::parse_or_empty(&list.join(",")).unwrap_or_default()
}

/// `append` with each `lacking` parameter set so that it covers `pair` (its CPUs kept, its
/// flags kept, the pair added; written anew where it was missing) and `irqaffinity=` added
/// where none is given, so interrupts start on the housekeeping CPUs.
fn fixed_append(
    append: &str,
    lacking: &[BootParameter],
    pair: &[usize],
    housekeeping: &[usize],
) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut values: Vec<(BootParameter, String)> = Vec::new();
    for word in append.split_whitespace() {
        let parameter = lacking.iter().copied().find(|p| {
            word.split_once('=')
                .is_some_and(|(name, _)| name.replace('-', "_") == p.name())
        });
        match parameter {
            // The kernel takes the last one; its value is rewritten in its place below.
            Some(parameter) => values.push((parameter, word.to_string())),
            None => words.push(word.to_string()),
        }
    }
    for &parameter in lacking {
        let old = values
            .iter()
            .rev()
            .find(|(p, _)| *p == parameter)
            .and_then(|(_, word)| word.split_once('=').map(|(_, v)| v.to_string()));
        words.push(covering(parameter, old.as_deref(), pair));
    }
    if cmdline_value(append, "irqaffinity").is_none() && !housekeeping.is_empty() {
        words.push(format!("irqaffinity={}", cpulist::format(housekeeping)));
    }
    words.join(" ")
}

/// `parameter=value` covering `pair`: the old value's flags and CPUs with the pair added, or
/// for a new `isolcpus=` the flags that also keep managed interrupts off the pair.
fn covering(parameter: BootParameter, old: Option<&str>, pair: &[usize]) -> String {
    let (flags, mut cpus): (Vec<&str>, Vec<usize>) = match old {
        Some(value) => (
            value
                .split(',')
                .take_while(|part| part.starts_with(|c: char| c.is_ascii_alphabetic()))
                .collect(),
            parameter_cpus(value, &[]),
        ),
        None if parameter == BootParameter::Isolcpus => (vec!["managed_irq", "domain"], vec![]),
        None => (vec![], vec![]),
    };
    cpus.extend(pair);
    cpus.sort_unstable();
    cpus.dedup();
    let mut value: Vec<String> = flags.into_iter().map(str::to_string).collect();
    value.push(cpulist::format(&cpus));
    format!("{}={}", parameter.name(), value.join(","))
}

/// Every named device interrupt whose affinity includes an RT CPU, with what it serves and how
/// many the RT CPUs took; one ok finding where there is none.
fn device_irqs(root: &SysRoot, interrupts: &str, inputs: &Inputs) -> Vec<BoardFinding> {
    let pair = inputs.cpus.pair();
    let delivered = delivered_on(interrupts, &pair);
    let move_to = inputs.housekeeping();
    let found: Vec<BoardFinding> = inputs
        .facts
        .irqs_on_rt_cpus
        .iter()
        .filter_map(|irq| {
            let name = irq
                .name
                .clone()
                .or_else(|| Some(handler_dirs(root, irq.irq).join(", ")))
                .filter(|n| !n.is_empty())?;
            if PER_CPU_HANDLERS.iter().any(|h| name.contains(h)) {
                return None;
            }
            Some(BoardFinding::DeviceIrqOnRtCpus(DeviceIrq {
                irq: irq.irq,
                device: device_class(&name),
                name,
                affinity: irq.affinity.clone(),
                delivered_on_rt_cpus: delivered.get(&irq.irq).copied().unwrap_or(0),
                move_to: move_to.clone(),
            }))
        })
        .collect();
    if found.is_empty() {
        let devices = delivered.len();
        return vec![BoardFinding::NoDeviceIrqOnRtCpus { devices }];
    }
    found
}

/// What an interrupt serves, from its handler's name (NVIDIA's drivers name theirs after the
/// unit: `ga10b` is Orin's GPU, `gv11b` Xavier's; `eqos` and `nvethernet` the Tegra Ethernet
/// MACs; `mttcan` the CAN controller).
fn device_class(name: &str) -> DeviceClass {
    const CLASSES: [(DeviceClass, &[&str]); 7] = [
        (
            DeviceClass::Gpu,
            &["nvgpu", "gk20a", "gm20b", "gp10b", "gv11b", "ga10b", ".gpu"],
        ),
        (DeviceClass::Host1x, &["host1x"]),
        (
            DeviceClass::Ethernet,
            &[
                "eqos",
                "nvethernet",
                "ether_qos",
                "mgbe",
                "eth",
                "enp",
                "ecat",
                "igb",
                "r8169",
                "r8168",
            ],
        ),
        (DeviceClass::Can, &["mttcan", "can"]),
        (
            DeviceClass::Storage,
            &["nvme", "sdhci", "mmc", "ahci", "sata"],
        ),
        (DeviceClass::Usb, &["xhci", "usb", "ehci"]),
        (DeviceClass::Pcie, &["pcie", "aer", "pme"]),
    ];
    let lower = name.to_ascii_lowercase();
    CLASSES
        .iter()
        .find(|(_, words)| words.iter().any(|w| lower.contains(w)))
        .map_or(DeviceClass::Other, |(class, _)| *class)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interrupts_are_told_apart_by_the_unit_their_driver_names() {
        for (name, class) in [
            ("ga10b_stall", DeviceClass::Gpu),
            ("17000000.gpu", DeviceClass::Gpu),
            ("host1x_syncpt", DeviceClass::Host1x),
            ("2310000.ethernet.eqos", DeviceClass::Ethernet),
            ("nvethernet.common_irq", DeviceClass::Ethernet),
            ("enP8p1s0", DeviceClass::Ethernet),
            ("c310000.mttcan", DeviceClass::Can),
            ("nvme0q2", DeviceClass::Storage),
            ("xhci-hcd:usb1", DeviceClass::Usb),
            ("PCIe PME, aerdrv", DeviceClass::Pcie),
            ("tegra-i2c", DeviceClass::Other),
        ] {
            assert_eq!(device_class(name), class, "{name}");
        }
    }

    #[test]
    fn a_fixed_append_keeps_every_other_word_and_each_parameters_own_cpus_and_flags() {
        let fixed = fixed_append(
            "${cbootargs} root=/dev/nvme0n1p1 rw isolcpus=domain,3 nohz_full=4-5",
            &[BootParameter::Isolcpus, BootParameter::RcuNocbs],
            &[4, 5],
            &[0, 1, 2, 3],
        );
        assert_eq!(
            fixed,
            "${cbootargs} root=/dev/nvme0n1p1 rw nohz_full=4-5 isolcpus=domain,3-5 \
             rcu_nocbs=4-5 irqaffinity=0-3"
        );
        let fresh = fixed_append("quiet", &[BootParameter::Isolcpus], &[4, 5], &[]);
        assert_eq!(fresh, "quiet isolcpus=managed_irq,domain,4-5");
    }

    #[test]
    fn flags_and_all_are_read_as_the_cpus_they_mean() {
        assert_eq!(parameter_cpus("managed_irq,domain,4-5", &[]), [4, 5]);
        assert_eq!(parameter_cpus("nohz,domain,2,4-5", &[]), [2, 4, 5]);
        assert_eq!(parameter_cpus("all", &[0, 1, 2]), [0, 1, 2]);
        assert!(parameter_cpus("garbage", &[]).is_empty());
    }
}
