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
//! Owns: parsing and validation; the plan's types and defaults are `rtsoak-analysis`'s
//! (`campaign::plan`), re-exported here. Never reads a file (the caller reads it, checked) and
//! never touches the system.

pub use rtsoak_analysis::campaign::plan::{
    Accel, CommandKind, End, JudgeSection, MAX_CMDLINE_BYTES, OnFailure, Plan, Point, QemuSection,
    SettleSection, TOKEN_KEY,
};
use rtsoak_analysis::campaign::sequence::Role;

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
        value: rtsoak_record::text::quote(&value.to_string()),
        allowed: allowed.to_string(),
    }
}

/// Parse and validate plan text (`name` is used in messages only).
pub fn parse(name: &str, text: &str) -> Result<Plan, PlanError> {
    let plan: Plan = toml::from_str(text).map_err(|e| PlanError::Toml {
        name: name.to_string(),
        message: crate::profile::toml_message(&e),
    })?;
    validate(&plan)?;
    Ok(plan)
}

fn validate(plan: &Plan) -> Result<(), PlanError> {
    validate_command(&plan.command)?;
    validate_order(plan)?;
    in_range("retries", plan.retries, 0, 3)?;
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

/// `value` must lie in `min..=max` (a NaN never does).
fn in_range<T>(key: &str, value: T, min: T, max: T) -> Result<(), PlanError>
where
    T: Copy + PartialOrd + std::fmt::Display,
{
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
            Some(name) if rtsoak_measure::bench::by_name(name).is_some() => {}
            other => {
                let names: Vec<String> = rtsoak_measure::bench::BENCHES
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
    in_range("boots_per_step", plan.boots_per_step, 1, 20)?;
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
    in_range("judge.min_rate_ratio", judge.min_rate_ratio, 1.0, 1000.0)?;
    in_range(
        "judge.min_rate_change_per_million",
        judge.min_rate_change_per_million,
        0.0,
        1e6,
    )
}

fn validate_settle(settle: &SettleSection, deadline_s: u64) -> Result<(), PlanError> {
    in_range("settle.idle_percent", settle.idle_percent, 0.0, 100.0)?;
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
    in_range("qemu.cpus", qemu.cpus, 1, 64)?;
    in_range("qemu.memory_mib", qemu.memory_mib, 256, 65536)?;
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
