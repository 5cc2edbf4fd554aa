//! Facts about the host, read from `/proc` and `/sys` through one injectable root so that every
//! reader is tested on fixture trees (`tests/fixtures/sys/<scenario>/`).
//!
//! Owns: reading and parsing. Never judges: whether a fact is good or bad for a real-time run
//! is decided by the caller. Never fails either: a missing or unreadable file is a fact
//! (`None` or an empty list), because small development machines lack half of these files.
//!
//! [`SysRoot`] is the only way in; [`host_facts`] gathers everything a result records.
//! Per-CPU reading lives in [`cpus`], kernel and boot command line in [`kernel`], interrupts in
//! [`irqs`], processes and threads in [`tasks`].

mod board;
pub(crate) mod cpus;

pub(crate) mod irqs;
pub(crate) mod kernel;
mod root;
pub(crate) mod tasks;

pub(crate) use root::SysRoot;

use rtsoak_record::HostFacts;

/// Read every host fact under `root`. Never fails: missing files give `None` or empty lists.
pub(crate) fn host_facts(root: &SysRoot) -> HostFacts {
    let kernel_version = root.read_trimmed("/proc/sys/kernel/version");
    let (preempt_rt, preempt_rt_source) = kernel::preempt_rt(root, kernel_version.as_deref());
    let cmdline = root.read_trimmed("/proc/cmdline");
    let boot_isolation = kernel::boot_isolation(cmdline.as_deref().unwrap_or(""));
    let online = cpus::cpu_list(root, "online");
    let cpu_facts = cpus::possible_cpus(root, &online)
        .into_iter()
        .map(|cpu| cpus::cpu_facts(root, cpu, &online))
        .collect();
    HostFacts {
        hostname: root.read_trimmed("/proc/sys/kernel/hostname"),
        kernel_release: root.read_trimmed("/proc/sys/kernel/osrelease"),
        kernel_version,
        arch: std::env::consts::ARCH.to_string(),
        preempt_rt,
        preempt_rt_source,
        cmdline,
        boot_isolation,
        cpu_model: cpus::cpu_model(root),
        cpus: cpu_facts,
        isolated: cpus::cpu_list(root, "isolated"),
        nohz_full: cpus::cpu_list(root, "nohz_full"),
        online,
        sched_rt_runtime_us: root.parsed("/proc/sys/kernel/sched_rt_runtime_us"),
        sched_rt_period_us: root.parsed("/proc/sys/kernel/sched_rt_period_us"),
        clocksource: root
            .read_trimmed("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
        io_uring_disabled: root.parsed("/proc/sys/kernel/io_uring_disabled"),
        board: board::board(root, preempt_rt),
    }
}

#[cfg(test)]
mod fixture_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_test_fixtures_host_is_what_sysinfo_reads_of_the_board_fixture() {
        let root = SysRoot::at(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/sys/rt-board-6cpu"
        ));
        let read = HostFacts {
            arch: "aarch64".to_string(),
            ..host_facts(&root)
        };
        let stored = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/crates/rtsoak-testing/src/rt-board-6cpu.json"
        );
        if std::env::var_os("RTSOAK_BLESS").is_some() {
            let json = serde_json::to_string_pretty(&read).unwrap() + "\n";
            std::fs::write(stored, json).unwrap();
        }
        let fixture: HostFacts =
            serde_json::from_str(rtsoak_testing::fixture::HOST_FACTS_JSON).unwrap();
        assert_eq!(
            fixture, read,
            "the test fixture's host facts are not sysinfo's: RTSOAK_BLESS=1 cargo test --lib \
             sysinfo rewrites {stored}"
        );
    }
}
