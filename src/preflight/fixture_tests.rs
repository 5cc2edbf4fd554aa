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
use rtsoak_record::Level;
use rtsoak_record::Support;
use rtsoak_record::TransportSupport;

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
    let found: Vec<_> = check.by_id(id).collect();
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
    let not_ok: Vec<&str> = check
        .findings
        .iter()
        .filter(|f| f.level != Level::Ok)
        .map(|f| f.id.as_str())
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
