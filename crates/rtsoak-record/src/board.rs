//! The board a result ran on and the board check's record: what the device tree and NVIDIA's
//! L4T release file say the board is, the bootloader's entries as `extlinux.conf` lists them,
//! the interrupts of named devices on the RT CPUs, and the typed findings the check draws from
//! them. `sysinfo` reads these, `preflight` judges, the report crate's `board` words them.

use serde::{Deserialize, Serialize};

use super::Level;

/// What the firmware says the board is (present where a device tree or `/etc/nv_tegra_release`
/// is: arm64 boards, not PCs).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct BoardFacts {
    /// `/proc/device-tree/model` (`NVIDIA Jetson Orin Nano Engineering Reference Developer Kit`).
    pub model: Option<String>,
    /// `/proc/device-tree/compatible`, most specific first (`nvidia,p3768-0000+p3767-0005`,
    /// `nvidia,p3767-0005`, `nvidia,tegra234`).
    pub compatible: Vec<String>,
    /// NVIDIA's Linux for Tegra release from `/etc/nv_tegra_release` (`R36.4.0`: its
    /// `# R36 (release), REVISION: 4.0` line); absent without that file.
    pub l4t_release: Option<String>,
    /// On an L4T board: whether the running kernel is NVIDIA's real-time kernel (its release
    /// ends in `-tegra` and carries `-rt`, and `uname -v` says `PREEMPT_RT`); absent elsewhere.
    pub vendor_rt_kernel: Option<bool>,
}

impl BoardFacts {
    /// An NVIDIA Jetson (Tegra) board: a `nvidia,tegra…` compatible string or an L4T release.
    pub fn is_jetson(&self) -> bool {
        self.l4t_release.is_some()
            || self
                .compatible
                .iter()
                .any(|c| c.starts_with("nvidia,tegra"))
    }
}

/// The bootloader's menu, as `/boot/extlinux/extlinux.conf` lists it (L4T boots from it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BootConfig {
    /// The file read.
    pub path: String,
    /// `DEFAULT`: the label booted when nobody picks one.
    pub default_label: Option<String>,
    /// Every `LABEL`, in file order.
    pub entries: Vec<BootEntry>,
}

impl BootConfig {
    /// The entry `DEFAULT` names, if any.
    pub fn default_entry(&self) -> Option<&BootEntry> {
        let label = self.default_label.as_deref()?;
        self.entries.iter().find(|e| e.label == label)
    }
}

/// One `LABEL` of `extlinux.conf`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BootEntry {
    /// `LABEL`.
    pub label: String,
    /// `LINUX`: the kernel image.
    pub kernel: Option<String>,
    /// `APPEND`: the command line it passes (`${cbootargs}` is filled in by the bootloader).
    pub append: Option<String>,
    /// The release in the image's `Linux version` banner; absent where the image cannot be
    /// read or is compressed.
    pub kernel_release: Option<String>,
    /// Whether the banner's version says `PREEMPT_RT`; absent with the release.
    pub kernel_preempt_rt: Option<bool>,
}

/// What kind of device an interrupt serves, from its handler's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceClass {
    /// The integrated GPU (`nvgpu`; `gk20a`, `gp10b`, `gv11b`, `ga10b` by generation).
    Gpu,
    /// host1x, the Tegra engine that feeds the display, camera and video units.
    Host1x,
    /// Ethernet (`eqos`, `nvethernet`, `mgbe`, a PCIe NIC's `enP…`), EtherCAT masters included.
    Ethernet,
    /// CAN (`mttcan`).
    Can,
    /// NVMe, SD and eMMC.
    Storage,
    /// USB host controllers.
    Usb,
    /// PCIe ports (their own interrupts, not a device behind them).
    Pcie,
    /// Anything else with a name.
    Other,
}

impl DeviceClass {
    /// The GPU, host1x, Ethernet or CAN: the units whose interrupts RT setups on a Jetson move
    /// first (the others are storage, USB, PCIe ports and the rest).
    pub fn is_named_unit(self) -> bool {
        matches!(
            self,
            DeviceClass::Gpu | DeviceClass::Host1x | DeviceClass::Ethernet | DeviceClass::Can
        )
    }
}

