//! The system check on fixture trees (`tests/fixtures/sys/`): a 6-CPU PREEMPT_RT board with CPUs
//! 4-5 isolated, a 2-CPU non-RT VM and an old 6-CPU RT kernel set up badly; privileges and the
//! transport matrix are given as values (an unprivileged user, a kernel without the io_uring
//! futex opcodes). Every check is seen ok and failing.

use std::path::Path;

use super::check;
use rtsoak_record::{Privileges, RtCpus, SystemCheck, Trial};
use rtsoak_report::probe as render;

use crate::profile::{self, CpuTopology, Overrides};
use crate::sysinfo::{SysRoot, host_facts};
use rtsoak_record::Support;
use rtsoak_record::TransportSupport;
use rtsoak_record::{BoardFacts, BoardFinding, BootParameter, DeviceClass};
use rtsoak_record::{CheckId, Hypervisor, Level};

fn root(name: &str) -> SysRoot {
    SysRoot::at(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/sys")
            .join(name),
    )
}

/// The CPUs the default profile picks on the fixture's machine.
fn default_cpus(name: &str) -> RtCpus {
    let host = host_facts(&root(name));
    let (profile_name, profile) = profile::load("default").unwrap();
    let topology = CpuTopology {
        online: host.online_cpus(),
        isolated: host.isolated_cpus(),
    };
    let plan = profile::resolve(
        &profile_name,
        &profile,
        &Overrides::default(),
        &topology,
        &rtsoak_record::transport::Name::all(),
    )
    .unwrap();
    plan.rt_cpus()
}

fn root_user() -> Privileges {
    Privileges {
        rt_priority: Trial::granted("SCHED_FIFO priority 40 on a scratch thread"),
        memory_lock: Trial::granted("mlock of 16 MiB"),
        pidfd_getfd: Trial::granted("pidfd_open and pidfd_getfd on this process"),
    }
}

fn unprivileged_user() -> Privileges {
    Privileges {
        rt_priority: Trial::refused(
            "SCHED_FIFO priority 40 on a scratch thread",
            "sched_setscheduler failed: EPERM: Operation not permitted",
        ),
        memory_lock: Trial::refused(
            "mlock of 16 MiB",
            "mlock failed: ENOMEM: Cannot allocate memory",
        ),
        pidfd_getfd: Trial::refused(
            "pidfd_open and pidfd_getfd on this process",
            "pidfd_getfd failed: EPERM: Operation not permitted",
        ),
    }
}

fn matrix(futex: Support) -> Vec<TransportSupport> {
    rtsoak_record::transport::Name::ids()
        .into_iter()
        .map(|name| TransportSupport {
            transport: name.to_string(),
            support: if name == "futex" {
                futex.clone()
            } else {
                Support::Supported
            },
        })
        .collect()
}

/// A kernel older than 6.7: the io_uring opcode probe lacks FUTEX_WAIT.
fn pre_6_7_matrix() -> Vec<TransportSupport> {
    matrix(Support::Unsupported {
        feature: "IORING_OP_FUTEX_WAIT".to_string(),
        probe: "io_uring opcode probe".to_string(),
        errno: None,
    })
}

pub(crate) fn checked(name: &str) -> SystemCheck {
    check(
        &root(name),
        &default_cpus(name),
        &root_user(),
        &matrix(Support::Supported),
    )
}

/// The one finding with `id`.
fn finding<'a>(check: &'a SystemCheck, id: &'a str) -> &'a rtsoak_record::Finding {
    let found: Vec<_> = check.by_id(&CheckId::parse(id)).collect();
    assert_eq!(found.len(), 1, "expected one finding {id}: {found:#?}");
    found[0]
}

fn level(check: &SystemCheck, id: &str) -> Level {
    finding(check, id).level
}

#[test]
fn the_default_profile_picks_the_isolated_cpus_4_and_5_on_the_rt_board() {
    assert_eq!(
        default_cpus("rt-board-6cpu"),
        RtCpus {
            publisher: 4,
            subscriber: 5,
            noise: vec![0, 1, 2, 3],
        }
    );
}

