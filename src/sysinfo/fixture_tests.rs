//! Host facts read from fixture trees under `tests/fixtures/sys/`, each laid out like `/`, and
//! once from the live machine.

use std::fs;
use std::path::Path;

use super::{SysRoot, host_facts, kernel};
use rtsoak_record::{BoardFacts, BootIsolation, CpuFacts, HostFacts};

fn fixture(name: &str) -> HostFacts {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/sys")
        .join(name);
    assert!(root.is_dir(), "fixture {} is missing", root.display());
    host_facts(&SysRoot::at(root))
}

fn cpu(cpu: usize, governor: Option<&str>, idle: &[&str], siblings: &[usize]) -> CpuFacts {
    CpuFacts {
        cpu,
        online: true,
        governor: governor.map(str::to_string),
        idle_states: idle.iter().map(|s| s.to_string()).collect(),
        smt_siblings: siblings.to_vec(),
    }
}

fn some(s: &str) -> Option<String> {
    Some(s.to_string())
}

#[test]
fn an_rt_board_with_isolated_cpus_is_read_in_full() {
    let facts = fixture("rt-board-6cpu");
    let expected = HostFacts {
        hostname: some("orin-rt"),
        kernel_release: some("6.12.117+deb13-rt-arm64"),
        kernel_version: some("#1 SMP PREEMPT_RT Debian 6.12.117-1"),
        arch: std::env::consts::ARCH.to_string(),
        preempt_rt: true,
        preempt_rt_source: "/sys/kernel/realtime is 1".to_string(),
        cmdline: some(
            "root=/dev/nvme0n1p1 rw rootwait console=ttyTCU0,115200 \
             isolcpus=managed_irq,domain,4-5 nohz_full=4-5 rcu_nocbs=4-5 irqaffinity=0-3",
        ),
        boot_isolation: BootIsolation {
            isolcpus: some("managed_irq,domain,4-5"),
            nohz_full: some("4-5"),
            rcu_nocbs: some("4-5"),
            irqaffinity: some("0-3"),
        },
        // arm64 cpuinfo has no "model name"; its "CPU part" comes before the device tree.
        cpu_model: some("0xd42"),
        cpus: (0..6)
            .map(|n| cpu(n, Some("performance"), &["WFI", "c7"], &[]))
            .collect(),
        online: vec![0, 1, 2, 3, 4, 5],
        isolated: vec![4, 5],
        nohz_full: vec![4, 5],
        sched_rt_runtime_us: Some(950_000),
        sched_rt_period_us: Some(1_000_000),
        clocksource: some("arch_sys_counter"),
        io_uring_disabled: Some(0),
        // A device tree with a model alone: no compatible strings, no L4T release file.
        board: Some(BoardFacts {
            model: some("NVIDIA Jetson Orin Nano Developer Kit"),
            ..BoardFacts::default()
        }),
    };
    assert_eq!(facts, expected);
    assert_eq!(facts.online_cpus(), vec![0, 1, 2, 3, 4, 5]);
    assert_eq!(facts.isolated_cpus(), vec![4, 5]);
}

#[test]
fn a_plain_vm_is_not_rt_and_has_no_isolation_or_cpufreq() {
    let facts = fixture("vm-2cpu");
    let expected = HostFacts {
        hostname: some("vm"),
        kernel_release: some("6.18.44-fc-v669"),
        kernel_version: some("#1 SMP PREEMPT_DYNAMIC"),
        arch: std::env::consts::ARCH.to_string(),
        preempt_rt: false,
        preempt_rt_source: kernel::NOT_RT.to_string(),
        cmdline: some(
            "mitigations=auto,no_guest_host,no_guest_guest console=ttyS0 quiet reboot=k panic=1 \
             nomodule random.trust_cpu=1 cpuidle_haltpoll.force=1 haltpoll.guest_halt_poll_ns=0 \
             rdinit=/process_api -- --firecracker-init --addr 0.0.0.0:2024",
        ),
        boot_isolation: BootIsolation::default(),
        cpu_model: some("AMD EPYC"),
        cpus: (0..2)
            .map(|n| cpu(n, None, &["POLL", "haltpoll idle"], &[]))
            .collect(),
        online: vec![0, 1],
        isolated: vec![],
        nohz_full: vec![],
        sched_rt_runtime_us: Some(950_000),
        sched_rt_period_us: Some(1_000_000),
        clocksource: some("tsc"),
        io_uring_disabled: Some(0),
        board: None,
    };
    assert_eq!(facts, expected);
    assert_eq!(facts.isolated_cpus(), Vec::<usize>::new());
}

