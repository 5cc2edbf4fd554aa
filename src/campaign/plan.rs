//! The campaign plan: a TOML file naming the two points (a kernel image, its initramfs and its
//! command line each; or one kernel with two command lines), the order they boot in, the one
//! rtsoak command every boot runs, the gates fixed before anything is measured, how a boot is
//! known to have settled, its deadline, and what a failed boot does to the rest. Every key and
//! its default is in `docs/campaign.md`.
//!
//! Parsed and validated here, before the first reboot: an unknown key, a value out of range or
//! a plan that cannot be carried out is a [`PlanError`] naming the key, the value and what is
//! allowed. What only the machine can answer (do the images open, does kexec take them) is the
//! drivers' to check.
//!
//! Owns: the plan's shape, defaults and validation. Never reads a file (the caller reads it,
//! checked) and never touches the system.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::sequence::Role;

/// The command's words that would place its result elsewhere than the campaign's boot
/// directory, or change what is kept: the campaign gives `--output` itself.
const FORBIDDEN_FLAGS: &[&str] = &[
    "-o",
    "--output",
    "--results-dir",
    "--keep",
    "--keep-days",
    "--json",
];

/// The command words a campaign runs.
const COMMANDS: &[&str] = &["bench", "run", "compare"];

/// The longest command line a point may have, bytes: x86's `COMMAND_LINE_SIZE` (2048) less
/// room for the token rtsoak appends to tell its boots apart.
pub const MAX_CMDLINE_BYTES: usize = 1900;

/// The word rtsoak appends to every point's command line to recognise the boot it loaded:
/// `rtsoak.campaign=<campaign id>.<boot>.<attempt>`. The kernel takes it for a parameter of a
/// module named `rtsoak`, which does not exist, and ignores it.
pub const TOKEN_KEY: &str = "rtsoak.campaign=";

/// A plan that cannot be carried out, with what is wrong and what to do.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// Not TOML, an unknown key, or a value of the wrong type.
    #[error(
        "cannot parse the campaign plan {name}: {message}\nfix the plan; docs/campaign.md lists \
         every key with its allowed values"
    )]
    Toml {
        /// The plan's path.
        name: String,
        /// toml's message, its quoted lines escaped.
        message: String,
    },
    /// A value out of its range.
    #[error(
        "campaign plan key `{key}` = {value} is not allowed: expected {allowed}; fix the plan \
         (docs/campaign.md lists every key)"
    )]
    Invalid {
        /// The key, dotted (`settle.idle_percent`, `order[1]`).
        key: String,
        /// The value as given.
        value: String,
        /// What is allowed.
        allowed: String,
    },
}

fn invalid(key: &str, value: impl std::fmt::Display, allowed: &str) -> PlanError {
    PlanError::Invalid {
        key: key.to_string(),
        value: crate::sys::text::quote(&value.to_string()),
        allowed: allowed.to_string(),
    }
}

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
        let rules = crate::result::diff::DiffRules::default();
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

/// Parse and validate plan text (`name` is used in messages only).
pub fn parse(name: &str, text: &str) -> Result<Plan, PlanError> {
    let plan: Plan = toml::from_str(text).map_err(|e| PlanError::Toml {
        name: name.to_string(),
        message: e
            .to_string()
            .trim_end()
            .lines()
            .map(crate::sys::text::quote)
            .collect::<Vec<_>>()
            .join("\n"),
    })?;
    validate(&plan)?;
    Ok(plan)
}

fn validate(plan: &Plan) -> Result<(), PlanError> {
    validate_command(&plan.command)?;
    validate_order(plan)?;
    in_range("retries", plan.retries.into(), 0, 3)?;
    in_range("deadline_s", plan.deadline_s, 60, 7 * 24 * 3600)?;
    validate_judge(&plan.judge)?;
    validate_settle(&plan.settle, plan.deadline_s)?;
    validate_qemu(&plan.qemu)?;
    for role in [Role::Parent, Role::Child] {
        validate_point(role.name(), plan.point(role))?;
    }
    if plan.parent.kernel == plan.child.kernel
        && plan.parent.initrd == plan.child.initrd
        && words(&plan.parent) == words(&plan.child)
    {
        return Err(invalid(
            "child",
            "the same kernel, initramfs and command line as parent",
            "a point that differs from the parent in its kernel, initrd, cmdline or append",
        ));
    }
    Ok(())
}