/// A device interrupt that may be delivered to an RT CPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceIrq {
    /// Its number, the `N` of `/proc/irq/N`.
    pub irq: u32,
    /// What it serves.
    pub device: DeviceClass,
    /// Its handlers' names (`/proc/interrupts`, `/proc/irq/N/<name>`).
    pub name: String,
    /// `smp_affinity_list`.
    pub affinity: Vec<usize>,
    /// How many were delivered on the RT CPUs since boot (`/proc/interrupts`).
    pub delivered_on_rt_cpus: u64,
    /// The CPUs to move it to: online, outside the RT pair, not isolated.
    pub move_to: Vec<usize>,
}

/// A CPU isolation parameter of the kernel command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BootParameter {
    Isolcpus,
    NohzFull,
    RcuNocbs,
}

impl BootParameter {
    /// Every one, in the order a command line usually gives them.
    pub const ALL: [BootParameter; 3] = [
        BootParameter::Isolcpus,
        BootParameter::NohzFull,
        BootParameter::RcuNocbs,
    ];

    /// The parameter's name on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            BootParameter::Isolcpus => "isolcpus",
            BootParameter::NohzFull => "nohz_full",
            BootParameter::RcuNocbs => "rcu_nocbs",
        }
    }
}

/// One verdict of the board check: what was found, as data; `export::board` words it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "id", rename_all = "snake_case")]
pub enum BoardFinding {
    /// No `extlinux.conf`: which kernel boots next cannot be checked.
    NoBootConfig { path: String },
    /// `extlinux.conf` names no default entry (no `DEFAULT`, or one that is no `LABEL`).
    NoDefaultEntry { default_label: Option<String> },
    /// The running kernel and command line are the default entry's.
    BootsDefault { label: String },
    /// The running boot is not the default entry's: the next reboot boots another kernel.
    BootsOtherThanDefault {
        /// `DEFAULT`.
        default_label: String,
        /// The entry whose kernel and command line the running boot has, if one has them.
        running_label: Option<String>,
        /// The running kernel's release.
        running_release: Option<String>,
        /// Whether the running kernel is PREEMPT_RT.
        running_preempt_rt: bool,
    },
    /// The default entry boots a PREEMPT_RT kernel.
    DefaultKernelRt { label: String, release: String },
    /// The default entry boots a kernel that is not PREEMPT_RT.
    DefaultKernelNotRt {
        label: String,
        release: String,
        /// An entry whose kernel is PREEMPT_RT, to make the default.
        rt_label: Option<String>,
        /// Whether the running kernel is PREEMPT_RT (if not, this board keeps booting non-RT).
        running_preempt_rt: bool,
    },
    /// The default entry's command line isolates the RT CPUs (all three parameters).
    DefaultEntryIsolates { label: String },
    /// The default entry's command line leaves RT CPUs out of these parameters.
    DefaultEntryLacks {
        label: String,
        /// The parameters that do not cover both RT CPUs.
        parameters: Vec<BootParameter>,
        /// The entry's `APPEND` with them set: the line to write instead.
        fixed_append: String,
    },
    /// No interrupt of a named device may be delivered to the RT CPUs.
    NoDeviceIrqOnRtCpus { devices: usize },
    /// A device's interrupt may be delivered to an RT CPU.
    DeviceIrqOnRtCpus(DeviceIrq),
}

impl BoardFinding {
    /// How it bears on the figures (or on the next boot's).
    pub fn level(&self) -> Level {
        match self {
            BoardFinding::BootsDefault { .. }
            | BoardFinding::DefaultKernelRt { .. }
            | BoardFinding::DefaultEntryIsolates { .. }
            | BoardFinding::NoDeviceIrqOnRtCpus { .. } => Level::Ok,
            BoardFinding::DefaultKernelNotRt {
                running_preempt_rt: false,
                ..
            } => Level::Problem,
            BoardFinding::NoBootConfig { .. }
            | BoardFinding::NoDefaultEntry { .. }
            | BoardFinding::BootsOtherThanDefault { .. }
            | BoardFinding::DefaultKernelNotRt { .. }
            | BoardFinding::DefaultEntryLacks { .. }
            | BoardFinding::DeviceIrqOnRtCpus(_) => Level::Warning,
        }
    }
}

/// The board check: made where the board is a Jetson, absent elsewhere.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoardCheck {
    /// The bootloader's entries, where `extlinux.conf` was found.
    pub boot: Option<BootConfig>,
    /// Every verdict, boot first, then isolation, then interrupts.
    pub findings: Vec<BoardFinding>,
}