#[test]
fn an_old_rt_kernel_is_recognised_by_its_version_string_alone() {
    let facts = fixture("old-kernel-6cpu");
    let expected = HostFacts {
        hostname: some("rt-bench"),
        kernel_release: some("6.1.0-rt"),
        kernel_version: some("#1 SMP PREEMPT_RT Thu Feb  1 12:00:00 UTC 2024"),
        arch: std::env::consts::ARCH.to_string(),
        preempt_rt: true,
        preempt_rt_source: "/proc/sys/kernel/version contains PREEMPT_RT".to_string(),
        cmdline: some(
            "BOOT_IMAGE=/boot/vmlinuz-6.1.0-rt root=UUID=3b1f6c2e-8a4d-4e52-9c1a-0d7e5f2b9a10 \
             ro quiet",
        ),
        boot_isolation: BootIsolation::default(),
        cpu_model: some("Intel(R) Core(TM) i3-9100T CPU @ 3.10GHz"),
        cpus: vec![
            cpu(0, Some("ondemand"), &[], &[3]),
            cpu(1, Some("ondemand"), &[], &[4]),
            cpu(2, Some("ondemand"), &[], &[5]),
            cpu(3, Some("powersave"), &[], &[0]),
            cpu(4, Some("powersave"), &[], &[1]),
            cpu(5, Some("powersave"), &[], &[2]),
        ],
        online: vec![0, 1, 2, 3, 4, 5],
        isolated: vec![],
        nohz_full: vec![],
        sched_rt_runtime_us: Some(-1),
        sched_rt_period_us: Some(1_000_000),
        clocksource: some("hpet"),
        io_uring_disabled: None,
        board: None,
    };
    assert_eq!(facts, expected);
}

#[test]
fn host_facts_survive_a_json_round_trip() {
    let facts = fixture("rt-board-6cpu");
    let json = serde_json::to_string(&facts).unwrap();
    assert_eq!(serde_json::from_str::<HostFacts>(&json).unwrap(), facts);
}

/// Writes `files` (host path, content) under a fresh temporary root.
fn tree(files: &[(&str, &str)]) -> (tempfile::TempDir, SysRoot) {
    let dir = tempfile::tempdir().unwrap();
    for (path, content) in files {
        let path = dir.path().join(path.trim_start_matches('/'));
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, content).unwrap();
    }
    let root = SysRoot::at(dir.path());
    (dir, root)
}

#[test]
fn an_empty_root_gives_no_facts_rather_than_an_error() {
    let (_dir, root) = tree(&[]);
    let facts = host_facts(&root);
    assert_eq!(facts.kernel_release, None);
    assert!(!facts.preempt_rt);
    assert_eq!(facts.preempt_rt_source, kernel::NOT_RT);
    assert!(facts.cpus.is_empty() && facts.online.is_empty());
    assert_eq!(facts.cpu_model, None);
    assert_eq!(facts.sched_rt_runtime_us, None);
}

#[test]
fn without_a_possible_file_the_online_cpus_are_described() {
    let (_dir, root) = tree(&[("/sys/devices/system/cpu/online", "0-2\n")]);
    let cpus: Vec<usize> = host_facts(&root).cpus.iter().map(|c| c.cpu).collect();
    assert_eq!(cpus, vec![0, 1, 2]);
}

#[test]
fn an_offline_cpu_is_described_but_marked_offline() {
    let (_dir, root) = tree(&[
        ("/sys/devices/system/cpu/possible", "0-1\n"),
        ("/sys/devices/system/cpu/online", "0\n"),
        ("/sys/devices/system/cpu/cpu1/online", "0\n"),
    ]);
    let online: Vec<bool> = host_facts(&root).cpus.iter().map(|c| c.online).collect();
    assert_eq!(online, vec![true, false]);
}

#[test]
fn idle_states_are_ordered_by_number_not_by_name() {
    let mut files = Vec::new();
    let paths: Vec<(String, String)> = (0..12)
        .map(|n| {
            (
                format!("/sys/devices/system/cpu/cpu0/cpuidle/state{n}/name"),
                format!("C{n}\n"),
            )
        })
        .collect();
    files.push(("/sys/devices/system/cpu/online", "0\n"));
    files.extend(paths.iter().map(|(p, c)| (p.as_str(), c.as_str())));
    let (_dir, root) = tree(&files);
    let names: Vec<String> = (0..12).map(|n| format!("C{n}")).collect();
    assert_eq!(host_facts(&root).cpus[0].idle_states, names);
}

#[test]
fn the_device_tree_names_the_board_when_cpuinfo_names_no_cpu() {
    let (_dir, root) = tree(&[
        ("/proc/cpuinfo", "processor\t: 0\nBogoMIPS\t: 62.50\n"),
        (
            "/proc/device-tree/model",
            "Raspberry Pi 4 Model B Rev 1.4\0",
        ),
    ]);
    assert_eq!(
        host_facts(&root).cpu_model,
        some("Raspberry Pi 4 Model B Rev 1.4")
    );
}

#[test]
fn realtime_file_saying_zero_does_not_make_a_kernel_rt() {
    let (_dir, root) = tree(&[
        ("/sys/kernel/realtime", "0\n"),
        ("/proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC\n"),
    ]);
    assert!(!host_facts(&root).preempt_rt);
}