fn words(point: &Point) -> (Option<&str>, Option<&str>) {
    (point.cmdline.as_deref(), point.append.as_deref())
}

fn in_range(key: &str, value: u64, min: u64, max: u64) -> Result<(), PlanError> {
    if (min..=max).contains(&value) {
        Ok(())
    } else {
        Err(invalid(key, value, &format!("{min} to {max}")))
    }
}

fn in_range_f64(key: &str, value: f64, min_exclusive: f64, max: f64) -> Result<(), PlanError> {
    if value > min_exclusive && value <= max {
        Ok(())
    } else {
        Err(invalid(
            key,
            value,
            &format!("more than {min_exclusive} and at most {max}"),
        ))
    }
}

fn validate_command(command: &[String]) -> Result<(), PlanError> {
    let Some(first) = command.first() else {
        return Err(invalid(
            "command",
            "[]",
            "the words of one rtsoak command after `rtsoak`, e.g. [\"bench\", \"futex-wait-wake\"] \
             or [\"compare\", \"--profile\", \"nightly\"]",
        ));
    };
    if !COMMANDS.contains(&first.as_str()) {
        return Err(invalid(
            "command[0]",
            first,
            "\"bench\", \"run\" or \"compare\"",
        ));
    }
    if first == "bench" {
        match command.get(1).map(String::as_str) {
            Some(name) if crate::bench::by_name(name).is_some() => {}
            other => {
                let names: Vec<String> = crate::bench::BENCHES
                    .iter()
                    .map(|b| format!("\"{}\"", b.name()))
                    .collect();
                return Err(invalid(
                    "command[1]",
                    other.unwrap_or("(nothing)"),
                    &format!("a bench to run: {}", names.join(", ")),
                ));
            }
        }
    }
    for (i, word) in command.iter().enumerate() {
        let flag = word.split('=').next().unwrap_or(word);
        if FORBIDDEN_FLAGS.contains(&flag) {
            return Err(invalid(
                &format!("command[{i}]"),
                word,
                "any flag but -o/--output, --results-dir, --keep, --keep-days and --json: the \
                 campaign keeps every boot's result itself",
            ));
        }
    }
    Ok(())
}

