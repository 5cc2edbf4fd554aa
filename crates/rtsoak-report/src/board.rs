//! The board check in words: one line per finding (`ok`, `warning`, `PROBLEM`), with what to do
//! written out (the `extlinux.conf` line, the `echo` into `smp_affinity_list`), and the board's
//! identity in one line. Pure; `probe` prints it.

use rtsoak_record::cpulist;
use rtsoak_record::{BoardFacts, BoardFinding, BootParameter, DeviceClass, DeviceIrq, Level};

/// One finding as `rtsoak probe` shows it.
pub(crate) struct Worded {
    pub(crate) level: Level,
    /// What it is about (`boot`, `isolation`, `GPU`).
    pub(crate) subject: String,
    pub(crate) detail: String,
    /// What to do (absent when ok).
    pub(crate) remedy: Option<String>,
}

/// What a finding says, before its level is put beside it.
struct Said {
    subject: &'static str,
    detail: String,
    remedy: Option<String>,
}

fn said(subject: &'static str, detail: String, remedy: Option<String>) -> Said {
    Said {
        subject,
        detail,
        remedy,
    }
}

/// `NVIDIA Jetson Orin Nano ... (nvidia,tegra234), L4T R36.4.0, NVIDIA's real-time kernel`.
pub(crate) fn identity(board: &BoardFacts) -> String {
    let mut parts = vec![
        board
            .model
            .clone()
            .unwrap_or_else(|| "model unknown".into()),
    ];
    if let Some(soc) = board.compatible.last() {
        parts[0].push_str(&format!(" ({soc})"));
    }
    if let Some(release) = &board.l4t_release {
        parts.push(format!("L4T {release}"));
    }
    match board.vendor_rt_kernel {
        Some(true) => parts.push("running NVIDIA's real-time kernel".into()),
        Some(false) => parts.push("not running NVIDIA's real-time kernel".into()),
        None => {}
    }
    parts.join(", ")
}

/// Every finding in words, in the check's order.
pub(crate) fn worded(findings: &[BoardFinding], conf: &str) -> Vec<Worded> {
    findings.iter().map(|f| word(f, conf)).collect()
}

fn word(finding: &BoardFinding, conf: &str) -> Worded {
    let said = match finding {
        BoardFinding::NoBootConfig { path } => said(
            "boot",
            format!("no {path}: which kernel boots next cannot be checked"),
            Some(format!(
                "if the board boots from another menu, check its default entry by hand; L4T \
                 boots from {path}"
            )),
        ),
        BoardFinding::NoDefaultEntry { default_label } => {
            no_default_entry(default_label.as_deref(), conf)
        }
        BoardFinding::BootsDefault { label } => said(
            "boot",
            format!("the running kernel and command line are the default entry's (`{label}`)"),
            None,
        ),
        BoardFinding::BootsOtherThanDefault {
            default_label,
            running_label,
            running_release,
            running_preempt_rt,
        } => boots_other(
            default_label,
            running_label.as_deref(),
            running_release.as_deref(),
            *running_preempt_rt,
            conf,
        ),
        BoardFinding::DefaultKernelRt { label, release } => said(
            "boot",
            format!("the default entry `{label}` boots {release}, a PREEMPT_RT kernel"),
            None,
        ),
        BoardFinding::DefaultKernelNotRt {
            label,
            release,
            rt_label,
            ..
        } => default_not_rt(label, release, rt_label.as_deref(), conf),
        BoardFinding::DefaultEntryIsolates { label } => said(
            "isolation",
            format!(
                "the default entry `{label}` isolates the RT CPUs (isolcpus, nohz_full, rcu_nocbs)"
            ),
            None,
        ),
        BoardFinding::DefaultEntryLacks {
            label,
            parameters,
            fixed_append,
        } => said(
            "isolation",
            format!(
                "the default entry `{label}` leaves RT CPUs out of {}: the next boot will not \
                 isolate them",
                parameter_names(parameters)
            ),
            Some(format!(
                "in {conf}, under `LABEL {label}`, write `APPEND {fixed_append}`"
            )),
        ),
        BoardFinding::NoDeviceIrqOnRtCpus { devices } => said(
            "interrupts",
            format!(
                "none of {devices} numbered interrupts of a named device may land on the RT CPUs"
            ),
            None,
        ),
        BoardFinding::DeviceIrqOnRtCpus(irq) => device_irq(irq),
    };
    Worded {
        level: finding.level(),
        subject: said.subject.to_string(),
        detail: said.detail,
        remedy: said.remedy,
    }
}