#[test]
fn the_rt_board_passes_every_check_except_rt_throttling() {
    let check = checked("rt-board-6cpu");
    let not_ok: Vec<String> = check
        .findings
        .iter()
        .filter(|f| f.level != Level::Ok)
        .map(|f| f.id.to_string())
        .collect();
    assert_eq!(not_ok, ["sched.rt-throttling"]);
    assert_eq!(
        check.worth,
        [
            "RT throttling on (950000 of 1000000 us): busy real-time noise is throttled, not run \
          to completion"
        ]
    );
    assert!(
        finding(&check, "kernel.preempt-rt")
            .detail
            .contains("/sys/kernel/realtime")
    );
    assert!(
        finding(&check, "tasks.kernel")
            .detail
            .contains("2 per-CPU kernel threads")
    );
    assert_eq!(check.verdict(), Level::Warning);
}

#[test]
fn the_vm_is_not_rt_not_isolated_and_shares_its_two_cpus_with_noise() {
    let check = checked("vm-2cpu");
    assert_eq!(level(&check, "kernel.preempt-rt"), Level::Problem);
    for id in [
        "cpus.isolated",
        "cpus.nohz-full",
        "cpus.rcu-nocbs",
        "layout.noise-shares-rt-cpu",
        "irq.affinity",
        "timer.migration",
        "tasks.user",
        "tasks.kernel",
        "cpu.idle",
        "sched.rt-throttling",
        "vm.compact-unevictable",
        "cpu.virtual",
    ] {
        assert_eq!(level(&check, id), Level::Warning, "{id}");
    }
    for id in ["cpu.governor", "cpu.smt", "clock.source", "irq.irqbalance"] {
        assert_eq!(level(&check, id), Level::Ok, "{id}");
    }
    assert!(
        finding(&check, "cpus.isolated")
            .detail
            .starts_with("no CPU is isolated")
    );
    assert!(
        finding(&check, "cpu.governor")
            .detail
            .starts_with("no cpufreq on RT CPUs 0-1")
    );
    let irq = finding(&check, "irq.affinity");
    assert_eq!(
        irq.detail,
        "RT CPUs 0-1 have irq 26 (ttyS0) in their affinity (0-1)"
    );
    assert!(
        irq.remedy
            .as_deref()
            .unwrap()
            .starts_with("no CPU outside the RT pair")
    );
    assert!(
        finding(&check, "tasks.user")
            .detail
            .contains("process_api (1)")
    );
    assert!(
        finding(&check, "tasks.kernel")
            .detail
            .contains("kthreadd (2)")
    );
    assert!(
        finding(&check, "cpu.idle")
            .detail
            .contains("CPU 1 haltpoll idle")
    );
    assert_eq!(check.verdict(), Level::Problem);
    assert!(check.worth[0].starts_with("not a PREEMPT_RT kernel (6.18.44-fc-v669)"));
    assert!(
        check.worth.contains(
            &"RT CPUs 0-1 not isolated (isolcpus=/nohz_full=): other tasks and interrupts may run \
          there"
                .to_string()
        )
    );
}

#[test]
fn the_old_kernel_names_each_misplaced_interrupt_task_and_cpu_setting() {
    let check = checked("old-kernel-6cpu");
    assert_eq!(check.cpus.pair(), [4, 5]);
    assert_eq!(level(&check, "kernel.preempt-rt"), Level::Ok);
    let irq = finding(&check, "irq.affinity");
    assert_eq!(
        irq.detail,
        "RT CPUs 4-5 have irq 45 (eth0) in their affinity (0-5)"
    );
    assert_eq!(
        irq.remedy.as_deref(),
        Some(
            "move it with `echo 0-3 > /proc/irq/45/smp_affinity_list` (or boot with \
             `irqaffinity=0-3`)"
        )
    );
    let irqbalance = finding(&check, "irq.irqbalance");
    assert_eq!(irqbalance.level, Level::Warning);
    assert!(irqbalance.detail.contains("pid 812"));
    let kernel = finding(&check, "tasks.kernel");
    assert_eq!(kernel.level, Level::Warning);
    assert!(
        kernel.detail.contains("kworker/u12:0 (60)"),
        "{}",
        kernel.detail
    );
    assert!(
        !kernel.detail.contains("ksoftirqd"),
        "per-CPU threads are expected"
    );
    let user = finding(&check, "tasks.user");
    assert!(
        user.detail.starts_with("2 processes (2 threads)"),
        "{}",
        user.detail
    );
    assert!(
        user.remedy
            .as_deref()
            .unwrap()
            .contains("taskset -apc 0-3 PID")
    );
    let governor = finding(&check, "cpu.governor");
    assert_eq!(governor.level, Level::Warning);
    assert!(
        governor
            .detail
            .ends_with("CPU 4 powersave, CPU 5 powersave")
    );
    let smt = finding(&check, "cpu.smt");
    assert_eq!(
        smt.detail,
        "CPU 4 shares its core with CPU 1; CPU 5 shares its core with CPU 2"
    );
    assert_eq!(level(&check, "clock.source"), Level::Warning);
    assert_eq!(level(&check, "sched.rt-throttling"), Level::Ok);
    assert_eq!(
        level(&check, "timer.migration"),
        Level::Ok,
        "absent is not on"
    );
    assert_eq!(level(&check, "cpu.idle"), Level::Ok, "no cpuidle at all");
    assert_eq!(
        level(&check, "vm.compact-unevictable"),
        Level::Ok,
        "no compaction file is no compaction of locked pages"
    );
    assert_eq!(level(&check, "layout.noise-shares-rt-cpu"), Level::Ok);
    assert!(
        finding(&check, "cpus.isolated")
            .remedy
            .as_deref()
            .unwrap()
            .contains(
                "isolcpus=managed_irq,domain,4-5 nohz_full=4-5 rcu_nocbs=4-5 irqaffinity=0-3"
            )
    );
}

