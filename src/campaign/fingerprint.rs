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
//! Owns: reading it (through [`SysRoot`]); the record and comparing two are `rtsoak-analysis`'s
//! (`campaign::fingerprint`), re-exported here.

pub(crate) use rtsoak_analysis::campaign::fingerprint::Fingerprint;
use rtsoak_analysis::campaign::fingerprint::runs;

use super::identity::meaningful_words;
use crate::sysinfo::SysRoot;

const CPU_DIR: &str = "/sys/devices/system/cpu";

/// The running machine's fingerprint under `root`.
pub(crate) fn read(root: &SysRoot) -> Fingerprint {
    let host = crate::sysinfo::host_facts(root);
    let per_cpu: Vec<(usize, Option<String>)> = host
        .cpus
        .iter()
        .filter(|cpu| cpu.online)
        .map(|cpu| (cpu.cpu, cpu.governor.clone()))
        .collect();
    let list = |cpus: &[usize]| rtsoak_record::cpulist::format(cpus);
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
        let print = read(&fixture("rt-board-6cpu"));
        assert!(print.cpu_model.is_some());
        assert_eq!(print.online.as_deref(), Some("0-5"));
        assert!(print.rt_throttling.is_some(), "{print:?}");
        assert!(!print.cmdline.is_empty());
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