#[test]
fn a_malformed_cpu_list_is_recorded_as_no_cpus() {
    let (_dir, root) = tree(&[("/sys/devices/system/cpu/isolated", "garbage\n")]);
    assert!(host_facts(&root).isolated.is_empty());
}

#[test]
fn the_live_machine_reports_online_cpus_and_a_kernel_release() {
    let facts = host_facts(&SysRoot::system());
    assert!(!facts.online_cpus().is_empty(), "no online CPUs: {facts:?}");
    assert!(
        facts.kernel_release.is_some(),
        "no kernel release: {facts:?}"
    );
    assert!(
        facts.cpus.iter().any(|c| c.online),
        "no CPU marked online: {facts:?}"
    );
}

#[test]
fn device_tree_strings_lose_their_trailing_nul() {
    let root =
        SysRoot::at(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sys/rt-board-6cpu"));
    assert_eq!(
        root.read_trimmed("/proc/device-tree/model"),
        some("NVIDIA Jetson Orin Nano Developer Kit")
    );
}

fn root(name: &str) -> SysRoot {
    SysRoot::at(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/sys")
            .join(name),
    )
}

#[test]
fn interrupts_allowed_on_given_cpus_are_found_with_their_names() {
    use super::irqs::irqs_allowed_on;
    use rtsoak_record::Irq;
    let old = root("old-kernel-6cpu");
    assert_eq!(
        irqs_allowed_on(&old, &[4, 5]),
        vec![Irq {
            irq: 45,
            name: some("eth0"),
            affinity: vec![0, 1, 2, 3, 4, 5],
        }],
        "irq 16 (0-3) stays off CPUs 4-5"
    );
    assert_eq!(irqs_allowed_on(&old, &[0]).len(), 2);
    assert!(irqs_allowed_on(&root("rt-board-6cpu"), &[4, 5]).is_empty());
}

#[test]
fn tasks_allowed_on_given_cpus_are_found_and_kernel_threads_told_apart() {
    use super::tasks::tasks_allowed_on;
    let tasks = tasks_allowed_on(&root("old-kernel-6cpu"), &[4, 5], None);
    let seen: Vec<(i32, &str, bool)> = tasks
        .iter()
        .map(|t| (t.pid, t.comm.as_str(), t.kernel_thread))
        .collect();
    assert_eq!(
        seen,
        [
            (1, "systemd", false),
            (44, "ksoftirqd/4", true),
            (60, "kworker/u12:0", true),
            (812, "irqbalance", false),
        ]
    );
    assert!(tasks[1].is_per_cpu_kernel_thread());
    assert!(!tasks[2].is_per_cpu_kernel_thread());
    let without_systemd = tasks_allowed_on(&root("old-kernel-6cpu"), &[4, 5], Some(1));
    assert_eq!(without_systemd.len(), 3, "the excluded pid is skipped");
}

#[test]
fn irqbalance_is_found_by_its_comm() {
    use super::tasks::irqbalance_pids;
    assert_eq!(irqbalance_pids(&root("old-kernel-6cpu")), vec![812]);
    assert!(irqbalance_pids(&root("rt-board-6cpu")).is_empty());
}

#[test]
fn timer_migration_is_read_and_absent_where_the_kernel_lacks_it() {
    assert_eq!(kernel::timer_migration(&root("rt-board-6cpu")), Some(0));
    assert_eq!(kernel::timer_migration(&root("vm-2cpu")), Some(1));
    assert_eq!(kernel::timer_migration(&root("old-kernel-6cpu")), None);
}

#[test]
fn compaction_of_locked_pages_is_read_and_absent_where_the_kernel_lacks_it() {
    // An RT kernel's default, a non-RT kernel's default, and a tree with no /proc/sys/vm.
    assert_eq!(
        kernel::compact_unevictable_allowed(&root("rt-board-6cpu")),
        Some(0)
    );
    assert_eq!(
        kernel::compact_unevictable_allowed(&root("vm-2cpu")),
        Some(1)
    );
    assert_eq!(
        kernel::compact_unevictable_allowed(&root("old-kernel-6cpu")),
        None
    );
}

#[test]
fn idle_states_carry_whether_they_were_disabled() {
    use super::cpus::idle_state_details;
    let states = idle_state_details(&root("rt-board-6cpu"), 4);
    let seen: Vec<(&str, bool)> = states
        .iter()
        .map(|s| (s.name.as_str(), s.disabled))
        .collect();
    assert_eq!(seen, [("WFI", false), ("c7", true)]);
    let vm = idle_state_details(&root("vm-2cpu"), 1);
    assert_eq!(vm[1].name, "haltpoll idle");
    assert!(!vm[1].disabled);
    assert!(idle_state_details(&root("old-kernel-6cpu"), 4).is_empty());
}