#[test]
fn an_unprivileged_user_is_told_each_refusal_as_a_problem() {
    let rt = root("rt-board-6cpu");
    let cpus = default_cpus("rt-board-6cpu");
    let refused = check(
        &rt,
        &cpus,
        &unprivileged_user(),
        &matrix(Support::Supported),
    );
    for id in [
        "privileges.rt-priority",
        "privileges.memlock",
        "privileges.pidfd-getfd",
    ] {
        let f = finding(&refused, id);
        assert_eq!(f.level, Level::Problem, "{id}");
        assert!(f.detail.starts_with("refused: "), "{}", f.detail);
        assert!(f.remedy.is_some(), "{id}");
    }
    assert!(
        finding(&refused, "privileges.rt-priority")
            .detail
            .contains("EPERM")
    );
    assert_eq!(
        refused.worth[0],
        "no real-time priority: the RT pair runs SCHED_OTHER"
    );
    let granted = check(&rt, &cpus, &root_user(), &matrix(Support::Supported));
    assert_eq!(level(&granted, "privileges.rt-priority"), Level::Ok);
    assert_eq!(level(&granted, "privileges.memlock"), Level::Ok);
    assert_eq!(level(&granted, "privileges.pidfd-getfd"), Level::Ok);
}

#[test]
fn a_kernel_without_the_io_uring_futex_opcodes_reports_futex_unsupported_with_the_reason() {
    let name = "old-kernel-6cpu";
    let old = check(
        &root(name),
        &default_cpus(name),
        &root_user(),
        &pre_6_7_matrix(),
    );
    let futex = finding(&old, "transport.futex");
    assert_eq!(futex.level, Level::Warning);
    assert_eq!(
        futex.detail,
        "unsupported: needs IORING_OP_FUTEX_WAIT: io_uring opcode probe says this kernel lacks it"
    );
    assert!(futex.remedy.as_deref().unwrap().contains("Linux 6.7"));
    for other in ["msg-ring", "eventfd", "signalfd"] {
        assert_eq!(level(&old, &format!("transport.{other}")), Level::Ok);
    }
    let new = checked(name);
    assert_eq!(level(&new, "transport.futex"), Level::Ok);
}

#[test]
fn noise_placed_on_an_rt_cpu_is_a_warning_even_on_the_rt_board() {
    let cpus = RtCpus {
        publisher: 4,
        subscriber: 5,
        noise: vec![3, 4],
    };
    let check = check(
        &root("rt-board-6cpu"),
        &cpus,
        &root_user(),
        &matrix(Support::Supported),
    );
    let noise = finding(&check, "layout.noise-shares-rt-cpu");
    assert_eq!(noise.level, Level::Warning);
    assert_eq!(
        noise.detail,
        "noise and the coordinator share CPU 4 with the RT pair (noise CPUs 3-4)"
    );
}

#[test]
fn io_uring_switched_off_by_sysctl_is_a_problem_and_limited_to_a_group_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let sysctl = dir.path().join("proc/sys/kernel");
    std::fs::create_dir_all(&sysctl).unwrap();
    let cpus = RtCpus {
        publisher: 0,
        subscriber: 1,
        noise: vec![0],
    };
    for (value, expected) in [
        ("2", Level::Problem),
        ("1", Level::Warning),
        ("0", Level::Ok),
    ] {
        std::fs::write(sysctl.join("io_uring_disabled"), value).unwrap();
        let check = check(
            &SysRoot::at(dir.path()),
            &cpus,
            &root_user(),
            &matrix(Support::Supported),
        );
        assert_eq!(level(&check, "kernel.io-uring"), expected, "value {value}");
    }
}