fn validate_order(plan: &Plan) -> Result<(), PlanError> {
    in_range("boots_per_step", plan.boots_per_step.into(), 1, 20)?;
    let steps = plan.order.len();
    if !(2..=9).contains(&steps)
        || !plan.order.contains(&Role::Parent)
        || !plan.order.contains(&Role::Child)
    {
        let shown: Vec<&str> = plan.order.iter().map(|r| r.name()).collect();
        return Err(invalid(
            "order",
            format!("{shown:?}"),
            "2 to 9 steps, each \"parent\" or \"child\", with at least one of each, e.g. \
             [\"parent\", \"child\", \"parent\"]",
        ));
    }
    if plan.judge.separate_ranges {
        for role in [Role::Parent, Role::Child] {
            let boots =
                plan.order.iter().filter(|r| **r == role).count() as u32 * plan.boots_per_step;
            if boots < 3 {
                return Err(invalid(
                    "judge.separate_ranges",
                    true,
                    &format!(
                        "false, or at least 3 boots of every point (the {} has {boots}: raise \
                         boots_per_step)",
                        role.name()
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn validate_judge(judge: &JudgeSection) -> Result<(), PlanError> {
    in_range_f64("judge.signal_pct", judge.signal_pct, 0.0, 100.0)?;
    in_range_f64("judge.drift_pct", judge.drift_pct, 0.0, 100.0)?;
    in_range_f64("judge.cv_pct", judge.cv_pct, 0.0, 100.0)?;
    in_range_f64("judge.alpha", judge.alpha, 0.0, 0.5)?;
    if !(judge.min_rate_ratio >= 1.0 && judge.min_rate_ratio <= 1000.0) {
        return Err(invalid(
            "judge.min_rate_ratio",
            judge.min_rate_ratio,
            "1 to 1000",
        ));
    }
    if !(judge.min_rate_change_per_million >= 0.0 && judge.min_rate_change_per_million <= 1e6) {
        return Err(invalid(
            "judge.min_rate_change_per_million",
            judge.min_rate_change_per_million,
            "0 to 1000000",
        ));
    }
    Ok(())
}

fn validate_settle(settle: &SettleSection, deadline_s: u64) -> Result<(), PlanError> {
    if !(0.0..=100.0).contains(&settle.idle_percent) {
        return Err(invalid(
            "settle.idle_percent",
            settle.idle_percent,
            "0 to 100",
        ));
    }
    in_range("settle.idle_span_s", settle.idle_span_s, 1, 3600)?;
    if settle.timeout_s < settle.idle_span_s || settle.timeout_s >= deadline_s {
        return Err(invalid(
            "settle.timeout_s",
            settle.timeout_s,
            &format!(
                "at least settle.idle_span_s ({}) and less than deadline_s ({deadline_s})",
                settle.idle_span_s
            ),
        ));
    }
    Ok(())
}

fn validate_qemu(qemu: &QemuSection) -> Result<(), PlanError> {
    if !["x86_64", "aarch64"].contains(&qemu.arch.as_str()) {
        return Err(invalid(
            "qemu.arch",
            &qemu.arch,
            "\"x86_64\" or \"aarch64\"",
        ));
    }
    if let Some(binary) = &qemu.binary
        && !binary.is_absolute()
    {
        return Err(invalid(
            "qemu.binary",
            binary.display(),
            "an absolute path (rtsoak never searches PATH for what it runs)",
        ));
    }
    in_range("qemu.cpus", qemu.cpus.into(), 1, 64)?;
    in_range("qemu.memory_mib", qemu.memory_mib.into(), 256, 65536)?;
    if let Some(model) = &qemu.cpu_model
        && (model.is_empty()
            || !model
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.,=".contains(c)))
    {
        return Err(invalid(
            "qemu.cpu_model",
            model,
            "a qemu -cpu model name (letters, digits, - _ . , =)",
        ));
    }
    Ok(())
}

fn validate_point(role: &str, point: &Point) -> Result<(), PlanError> {
    if let Some(label) = &point.label
        && (label.is_empty()
            || label.len() > 32
            || !label.chars().all(|c| c.is_ascii_graphic() || c == ' '))
    {
        return Err(invalid(
            &format!("{role}.label"),
            label,
            "1 to 32 printable ASCII characters",
        ));
    }
    for (key, path) in [
        ("kernel", Some(&point.kernel)),
        ("initrd", point.initrd.as_ref()),
    ] {
        if let Some(path) = path
            && !path.is_absolute()
        {
            return Err(invalid(
                &format!("{role}.{key}"),
                path.display(),
                "an absolute path",
            ));
        }
    }
    for (key, text) in [("cmdline", &point.cmdline), ("append", &point.append)] {
        let Some(text) = text else { continue };
        if text.len() > MAX_CMDLINE_BYTES
            || !text.chars().all(|c| c.is_ascii_graphic() || c == ' ')
            || text.contains(TOKEN_KEY)
        {
            return Err(invalid(
                &format!("{role}.{key}"),
                text,
                &format!(
                    "at most {MAX_CMDLINE_BYTES} printable ASCII characters and spaces, without \
                     `{TOKEN_KEY}` (rtsoak adds it)"
                ),
            ));
        }
    }
    if let Some(release) = &point.release
        && (release.is_empty()
            || release.len() > 64
            || !release.chars().all(|c| c.is_ascii_graphic()))
    {
        return Err(invalid(
            &format!("{role}.release"),
            release,
            "a kernel release as `uname -r` prints it",
        ));
    }
    Ok(())
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
