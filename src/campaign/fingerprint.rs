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
//! Owns: reading it (through [`SysRoot`]) and comparing two. Pure apart from the reading.

use serde::{Deserialize, Serialize};

use super::identity::{meaningful_words, parameter_name};
use crate::sysinfo::SysRoot;

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
    /// `/proc/cmdline`, its meaningful words (see [`meaningful_words`]).
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

const CPU_DIR: &str = "/sys/devices/system/cpu";

impl Fingerprint {
    /// The running machine's fingerprint under `root`.
    pub fn read(root: &SysRoot) -> Fingerprint {
        let host = crate::sysinfo::host_facts(root);
        let per_cpu: Vec<(usize, Option<String>)> = host
            .cpus
            .iter()
            .filter(|cpu| cpu.online)
            .map(|cpu| (cpu.cpu, cpu.governor.clone()))
            .collect();
        let list = |cpus: &[usize]| crate::cpulist::format(cpus);
        Fingerprint {
            cpu_model: host.cpu_model.clone(),
            microcode: microcode(root, &host.online),
            governors: runs(&per_cpu),
            no_turbo: root.read_trimmed(&format!("{CPU_DIR}/intel_pstate/no_turbo")),
            boost: root.read_trimmed(&format!("{CPU_DIR}/cpufreq/boost")),
            smt: root.read_trimmed(&format!("{CPU_DIR}/smt/control")),
            online: Some(list(&host.online)),
            rt_throttling: match (host.sched_rt_runtime_us, host.sched_rt_period_us) {
                (None, None) => None,
                (runtime, period) => Some(format!(
                    "{}/{}",
                    runtime.map_or("-".into(), |v| v.to_string()),
                    period.map_or("-".into(), |v| v.to_string())
                )),
            },
            isolated: Some(list(&host.isolated)),
            nohz_full: Some(list(&host.nohz_full)),
            cmdline: meaningful_words(host.cmdline.as_deref().unwrap_or("")).join(" "),
        }
    }

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

/// x86: the `microcode` lines of `/proc/cpuinfo` by CPU; arm64: each online CPU's `MIDR_EL1`.
fn microcode(root: &SysRoot, online: &[usize]) -> Option<String> {
    let cpuinfo = root.read("/proc/cpuinfo").unwrap_or_default();
    let mut cpu = None;
    let mut values = Vec::new();
    for line in cpuinfo.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        match key.trim() {
            "processor" => cpu = value.trim().parse::<usize>().ok(),
            "microcode" => values.push((cpu.unwrap_or(values.len()), Some(value.trim().into()))),
            _ => {}
        }
    }
    if values.is_empty() {
        values = online
            .iter()
            .filter_map(|cpu| {
                let midr =
                    root.read_trimmed(&format!("{CPU_DIR}/cpu{cpu}/regs/identification/midr_el1"))?;
                Some((*cpu, Some(midr)))
            })
            .collect();
    }
    runs(&values)
}

/// `0-3=a 4,5=b`: CPUs grouped by equal value (a CPU without one shows `-`); `None` when no
/// CPU has a value.
fn runs(values: &[(usize, Option<String>)]) -> Option<String> {
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
            .map(|(value, cpus)| format!("{}={value}", crate::cpulist::format(cpus)))
            .collect::<Vec<_>>()
            .join(" "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> SysRoot {
        SysRoot::at(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/sys")
                .join(name),
        )
    }

    #[test]
    fn a_board_fingerprint_holds_its_model_governors_throttling_and_isolation() {
        let print = Fingerprint::read(&fixture("rt-board-6cpu"));
        assert!(print.cpu_model.is_some());
        assert_eq!(print.online.as_deref(), Some("0-5"));
        assert!(print.rt_throttling.is_some(), "{print:?}");
        assert!(!print.cmdline.is_empty());
    }

    #[test]
    fn equal_fingerprints_have_no_difference() {
        let print = Fingerprint::read(&fixture("rt-board-6cpu"));
        assert!(differences(&[(0, &print), (1, &print), (2, &print)], &[]).is_empty());
    }

    #[test]
    fn a_different_governor_or_microcode_is_named_with_both_values_and_boots() {
        let a = Fingerprint::read(&fixture("rt-board-6cpu"));
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
        let a = Fingerprint::read(&fixture("rt-board-6cpu"));
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

    #[test]
    fn x86_microcode_is_read_per_processor() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("proc")).unwrap();
        std::fs::write(
            dir.path().join("proc/cpuinfo"),
            "processor\t: 0\nmicrocode\t: 0xf4\n\nprocessor\t: 1\nmicrocode\t: 0xf4\n\nprocessor\t: 2\nmicrocode\t: 0xf6\n",
        )
        .unwrap();
        assert_eq!(
            microcode(&SysRoot::at(dir.path()), &[0, 1, 2]).as_deref(),
            Some("0-1=0xf4 2=0xf6")
        );
    }
}