#[test]
fn compaction_of_locked_pages_is_a_warning_where_the_kernel_allows_it_and_silent_elsewhere() {
    let id = "vm.compact-unevictable";
    // PREEMPT_RT's default: nothing to do.
    let rt = finding(&checked("rt-board-6cpu"), id).clone();
    assert_eq!(rt.level, Level::Ok);
    assert_eq!(
        rt.detail,
        "leaves locked pages where they are (vm.compact_unevictable_allowed is 0)"
    );
    assert_eq!((rt.remedy, rt.worth), (None, None));
    // A non-RT kernel's default: the workers' locked pages may move under them.
    let vm = checked("vm-2cpu");
    let allowed = finding(&vm, id);
    assert_eq!(allowed.level, Level::Warning);
    assert!(
        allowed
            .detail
            .starts_with("vm.compact_unevictable_allowed is 1: compaction may move"),
        "{}",
        allowed.detail
    );
    assert!(
        allowed
            .remedy
            .as_deref()
            .unwrap()
            .starts_with("`sysctl vm.compact_unevictable_allowed=0`")
    );
    assert!(
        allowed
            .remedy
            .as_deref()
            .unwrap()
            .contains("/etc/sysctl.d/")
    );
    let worth = "compaction of locked pages on: the RT workers can take minor page faults on \
                 memory they locked";
    assert_eq!(allowed.worth.as_deref(), Some(worth));
    assert!(vm.worth.iter().any(|line| line == worth), "{:#?}", vm.worth);
    // No file: a kernel without compaction, nothing to warn about.
    let old = finding(&checked("old-kernel-6cpu"), id).clone();
    assert_eq!(old.level, Level::Ok);
    assert!(
        old.detail.starts_with("not in this kernel"),
        "{}",
        old.detail
    );
    let text = render::render(
        &vm,
        &host_facts(&root("vm-2cpu")),
        &matrix(Support::Supported),
        rtsoak_measure::transport::about,
    );
    assert!(
        text.contains("warning  memory compaction: vm.compact_unevictable_allowed is 1: "),
        "{text}"
    );
}

#[test]
fn an_empty_tree_is_judged_without_failing() {
    let dir = tempfile::tempdir().unwrap();
    let cpus = RtCpus {
        publisher: 0,
        subscriber: 1,
        noise: vec![0],
    };
    let check = check(&SysRoot::at(dir.path()), &cpus, &root_user(), &[]);
    assert_eq!(level(&check, "kernel.preempt-rt"), Level::Problem);
    assert_eq!(level(&check, "irq.affinity"), Level::Ok);
    assert_eq!(level(&check, "clock.source"), Level::Ok);
    assert_eq!(level(&check, "vm.compact-unevictable"), Level::Ok);
    assert_eq!(level(&check, "cpu.virtual"), Level::Ok);
}

#[test]
fn a_virtual_machine_is_a_warning_whichever_way_the_kernel_shows_it_and_bare_metal_is_silent() {
    let id = "cpu.virtual";
    // This VM: the hypervisor CPU flag.
    let vm = checked("vm-2cpu");
    assert_eq!(vm.facts.hypervisor, Some(Hypervisor::CpuFlag));
    let flagged = finding(&vm, id);
    assert_eq!(flagged.level, Level::Warning);
    assert!(
        flagged.detail.starts_with(
            "a virtual machine: the CPUs carry the hypervisor flag (/proc/cpuinfo); the host \
             schedules these CPUs"
        ),
        "{}",
        flagged.detail
    );
    assert!(
        flagged
            .remedy
            .as_deref()
            .unwrap()
            .starts_with("measure on bare metal")
    );
    let worth = "a virtual machine: every latency includes the host's scheduling of its CPUs";
    assert_eq!(flagged.worth.as_deref(), Some(worth));
    // Bare metal, x86 and arm64 (a Jetson's device tree is NVIDIA's): nothing to say.
    for name in ["rt-board-6cpu", "old-kernel-6cpu", "jetson-orin-nano"] {
        let check = checked(name);
        assert_eq!(check.facts.hypervisor, None, "{name}");
        assert_eq!(level(&check, id), Level::Ok, "{name}");
    }
    // The other signs, each on a bare board made virtual.
    let signs: [(&str, &[u8], Hypervisor); 3] = [
        ("sys/hypervisor/type", b"xen\n", Hypervisor::SysHypervisor),
        (
            "proc/device-tree/compatible",
            b"linux,dummy-virt\0",
            Hypervisor::QemuVirt,
        ),
        (
            "proc/device-tree/hypervisor/compatible",
            b"xen,xen\0",
            Hypervisor::DeviceTreeNode,
        ),
    ];
    for (file, content, sign) in signs {
        let dir = copied("rt-board-6cpu");
        let path = dir.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, content).unwrap();
        let check = check(
            &SysRoot::at(dir.path()),
            &default_cpus("rt-board-6cpu"),
            &root_user(),
            &matrix(Support::Supported),
        );
        assert_eq!(check.facts.hypervisor, Some(sign), "{file}");
        assert_eq!(level(&check, id), Level::Warning, "{file}");
    }
}