fn no_default_entry(default_label: Option<&str>, conf: &str) -> Said {
    said(
        "boot",
        match default_label {
            Some(label) => {
                format!("{conf} says `DEFAULT {label}`, but no entry is `LABEL {label}`")
            }
            None => format!("{conf} has no DEFAULT line: the first entry boots"),
        },
        Some(format!(
            "set `DEFAULT <label>` in {conf} to the entry of the real-time kernel"
        )),
    )
}

fn default_not_rt(label: &str, release: &str, rt_label: Option<&str>, conf: &str) -> Said {
    said(
        "boot",
        format!("the default entry `{label}` boots {release}, which is not PREEMPT_RT"),
        Some(match rt_label {
            Some(rt) => {
                format!("set `DEFAULT {rt}` in {conf} (entry `{rt}` boots a PREEMPT_RT kernel)")
            }
            None => format!(
                "install NVIDIA's real-time kernel for this L4T release (JetPack's \
                 `nvidia-l4t-rt-kernel` packages) and make its entry the DEFAULT in {conf}"
            ),
        }),
    )
}

fn boots_other(
    default: &str,
    running: Option<&str>,
    release: Option<&str>,
    running_rt: bool,
    conf: &str,
) -> Said {
    let kernel = format!(
        "{} ({})",
        release.unwrap_or("unknown"),
        if running_rt {
            "PREEMPT_RT"
        } else {
            "not PREEMPT_RT"
        }
    );
    match running {
        Some(running) => said(
            "boot",
            format!(
                "this boot is entry `{running}`, kernel {kernel}, but DEFAULT is `{default}`: \
                 the next reboot boots `{default}`"
            ),
            Some(if running_rt {
                format!("set `DEFAULT {running}` in {conf}, so the board keeps booting this kernel")
            } else {
                format!(
                    "reboot into `{default}`, or set the DEFAULT in {conf} to the real-time entry"
                )
            }),
        ),
        None => said(
            "boot",
            format!(
                "the running kernel {kernel} and its command line are no entry's of {conf} \
                 (DEFAULT is `{default}`): it was booted some other way"
            ),
            Some(format!(
                "add an entry for this kernel to {conf} and make it the DEFAULT"
            )),
        ),
    }
}

fn device_irq(irq: &DeviceIrq) -> Said {
    let on = format!(
        "irq {} ({}) may be delivered to RT CPUs (affinity {}); {} delivered there since boot",
        irq.irq,
        irq.name,
        cpulist::format(&irq.affinity),
        irq.delivered_on_rt_cpus
    );
    let remedy = if irq.move_to.is_empty() {
        "no CPU outside the RT pair to move it to: choose other RT CPUs (`--rt-cpus`)".to_string()
    } else {
        let to = cpulist::format(&irq.move_to);
        let mut remedy = format!(
            "`echo {to} > /proc/irq/{}/smp_affinity_list` (not kept over a reboot: run it from a \
             systemd unit), and `irqaffinity={to}` in the default entry's APPEND",
            irq.irq
        );
        if matches!(irq.device, DeviceClass::Ethernet | DeviceClass::Can) {
            remedy.push_str(
                "; if a real-time application serves this bus, give its interrupt a CPU of its \
                 own outside the RT pair",
            );
        }
        remedy
    };
    said(device_name(irq.device), on, Some(remedy))
}

fn device_name(class: DeviceClass) -> &'static str {
    match class {
        DeviceClass::Gpu => "GPU",
        DeviceClass::Host1x => "host1x",
        DeviceClass::Ethernet => "Ethernet",
        DeviceClass::Can => "CAN",
        DeviceClass::Storage => "storage",
        DeviceClass::Usb => "USB",
        DeviceClass::Pcie => "PCIe",
        DeviceClass::Other => "device",
    }
}

/// `nohz_full and rcu_nocbs`.
fn parameter_names(parameters: &[BootParameter]) -> String {
    let names: Vec<&str> = parameters.iter().map(|p| p.name()).collect();
    match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}
