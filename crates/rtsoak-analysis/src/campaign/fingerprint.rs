//! The host fingerprint: what besides the kernel decides a measurement and must therefore be
//! the same on every boot of a campaign. A boot that differs makes the verdict INCONCLUSIVE,
//! naming the field, the two values and the boots.
//!
//! It holds the CPU model; the microcode (x86: each CPU's `microcode` revision in
//! `/proc/cpuinfo`; arm64: each CPU's `MIDR_EL1`, which carries the core's variant and revision);
//! each CPU's frequency governor; turbo (`intel_pstate/no_turbo`) and boost (`cpufreq/boost`);
//! SMT (`smt/control`); the online CPUs; RT throttling (`sched_rt_runtime_us` and
//! `sched_rt_period_us`); isolation (`isolated` and `nohz_full`); and the command line without
//! the boot loader's bookkeeping, rtsoak's token and the parameters the plan varies (a plan that
//! varies `isolcpus` or `nohz_full` leaves the matching CPU list out too).
//!
//! Not `vm.compact_unevictable_allowed`, though it too bears on a measurement (whether the RT
//! workers' locked pages may move): its default is the kernel's own (0 with PREEMPT_RT, 1
//! without) and a setting in `/etc/sysctl.d/` holds for every boot alike, so boots differ in it
//! where the kernels under test do, and a campaign of an RT kernel against a non-RT one would be
//! inconclusive for the very difference it measures. A soak's system check reports it
//! (`vm.compact-unevictable`).
//!
//! Owns: the record and comparing two. Never reads the machine (the binaries' crate does).

use serde::{Deserialize, Serialize};

use super::identity::parameter_name;

/// One boot's fingerprint. Absent files are `None`: a VM has no governor, a board no turbo.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// CPU model.
    pub cpu_model: Option<String>,
    /// x86 microcode revisions, or arm64 `MIDR_EL1` values, of the online CPUs (`cpu=value`,
    /// runs of equal values as one `cpus=value`).
    pub microcode: Option<String>,
    /// Governor of each CPU (`cpus=governor`).
    pub governors: Option<String>,
    /// `/sys/devices/system/cpu/intel_pstate/no_turbo`.
    pub no_turbo: Option<String>,
    /// `/sys/devices/system/cpu/cpufreq/boost`.
    pub boost: Option<String>,
    /// `/sys/devices/system/cpu/smt/control`.
    pub smt: Option<String>,
    /// `/sys/devices/system/cpu/online`.
    pub online: Option<String>,
    /// `sched_rt_runtime_us/sched_rt_period_us`.
    pub rt_throttling: Option<String>,
    /// `/sys/devices/system/cpu/isolated`.
    pub isolated: Option<String>,
    /// `/sys/devices/system/cpu/nohz_full`.
    pub nohz_full: Option<String>,
    /// `/proc/cmdline`, its meaningful words (see [`meaningful_words`](super::identity::meaningful_words)).
    pub cmdline: String,
}

/// A field of the fingerprint, by its stable id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Field {
    CpuModel,
    Microcode,
    Governors,
    NoTurbo,
    Boost,
    Smt,
    Online,
    RtThrottling,
    Isolated,
    NohzFull,
    Cmdline,
}

impl Field {
    /// The stable id, as the document spells it.
    pub fn name(self) -> &'static str {
        match self {
            Field::CpuModel => "cpu_model",
            Field::Microcode => "microcode",
            Field::Governors => "governors",
            Field::NoTurbo => "no_turbo",
            Field::Boost => "boost",
            Field::Smt => "smt",
            Field::Online => "online",
            Field::RtThrottling => "rt_throttling",
            Field::Isolated => "isolated",
            Field::NohzFull => "nohz_full",
            Field::Cmdline => "cmdline",
        }
    }
}

/// Two boots whose fingerprints differ in one field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Difference {
    /// The field.
    pub field: Field,
    /// The boot compared against (the first measured) and its value (`-`: absent).
    pub reference_boot: usize,
    /// Its value.
    pub reference: String,
    /// The boot that differs and its value.
    pub boot: usize,
    /// Its value.
    pub value: String,
}

impl Fingerprint {
    /// Every field with its value, as compared (`varied`: the command-line parameters the plan
    /// varies, left out of the command line, and the CPU lists they decide).
    fn fields(&self, varied: &[String]) -> Vec<(Field, String)> {
        let shown = |value: &Option<String>| value.clone().unwrap_or_else(|| "-".into());
        let varies = |name: &str| varied.iter().any(|v| v == name);
        let cmdline: Vec<&str> = self
            .cmdline
            .split_whitespace()
            .filter(|word| !varies(parameter_name(word)))
            .collect();
        let mut fields = vec![
            (Field::CpuModel, shown(&self.cpu_model)),
            (Field::Microcode, shown(&self.microcode)),
            (Field::Governors, shown(&self.governors)),
            (Field::NoTurbo, shown(&self.no_turbo)),
            (Field::Boost, shown(&self.boost)),
            (Field::Smt, shown(&self.smt)),
            (Field::Online, shown(&self.online)),
            (Field::RtThrottling, shown(&self.rt_throttling)),
            (Field::Cmdline, cmdline.join(" ")),
        ];
        if !varies("isolcpus") {
            fields.push((Field::Isolated, shown(&self.isolated)));
        }
        if !varies("nohz_full") {
            fields.push((Field::NohzFull, shown(&self.nohz_full)));
        }
        fields
    }
}