#[test]
fn a_hypervisor_sign_from_a_newer_build_loads_as_other() {
    let mut json = serde_json::to_value(checked("vm-2cpu")).unwrap();
    assert_eq!(json["facts"]["hypervisor"], "cpu_flag");
    json["facts"]["hypervisor"] = "a_sign_of_tomorrow".into();
    let back: SystemCheck = serde_json::from_value(json).unwrap();
    assert_eq!(back.facts.hypervisor, Some(Hypervisor::Other));
}

#[test]
fn a_check_survives_a_json_round_trip() {
    let check = checked("old-kernel-6cpu");
    let text = serde_json::to_string(&check).unwrap();
    let back: SystemCheck = serde_json::from_str(&text).unwrap();
    assert_eq!(back, check);
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["findings"][0]["level"], "ok");
    assert_eq!(json["facts"]["irqbalance_pids"][0], 812);
}

#[test]
fn a_check_recorded_before_compaction_was_read_loads_without_it() {
    let check = checked("vm-2cpu");
    assert_eq!(check.facts.compact_unevictable_allowed, Some(1));
    let mut json = serde_json::to_value(&check).unwrap();
    let facts = json["facts"].as_object_mut().unwrap();
    assert!(facts.remove("compact_unevictable_allowed").is_some());
    let older: SystemCheck = serde_json::from_value(json).unwrap();
    assert_eq!(older.facts.compact_unevictable_allowed, None);
}

#[test]
fn the_report_gives_verdicts_with_what_to_do_and_what_a_result_is_worth() {
    let name = "old-kernel-6cpu";
    let check = checked(name);
    let text = render::render(
        &check,
        &host_facts(&root(name)),
        &pre_6_7_matrix(),
        rtsoak_measure::transport::about,
    );
    assert!(
        text.contains(
            "warning  interrupts: RT CPUs 4-5 have irq 45 (eth0) in their affinity (0-5)\n"
        ),
        "{text}"
    );
    assert!(text.contains("do: move it with `echo 0-3 > /proc/irq/45/smp_affinity_list`"));
    assert!(
        text.lines()
            .any(|line| line.trim_start().starts_with("futex ")
                // The status column is as wide as its widest word (`not permitted`).
                && line.split_whitespace().collect::<Vec<_>>().join(" ")
                    .contains("UNSUPPORTED needs IORING_OP_FUTEX_WAIT")),
        "{text}"
    );
    assert!(
        text.contains("4*     yes    no       no        powersave"),
        "{text}"
    );
    assert!(
        text.contains("What a result measured here is worth:\n  - "),
        "{text}"
    );
    let vm = checked("vm-2cpu");
    let text = render::render(
        &vm,
        &host_facts(&root("vm-2cpu")),
        &matrix(Support::Supported),
        rtsoak_measure::transport::about,
    );
    assert!(text.contains("PROBLEM  kernel: 6.18.44-fc-v669"), "{text}");
}

// --- The board check, on a Jetson-like tree (tests/fixtures/sys/jetson-orin-nano): an Orin
// Nano on L4T R36.4.0 running NVIDIA's RT kernel from its `real-time` entry, CPUs 4-5
// isolated, whose update made the non-RT `primary` entry the DEFAULT again; the GPU's, host1x's
// and a USB controller's interrupts may land on CPUs 4-5 and the EtherCAT NIC's is pinned to
// CPU 4.

