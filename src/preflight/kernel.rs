//! Kernel-wide checks: PREEMPT_RT, io_uring allowed, RT throttling, timer migration, compaction
//! of locked pages, clock source.

use super::inputs::Inputs;

use rtsoak_record::{CheckId, Finding, Level};

/// Clock sources that make every timestamp a slow device read (microseconds, not nanoseconds).
const SLOW_CLOCKSOURCES: [&str; 5] = ["hpet", "acpi_pm", "jiffies", "refined-jiffies", "pit"];

pub(super) fn findings(inputs: &Inputs) -> Vec<Finding> {
    vec![
        preempt_rt(inputs),
        io_uring(inputs),
        rt_throttling(inputs),
        timer_migration(inputs),
        compaction(inputs),
        clocksource(inputs),
    ]
}

fn preempt_rt(inputs: &Inputs) -> Finding {
    let host = inputs.host;
    let release = host.kernel_release.as_deref().unwrap_or("release unknown");
    if host.preempt_rt {
        return Finding::ok(
            CheckId::KernelPreemptRt,
            "kernel",
            format!("{release} is PREEMPT_RT ({})", host.preempt_rt_source),
        );
    }
    Finding::bad(
        CheckId::KernelPreemptRt,
        Level::Problem,
        "kernel",
        format!(
            "{release} ({}) is not PREEMPT_RT: {}",
            host.kernel_version.as_deref().unwrap_or("version unknown"),
            host.preempt_rt_source
        ),
        "boot a PREEMPT_RT kernel (Debian: `apt install linux-image-rt-amd64` or \
         `linux-image-rt-arm64`; or build with CONFIG_PREEMPT_RT=y)",
        Some(format!(
            "not a PREEMPT_RT kernel ({release}): the figures show this kernel's latencies, \
             not an RT kernel's"
        )),
    )
}

fn io_uring(inputs: &Inputs) -> Finding {
    let id = CheckId::KernelIoUring;
    match inputs.host.io_uring_disabled {
        None | Some(0) => Finding::ok(
            id,
            "io_uring",
            "allowed (kernel.io_uring_disabled is 0 or absent)",
        ),
        Some(1) => Finding::bad(
            id,
            Level::Warning,
            "io_uring",
            "kernel.io_uring_disabled is 1: only root and members of kernel.io_uring_group may \
             create rings",
            "run as root, join the group in kernel.io_uring_group, or \
             `sysctl kernel.io_uring_disabled=0`",
            None,
        ),
        Some(value) => Finding::bad(
            id,
            Level::Problem,
            "io_uring",
            format!("kernel.io_uring_disabled is {value}: nobody may create an io_uring"),
            "`sysctl kernel.io_uring_disabled=0` (every transport waits in an io_uring)",
            Some("io_uring is disabled: no transport can run".to_string()),
        ),
    }
}

fn rt_throttling(inputs: &Inputs) -> Finding {
    let id = CheckId::SchedRtThrottling;
    let host = inputs.host;
    match (host.sched_rt_runtime_us, host.sched_rt_period_us) {
        (Some(-1), _) => Finding::ok(id, "RT throttling", "off (sched_rt_runtime_us is -1)"),
        (Some(runtime_us), period_us) => {
            let period_us = period_us.unwrap_or(1_000_000);
            Finding::bad(
                id,
                Level::Warning,
                "RT throttling",
                format!(
                    "on: real-time tasks may run {runtime_us} us of every {period_us} us \
                     (sched_rt_runtime_us / sched_rt_period_us); busy SCHED_FIFO work is stopped \
                     for the rest"
                ),
                format!(
                    "for the test only: `echo -1 > /proc/sys/kernel/sched_rt_runtime_us` (this \
                     removes the safety net against a runaway real-time task; restore it with \
                     `echo {runtime_us} > /proc/sys/kernel/sched_rt_runtime_us`)"
                ),
                Some(format!(
                    "RT throttling on ({runtime_us} of {period_us} us): busy real-time noise \
                     is throttled, not run to completion"
                )),
            )
        }
        (None, _) => Finding::ok(
            id,
            "RT throttling",
            "unknown (/proc/sys/kernel/sched_rt_runtime_us is not readable)",
        ),
    }
}

fn timer_migration(inputs: &Inputs) -> Finding {
    let id = CheckId::TimerMigration;
    match inputs.facts.timer_migration {
        Some(0) => Finding::ok(id, "timer migration", "off (kernel.timer_migration is 0)"),
        Some(value) => Finding::bad(
            id,
            Level::Warning,
            "timer migration",
            format!(
                "kernel.timer_migration is {value}: timers of other CPUs may be moved onto the \
                 RT CPUs"
            ),
            "`echo 0 > /proc/sys/kernel/timer_migration`",
            Some("timer migration on: other CPUs' timers may fire on the RT CPUs".to_string()),
        ),
        None => Finding::ok(
            id,
            "timer migration",
            "not available in this kernel (no /proc/sys/kernel/timer_migration)",
        ),
    }
}

/// Whether memory compaction may move the RT workers' locked pages. A warning, not a problem:
/// the figures stay real-time figures, but the workers' promise of no page fault in the loop is
/// weakened (a moved page faults once on its next access, which `hygiene.minor_faults` counts),
/// and how often depends on what fragments memory beside the run, not on the transport.
fn compaction(inputs: &Inputs) -> Finding {
    let id = CheckId::VmCompactUnevictable;
    let subject = "memory compaction";
    match inputs.facts.compact_unevictable_allowed {
        Some(0) => Finding::ok(
            id,
            subject,
            "leaves locked pages where they are (vm.compact_unevictable_allowed is 0)",
        ),
        Some(value) => Finding::bad(
            id,
            Level::Warning,
            subject,
            format!(
                "vm.compact_unevictable_allowed is {value}: compaction may move the RT workers' \
                 locked pages, and each page moved costs a minor page fault on its next access, \
                 the fault they lock their memory to avoid"
            ),
            "`sysctl vm.compact_unevictable_allowed=0` (the PREEMPT_RT default), and \
             `vm.compact_unevictable_allowed = 0` in a file in /etc/sysctl.d/ to keep it over a \
             reboot",
            Some(
                "compaction of locked pages on: the RT workers can take minor page faults on \
                 memory they locked"
                    .to_string(),
            ),
        ),
        None => Finding::ok(
            id,
            subject,
            "not in this kernel (no /proc/sys/vm/compact_unevictable_allowed): no compaction \
             moves locked pages",
        ),
    }
}

fn clocksource(inputs: &Inputs) -> Finding {
    let id = CheckId::ClockSource;
    match inputs.host.clocksource.as_deref() {
        Some(source) if SLOW_CLOCKSOURCES.contains(&source) => Finding::bad(
            id,
            Level::Warning,
            "clock source",
            format!(
                "{source}: reading the clock is a slow device access, which every timestamp pays"
            ),
            "see /sys/devices/system/clocksource/clocksource0/available_clocksource; if the \
             TSC was marked unstable, find out why (or boot with `tsc=reliable` if you know it \
             is stable)",
            Some(format!(
                "slow clock source {source}: every timestamp costs microseconds"
            )),
        ),
        Some(source) => Finding::ok(id, "clock source", source.to_string()),
        None => Finding::ok(
            id,
            "clock source",
            "unknown (current_clocksource is not readable)",
        ),
    }
}