/// Every difference between each boot's fingerprint and the first's, `varied` left out.
pub fn differences(boots: &[(usize, &Fingerprint)], varied: &[String]) -> Vec<Difference> {
    let Some(((reference_boot, reference), rest)) = boots.split_first() else {
        return Vec::new();
    };
    let expected = reference.fields(varied);
    let mut found = Vec::new();
    for (boot, fingerprint) in rest {
        for ((field, want), (_, got)) in expected.iter().zip(fingerprint.fields(varied)) {
            if *want != got {
                found.push(Difference {
                    field: *field,
                    reference_boot: *reference_boot,
                    reference: want.clone(),
                    boot: *boot,
                    value: got,
                });
            }
        }
    }
    found
}

/// `0-3=a 4,5=b`: CPUs grouped by equal value (a CPU without one shows `-`); `None` when no
/// CPU has a value.
pub fn runs(values: &[(usize, Option<String>)]) -> Option<String> {
    if values.iter().all(|(_, v)| v.is_none()) {
        return None;
    }
    let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
    for (cpu, value) in values {
        let value = value.clone().unwrap_or_else(|| "-".into());
        match groups.iter_mut().find(|(v, _)| *v == value) {
            Some((_, cpus)) => cpus.push(*cpu),
            None => groups.push((value, vec![*cpu])),
        }
    }
    Some(
        groups
            .iter()
            .map(|(value, cpus)| format!("{}={value}", rtsoak_record::cpulist::format(cpus)))
            .collect::<Vec<_>>()
            .join(" "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A six-CPU board's fingerprint, as the binaries' crate reads it.
    fn board() -> Fingerprint {
        Fingerprint {
            cpu_model: Some("ARMv8 Processor rev 1 (v8l)".into()),
            microcode: Some("0-5=0x411fd421".into()),
            governors: Some("0-5=performance".into()),
            no_turbo: None,
            boost: None,
            smt: None,
            online: Some("0-5".into()),
            rt_throttling: Some("-1/1000000".into()),
            isolated: Some("2-5".into()),
            nohz_full: Some("2-5".into()),
            cmdline: "root=/dev/mmcblk0p1 isolcpus=2-5 nohz_full=2-5 rcu_nocbs=2-5".into(),
        }
    }

    #[test]
    fn equal_fingerprints_have_no_difference() {
        let print = board();
        assert!(differences(&[(0, &print), (1, &print), (2, &print)], &[]).is_empty());
    }

    #[test]
    fn a_different_governor_or_microcode_is_named_with_both_values_and_boots() {
        let a = board();
        let mut b = a.clone();
        b.governors = Some("0-5=powersave".into());
        b.microcode = Some("0-5=0xf4".into());
        let found = differences(&[(0, &a), (2, &a), (3, &b)], &[]);
        let fields: Vec<Field> = found.iter().map(|d| d.field).collect();
        assert_eq!(fields, [Field::Microcode, Field::Governors]);
        assert_eq!((found[0].reference_boot, found[0].boot), (0, 3));
        assert_eq!(found[1].value, "0-5=powersave");
    }

    #[test]
    fn what_the_plan_varies_is_left_out_of_the_command_line_and_the_cpu_lists() {
        let a = board();
        let mut b = a.clone();
        b.cmdline = format!("{} nohz_full=4,5", a.cmdline);
        b.nohz_full = Some("1-5".into());
        let all = differences(&[(0, &a), (1, &b)], &[]);
        assert_eq!(
            all.iter().map(|d| d.field).collect::<Vec<_>>(),
            [Field::Cmdline, Field::NohzFull]
        );
        assert!(differences(&[(0, &a), (1, &b)], &["nohz_full".into()]).is_empty());
        // Varying nohz_full does not excuse another change of the command line.
        b.cmdline.push_str(" mitigations=off");
        let found = differences(&[(0, &a), (1, &b)], &["nohz_full".into()]);
        assert_eq!(found.len(), 1);
        assert!(found[0].value.ends_with("mitigations=off"), "{found:?}");
    }

    #[test]
    fn cpus_are_grouped_by_value() {
        let values = [
            (0, Some("a".to_string())),
            (1, Some("a".to_string())),
            (2, Some("b".to_string())),
            (3, None),
        ];
        assert_eq!(runs(&values).as_deref(), Some("0-1=a 2=b 3=-"));
        assert_eq!(runs(&[(0, None)]), None);
    }
}