/// A copy of fixture `name` to change, as a board would be changed.
fn copied(name: &str) -> tempfile::TempDir {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                copy(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), target).unwrap();
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    copy(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/sys")
            .join(name),
        dir.path(),
    );
    dir
}

fn edit(dir: &Path, file: &str, from: &str, to: &str) {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{file} holds no {from:?}");
    std::fs::write(path, text.replace(from, to)).unwrap();
}

fn board_check(root: &SysRoot) -> Vec<BoardFinding> {
    let cpus = RtCpus {
        publisher: 4,
        subscriber: 5,
        noise: vec![0, 1, 2, 3],
    };
    check(root, &cpus, &root_user(), &matrix(Support::Supported))
        .board
        .expect("a Jetson gets a board check")
        .findings
}

fn probe_text(root: &SysRoot) -> String {
    let cpus = RtCpus {
        publisher: 4,
        subscriber: 5,
        noise: vec![0, 1, 2, 3],
    };
    let check = check(root, &cpus, &root_user(), &matrix(Support::Supported));
    render::render(
        &check,
        &host_facts(root),
        &matrix(Support::Supported),
        rtsoak_measure::transport::about,
    )
}

#[test]
fn a_jetson_is_named_by_its_device_tree_its_l4t_release_and_its_rt_kernel() {
    assert_eq!(
        host_facts(&root("jetson-orin-nano")).board,
        Some(BoardFacts {
            model: Some("NVIDIA Jetson Orin Nano Engineering Reference Developer Kit".into()),
            compatible: vec![
                "nvidia,p3768-0000+p3767-0005".into(),
                "nvidia,p3767-0005".into(),
                "nvidia,tegra234".into()
            ],
            l4t_release: Some("R36.4.0".into()),
            vendor_rt_kernel: Some(true),
        })
    );
    let text = probe_text(&root("jetson-orin-nano"));
    assert!(
        text.contains(
            "Board    NVIDIA Jetson Orin Nano Engineering Reference Developer Kit \
             (nvidia,tegra234), L4T R36.4.0, running NVIDIA's real-time kernel\n"
        ),
        "{text}"
    );
}

#[test]
fn only_a_jetson_gets_a_board_check() {
    for name in ["rt-board-6cpu", "vm-2cpu", "old-kernel-6cpu"] {
        assert_eq!(checked(name).board, None, "{name}");
    }
    // The rt board's device tree has a model and nothing else: named, not a Jetson.
    let board = host_facts(&root("rt-board-6cpu")).board.unwrap();
    assert_eq!(
        board.model.as_deref(),
        Some("NVIDIA Jetson Orin Nano Developer Kit")
    );
    assert!(!board.is_jetson());
    assert_eq!(host_facts(&root("vm-2cpu")).board, None);
}

#[test]
fn after_an_update_made_primary_the_default_the_check_says_which_line_to_change() {
    let root = root("jetson-orin-nano");
    let findings = board_check(&root);
    let boot: Vec<&BoardFinding> = findings
        .iter()
        .filter(|f| !matches!(f, BoardFinding::DeviceIrqOnRtCpus(_)))
        .collect();
    let base = "${cbootargs} root=/dev/nvme0n1p1 rw rootwait rootfstype=ext4 mminit_loglevel=4 \
                console=ttyTCU0,115200 firmware_class.path=/etc/firmware fbcon=map:0 \
                nospectre_bhb video=efifb:off console=tty0";
    assert_eq!(
        boot,
        [
            &BoardFinding::BootsOtherThanDefault {
                default_label: "primary".into(),
                running_label: Some("real-time".into()),
                running_release: Some("5.15.148-rt-tegra".into()),
                running_preempt_rt: true,
            },
            &BoardFinding::DefaultKernelNotRt {
                label: "primary".into(),
                release: "5.15.148-tegra".into(),
                rt_label: Some("real-time".into()),
                running_preempt_rt: true,
            },
            &BoardFinding::DefaultEntryLacks {
                label: "primary".into(),
                parameters: BootParameter::ALL.to_vec(),
                fixed_append: format!(
                    "{base} isolcpus=managed_irq,domain,4-5 nohz_full=4-5 rcu_nocbs=4-5 \
                     irqaffinity=0-3"
                ),
            },
        ]
    );
    assert!(boot.iter().all(|f| f.level() == Level::Warning));
    let text = probe_text(&root);
    for line in [
        "warning  boot: this boot is entry `real-time`, kernel 5.15.148-rt-tegra (PREEMPT_RT), but \
         DEFAULT is `primary`: the next reboot boots `primary`\n",
        "do: set `DEFAULT real-time` in /boot/extlinux/extlinux.conf, so the board keeps booting \
         this kernel\n",
        "warning  boot: the default entry `primary` boots 5.15.148-tegra, which is not PREEMPT_RT\n",
        "warning  isolation: the default entry `primary` leaves RT CPUs out of isolcpus, \
         nohz_full and rcu_nocbs: the next boot will not isolate them\n",
        "do: in /boot/extlinux/extlinux.conf, under `LABEL primary`, write `APPEND ${cbootargs} \
         root=/dev/nvme0n1p1",
    ] {
        assert!(text.contains(line), "{line}\n---\n{text}");
    }
}

