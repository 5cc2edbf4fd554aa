//! The campaign plan's shape: the two points (a kernel image, its initramfs and its command
//! line each; or one kernel with two command lines), the order they boot in, the one rtsoak
//! command every boot runs, the gates fixed before anything is measured, how a boot is known to
//! have settled, its deadline, and what a failed boot does to the rest. Every key and its
//! default is in `docs/campaign.md`.
//!
//! Owns: the plan's types and defaults (the gates' are `bench compare`'s and the baseline
//! diff's). Never parses or validates (the binaries' crate does, before the first reboot) and
//! never touches the system.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::sequence::Role;

/// The longest command line a point may have, bytes: x86's `COMMAND_LINE_SIZE` (2048) less
/// room for the token rtsoak appends to tell its boots apart.
pub const MAX_CMDLINE_BYTES: usize = 1900;

/// The word rtsoak appends to every point's command line to recognise the boot it loaded:
/// `rtsoak.campaign=<campaign id>.<boot>.<attempt>`. The kernel takes it for a parameter of a
/// module named `rtsoak`, which does not exist, and ignores it.
pub const TOKEN_KEY: &str = "rtsoak.campaign=";

/// What to do with the campaign when a boot fails (does not come up as planned, or measures
/// nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnFailure {
    /// Go on with the next boot; the verdict is inconclusive, the table shows what was measured.
    #[default]
    Continue,
    /// End the campaign there (the machine is still left as `end` says).
    Stop,
}

/// Where a kexec campaign leaves the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum End {
    /// Kexec back into the kernel and command line it started in (skipped where the last boot
    /// already is that).
    #[default]
    Start,
    /// Stay in the last point's boot.
    Stay,
    /// Reboot through the firmware and the boot loader, into its default entry.
    Reboot,
}

/// Which accelerator the qemu driver boots its guests with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Accel {
    /// KVM where it works on this host (qemu is tried with it first), else TCG, with a warning.
    #[default]
    Auto,
    /// KVM, or refuse.
    Kvm,
    /// TCG, qemu's emulator: behaviour is real, timings are not.
    Tcg,
}

impl Accel {
    /// The spelling in the plan and the document.
    pub fn name(self) -> &'static str {
        match self {
            Accel::Auto => "auto",
            Accel::Kvm => "kvm",
            Accel::Tcg => "tcg",
        }
    }
}

/// One point: what to boot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Point {
    /// Shown in the table and the document (default: `parent` or `child`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The kernel image (absolute path).
    pub kernel: PathBuf,
    /// Its initramfs (absolute path); none: the kernel boots without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initrd: Option<PathBuf>,
    /// The whole command line. Absent: kexec uses the command line the campaign started under,
    /// qemu `console=ttyS0 panic=-1` (`ttyAMA0` on aarch64).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmdline: Option<String>,
    /// Words added after the command line (`nohz_full=2,3`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub append: Option<String>,
    /// The kernel release the image must boot (`uname -r`); checked against the image where
    /// its header names one, and against every boot of the point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release: Option<String>,
}

/// `[judge]`: the gates, fixed before the first boot.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct JudgeSection {
    /// Bench: a change of the child against the parents' midpoint beyond this is a signal, %.
    pub signal_pct: f64,
    /// Bench: parent drift (last parent step against the first) beyond this is inconclusive, %.
    pub drift_pct: f64,
    /// Bench: a boot whose measured rounds have a CV above this is inconclusive, %.
    pub cv_pct: f64,
    /// Claim a change only where every boot of the child lies beyond every boot of the
    /// parents (the ranges separate, as 0-day's LKP asks); needs 3 boots of each point.
    pub separate_ranges: bool,
    /// Soak: significance level of the exact rate tests.
    pub alpha: f64,
    /// Soak: a changed over-threshold rate must differ by at least this factor ...
    pub min_rate_ratio: f64,
    /// ... and by at least this many per million samples.
    pub min_rate_change_per_million: f64,
}

impl Default for JudgeSection {
    fn default() -> Self {
        let gates = crate::bench::compare::Gates::default();
        let rules = rtsoak_record::result::diff::DiffRules::default();
        JudgeSection {
            signal_pct: gates.signal_pct,
            drift_pct: gates.drift_pct,
            cv_pct: gates.cv_pct,
            separate_ranges: false,
            alpha: rules.alpha,
            min_rate_ratio: rules.min_rate_ratio,
            min_rate_change_per_million: rules.min_rate_increase_per_million,
        }
    }
}