#[test]
fn the_gpu_host1x_and_ethercat_interrupts_on_the_rt_cpus_are_named_with_the_echo_that_moves_them() {
    let root = root("jetson-orin-nano");
    let irqs: Vec<(u32, DeviceClass, u64)> = board_check(&root)
        .into_iter()
        .filter_map(|f| match f {
            BoardFinding::DeviceIrqOnRtCpus(irq) => {
                assert_eq!(irq.move_to, [0, 1, 2, 3]);
                Some((irq.irq, irq.device, irq.delivered_on_rt_cpus))
            }
            _ => None,
        })
        .collect();
    // arch_timer (13) is every CPU's own; host1x_general (62), mttcan (70) and NVMe (170) are
    // kept off CPUs 4-5 already.
    assert_eq!(
        irqs,
        [
            (56, DeviceClass::Gpu, 421),
            (57, DeviceClass::Gpu, 3),
            (61, DeviceClass::Host1x, 0),
            (160, DeviceClass::Ethernet, 88211),
            (180, DeviceClass::Usb, 0),
        ]
    );
    let text = probe_text(&root);
    for line in [
        "warning  GPU: irq 56 (ga10b_stall) may be delivered to RT CPUs (affinity 0-5); 421 \
         delivered there since boot\n",
        "do: `echo 0-3 > /proc/irq/56/smp_affinity_list` (not kept over a reboot: run it from a \
         systemd unit), and `irqaffinity=0-3` in the default entry's APPEND\n",
        "warning  host1x: irq 61 (host1x_syncpt)",
        "warning  Ethernet: irq 160 (enP1p1s0-TxRx-0) may be delivered to RT CPUs (affinity 4); \
         88211 delivered there since boot\n",
        "if a real-time application serves this bus, give its interrupt a CPU of its own outside \
         the RT pair",
        "warning  USB: irq 180 (xhci-hcd:usb1)",
    ] {
        assert!(text.contains(line), "{line}\n---\n{text}");
    }
    assert!(!text.contains("arch_timer) may be delivered"), "{text}");
}

#[test]
fn a_board_set_up_as_it_should_be_passes_the_board_check() {
    let board = copied("jetson-orin-nano");
    edit(
        board.path(),
        "boot/extlinux/extlinux.conf",
        "DEFAULT primary",
        "DEFAULT real-time",
    );
    for irq in [56, 57, 61, 160, 180] {
        std::fs::write(
            board
                .path()
                .join(format!("proc/irq/{irq}/smp_affinity_list")),
            "0-3\n",
        )
        .unwrap();
    }
    let findings = board_check(&SysRoot::at(board.path()));
    assert_eq!(
        findings,
        [
            BoardFinding::BootsDefault {
                label: "real-time".into()
            },
            BoardFinding::DefaultKernelRt {
                label: "real-time".into(),
                release: "5.15.148-rt-tegra".into()
            },
            BoardFinding::DefaultEntryIsolates {
                label: "real-time".into()
            },
            BoardFinding::NoDeviceIrqOnRtCpus { devices: 9 },
        ]
    );
    assert!(findings.iter().all(|f| f.level() == Level::Ok));
}

#[test]
fn a_board_that_booted_its_non_rt_kernel_is_a_problem_until_the_rt_entry_is_the_default() {
    let board = copied("jetson-orin-nano");
    let dir = board.path();
    edit(
        dir,
        "proc/sys/kernel/osrelease",
        "5.15.148-rt-tegra",
        "5.15.148-tegra",
    );
    edit(dir, "proc/sys/kernel/version", "PREEMPT_RT", "PREEMPT");
    std::fs::remove_file(dir.join("sys/kernel/realtime")).unwrap();
    edit(
        dir,
        "proc/cmdline",
        " isolcpus=managed_irq,domain,4-5 nohz_full=4-5 rcu_nocbs=4-5 irqaffinity=0-3",
        "",
    );
    let root = SysRoot::at(dir);
    assert_eq!(
        host_facts(&root).board.unwrap().vendor_rt_kernel,
        Some(false)
    );
    let findings = board_check(&root);
    assert_eq!(
        findings[..2],
        [
            BoardFinding::BootsDefault {
                label: "primary".into()
            },
            BoardFinding::DefaultKernelNotRt {
                label: "primary".into(),
                release: "5.15.148-tegra".into(),
                rt_label: Some("real-time".into()),
                running_preempt_rt: false,
            },
        ]
    );
    assert_eq!(findings[1].level(), Level::Problem);
    let text = probe_text(&root);
    assert!(
        text.contains(
            "PROBLEM  boot: the default entry `primary` boots 5.15.148-tegra, which is not \
             PREEMPT_RT\n           do: set `DEFAULT real-time` in /boot/extlinux/extlinux.conf \
             (entry `real-time` boots a PREEMPT_RT kernel)\n"
        ),
        "{text}"
    );
}

#[test]
fn a_jetson_without_a_boot_menu_is_told_that_the_next_kernel_cannot_be_checked() {
    let board = copied("jetson-orin-nano");
    std::fs::remove_file(board.path().join("boot/extlinux/extlinux.conf")).unwrap();
    let findings = board_check(&SysRoot::at(board.path()));
    assert_eq!(
        findings[0],
        BoardFinding::NoBootConfig {
            path: "/boot/extlinux/extlinux.conf".into()
        }
    );
    assert_eq!(findings[0].level(), Level::Warning);
}

#[test]
fn board_findings_are_typed_with_stable_snake_case_ids_in_the_json() {
    let check = check(
        &root("jetson-orin-nano"),
        &default_cpus("jetson-orin-nano"),
        &root_user(),
        &matrix(Support::Supported),
    );
    let json = serde_json::to_value(&check).unwrap();
    let ids: Vec<&str> = json["board"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "boots_other_than_default",
            "default_kernel_not_rt",
            "default_entry_lacks",
            "device_irq_on_rt_cpus",
            "device_irq_on_rt_cpus",
            "device_irq_on_rt_cpus",
            "device_irq_on_rt_cpus",
            "device_irq_on_rt_cpus",
        ]
    );
    let gpu = &json["board"]["findings"][3];
    assert_eq!(gpu["device"], "gpu");
    assert_eq!(gpu["irq"], 56);
    assert_eq!(json["board"]["findings"][2]["parameters"][1], "nohz_full");
    // Read back as written: a result keeps its board check.
    let back: SystemCheck = serde_json::from_value(json).unwrap();
    assert_eq!(back, check);
}

/// A Jetson's `host.board` and `system_check.board` are what docs/result.schema.json says, and
/// a finding carries facts, never its words. (Here, not in tests/result_json_schema.rs: reading
/// a fixture tree is this crate's own.)
#[test]
fn a_jetsons_board_and_its_board_check_match_the_schema() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |path: &str| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(manifest.join(path)).unwrap()).unwrap()
    };
    let validator = jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(&read("docs/result.schema.json"))
        .expect("docs/result.schema.json compiles");
    let errors = |doc: &serde_json::Value| -> Vec<String> {
        validator
            .iter_errors(doc)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect()
    };
    let board = root("jetson-orin-nano");
    let check = check(
        &board,
        &RtCpus {
            publisher: 4,
            subscriber: 5,
            noise: vec![0, 1, 2, 3],
        },
        &root_user(),
        &matrix(Support::Supported),
    );
    assert!(check.board.is_some(), "the fixture is a Jetson");
    let mut doc = read("tests/fixtures/results/compare-vm-2cpu.json");
    assert_eq!(doc["schema_version"], 2);
    doc["host"] = serde_json::to_value(host_facts(&board)).unwrap();
    doc["system_check"] = serde_json::to_value(&check).unwrap();
    assert!(doc["host"]["board"]["l4t_release"].is_string());
    assert_eq!(errors(&doc), Vec::<String>::new(), "a Jetson's result");
    doc["system_check"]["board"]["findings"][0]["text"] =
        serde_json::json!("the next reboot boots primary");
    assert!(!errors(&doc).is_empty(), "a finding's text is no key");
}