/// `[settle]`: when a boot is quiet enough to measure. Not a sleep: each condition is watched
/// until it holds, within `timeout_s`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SettleSection {
    /// Wait for `systemctl is-system-running --wait` to say the boot is done (kexec driver).
    pub systemd: bool,
    /// Accept a boot systemd calls `degraded` (a unit failed), recording it.
    pub accept_degraded: bool,
    /// Then the CPUs, all together, must be idle at least this share of the time ...
    pub idle_percent: f64,
    /// ... over a span this long, seconds.
    pub idle_span_s: u64,
    /// A boot not settled this long after its command could start fails (`settle_timeout`).
    pub timeout_s: u64,
}

impl Default for SettleSection {
    fn default() -> Self {
        SettleSection {
            systemd: true,
            accept_degraded: true,
            idle_percent: 90.0,
            idle_span_s: 10,
            timeout_s: 900,
        }
    }
}

/// `[qemu]`: how the qemu driver boots each point (ignored by kexec).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct QemuSection {
    /// The guest's architecture: `x86_64` or `aarch64`.
    pub arch: String,
    /// qemu's binary (default `/usr/bin/qemu-system-<arch>`); never searched for in `PATH`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub binary: Option<PathBuf>,
    /// `auto`, `kvm` or `tcg`.
    pub accel: Accel,
    /// Virtual CPUs.
    pub cpus: u32,
    /// Guest memory, MiB.
    pub memory_mib: u32,
    /// qemu's `-cpu` (default `max` on x86_64 or under KVM, `cortex-a76` under TCG on aarch64).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_model: Option<String>,
}

impl Default for QemuSection {
    fn default() -> Self {
        QemuSection {
            arch: std::env::consts::ARCH.to_string(),
            binary: None,
            accel: Accel::Auto,
            cpus: 4,
            memory_mib: 1024,
            cpu_model: None,
        }
    }
}

/// The plan as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// Free text, shown with the table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The rtsoak command every boot runs: its words after `rtsoak`, never through a shell.
    pub command: Vec<String>,
    /// The steps, each `parent` or `child`.
    #[serde(default = "default_order")]
    pub order: Vec<Role>,
    /// Boots of each step, one after another.
    #[serde(default = "one")]
    pub boots_per_step: u32,
    /// What a failed boot does to the rest.
    #[serde(default)]
    pub on_failure: OnFailure,
    /// Extra tries of a boot that failed (0: none). Each is counted; a boot is never tried
    /// more often.
    #[serde(default)]
    pub retries: u32,
    /// From loading a boot's kernel to its saved result, seconds.
    #[serde(default = "default_deadline_s")]
    pub deadline_s: u64,
    /// Where a kexec campaign leaves the machine.
    #[serde(default)]
    pub end: End,
    /// The reference point.
    pub parent: Point,
    /// The point under test.
    pub child: Point,
    /// The gates.
    #[serde(default)]
    pub judge: JudgeSection,
    /// When a boot is settled.
    #[serde(default)]
    pub settle: SettleSection,
    /// The qemu driver's machine.
    #[serde(default)]
    pub qemu: QemuSection,
}

fn default_order() -> Vec<Role> {
    vec![Role::Parent, Role::Child, Role::Parent]
}

fn one() -> u32 {
    1
}

fn default_deadline_s() -> u64 {
    3600
}

/// What kind of command the plan runs, which decides how its boots are judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CommandKind {
    /// `rtsoak bench NAME ...`: ns per operation, the A/B/A arithmetic.
    Bench,
    /// `rtsoak run` or `rtsoak compare`: over-threshold rates, the exact rate test.
    Soak,
}

impl Plan {
    /// The point of `role`.
    pub fn point(&self, role: Role) -> &Point {
        match role {
            Role::Parent => &self.parent,
            Role::Child => &self.child,
        }
    }

    /// What its command is.
    pub fn command_kind(&self) -> CommandKind {
        if self.command.first().map(String::as_str) == Some("bench") {
            CommandKind::Bench
        } else {
            CommandKind::Soak
        }
    }

    /// The label of `role`'s point.
    pub fn label(&self, role: Role) -> &str {
        self.point(role)
            .label
            .as_deref()
            .unwrap_or_else(|| role.name())
    }
}
