//! Isolation of the RT CPUs: isolated from the scheduler, tick and RCU callbacks moved off,
//! no noise placed on them, no interrupts or other tasks allowed on them, no irqbalance to undo
//! it.

use super::inputs::{Inputs, cpus_named};

use rtsoak_record::Task;
use rtsoak_record::cpulist;
use rtsoak_record::{CheckId, Finding, Level};

/// Names listed in a task finding before "and N more".
const NAMES_SHOWN: usize = 6;

pub(super) fn findings(inputs: &Inputs) -> Vec<Finding> {
    let mut findings = vec![
        isolated(inputs),
        nohz_full(inputs),
        rcu_nocbs(inputs),
        noise_placement(inputs),
    ];
    findings.extend(interrupts(inputs));
    findings.push(irqbalance(inputs));
    findings.push(user_tasks(inputs));
    findings.push(kernel_threads(inputs));
    findings
}

/// The RT CPUs that are not in `list`.
fn missing_from(inputs: &Inputs, list: &[usize]) -> Vec<usize> {
    inputs
        .cpus
        .pair()
        .into_iter()
        .filter(|cpu| !list.contains(cpu))
        .collect()
}

/// The CPUs of `list` that are RT CPUs.
fn rt_cpus_in(inputs: &Inputs, list: &[usize]) -> Vec<usize> {
    let pair = inputs.cpus.pair();
    list.iter()
        .copied()
        .filter(|cpu| pair.contains(cpu))
        .collect()
}

/// The boot parameters that isolate the RT pair, for remedies.
fn isolation_cmdline(inputs: &Inputs) -> String {
    let pair = cpulist::format(&inputs.cpus.pair());
    let housekeeping = inputs.housekeeping();
    let irqaffinity = if housekeeping.is_empty() {
        String::new()
    } else {
        format!(" irqaffinity={}", cpulist::format(&housekeeping))
    };
    format!("isolcpus=managed_irq,domain,{pair} nohz_full={pair} rcu_nocbs={pair}{irqaffinity}")
}

fn isolated(inputs: &Inputs) -> Finding {
    let id = CheckId::CpusIsolated;
    let host = inputs.host;
    let missing = missing_from(inputs, &host.isolated);
    let pair = cpus_named(&inputs.cpus.pair());
    if missing.is_empty() {
        return Finding::ok(
            id,
            "isolation",
            format!(
                "RT {pair} isolated (isolated: {})",
                cpulist::format(&host.isolated)
            ),
        );
    }
    let detail = if host.isolated.is_empty() {
        format!("no CPU is isolated, so the scheduler balances other tasks onto RT {pair}")
    } else {
        format!(
            "RT {} not isolated; isolated: {}",
            cpus_named(&missing),
            cpulist::format(&host.isolated)
        )
    };
    let mut remedy = format!("boot with `{}`", isolation_cmdline(inputs));
    if host.isolated.len() >= 2 {
        remedy.push_str(&format!(
            ", or choose RT CPUs among the isolated ones (`--rt-cpus {}`)",
            cpulist::format(&host.isolated[host.isolated.len() - 2..])
        ));
    }
    Finding::bad(
        id,
        Level::Warning,
        "isolation",
        detail,
        remedy,
        Some(format!(
            "RT {} not isolated (isolcpus=/nohz_full=): other tasks and interrupts may run there",
            cpus_named(&missing)
        )),
    )
}

fn nohz_full(inputs: &Inputs) -> Finding {
    let id = CheckId::CpusNohzFull;
    let missing = missing_from(inputs, &inputs.host.nohz_full);
    if missing.is_empty() {
        return Finding::ok(
            id,
            "tick",
            format!(
                "RT {} are nohz_full: no scheduler tick while one task runs",
                cpus_named(&inputs.cpus.pair())
            ),
        );
    }
    Finding::bad(
        id,
        Level::Warning,
        "tick",
        format!(
            "RT {} not nohz_full (nohz_full: {}): the scheduler tick interrupts them",
            cpus_named(&missing),
            none_if_empty(&inputs.host.nohz_full)
        ),
        format!(
            "boot with `nohz_full={}`",
            cpulist::format(&inputs.cpus.pair())
        ),
        Some("the scheduler tick still runs on the RT CPUs (no nohz_full=)".to_string()),
    )
}

fn rcu_nocbs(inputs: &Inputs) -> Finding {
    let id = CheckId::CpusRcuNocbs;
    let boot = inputs.host.boot_isolation.rcu_nocbs.as_deref();
    let offloaded: Vec<usize> = match boot {
        Some("all") => inputs.host.online.clone(),
        Some(list) => cpulist::parse_or_empty(list).unwrap_or_default(),
        None => Vec::new(),
    };
    // nohz_full CPUs have their callbacks offloaded whether or not rcu_nocbs= says so.
    let covered: Vec<usize> = offloaded
        .iter()
        .chain(&inputs.host.nohz_full)
        .copied()
        .collect();
    let missing = missing_from(inputs, &covered);
    if missing.is_empty() {
        return Finding::ok(
            id,
            "RCU callbacks",
            format!(
                "offloaded from RT {} (rcu_nocbs={}, nohz_full={})",
                cpus_named(&inputs.cpus.pair()),
                boot.unwrap_or("none"),
                none_if_empty(&inputs.host.nohz_full)
            ),
        );
    }
    Finding::bad(
        id,
        Level::Warning,
        "RCU callbacks",
        format!(
            "run on RT {} (rcu_nocbs={})",
            cpus_named(&missing),
            boot.unwrap_or("not given")
        ),
        format!(
            "boot with `rcu_nocbs={}`",
            cpulist::format(&inputs.cpus.pair())
        ),
        Some("RCU callbacks run on the RT CPUs (no rcu_nocbs=)".to_string()),
    )
}

fn noise_placement(inputs: &Inputs) -> Finding {
    let id = CheckId::LayoutNoiseSharesRtCpu;
    let shared = rt_cpus_in(inputs, &inputs.cpus.noise);
    if shared.is_empty() {
        return Finding::ok(
            id,
            "noise placement",
            format!(
                "noise and the coordinator on CPUs {}, apart from the RT pair",
                cpulist::format(&inputs.cpus.noise)
            ),
        );
    }
    Finding::bad(
        id,
        Level::Warning,
        "noise placement",
        format!(
            "noise and the coordinator share {} with the RT pair (noise CPUs {})",
            cpus_named(&shared),
            cpulist::format(&inputs.cpus.noise)
        ),
        if inputs.host.online.len() > 2 {
            "give noise CPUs outside the RT pair (`--noise-cpus`, `cpus.noise`)"
        } else {
            "use a machine with more than two CPUs to keep noise off the RT pair"
        },
        Some(format!(
            "noise shares {} with the RT pair: latencies include that interference",
            cpus_named(&shared)
        )),
    )
}

fn interrupts(inputs: &Inputs) -> Vec<Finding> {
    let id = CheckId::IrqAffinity;
    let pair = inputs.cpus.pair();
    if inputs.facts.irqs_on_rt_cpus.is_empty() {
        return vec![Finding::ok(
            id,
            "interrupts",
            format!(
                "no numbered interrupt may be delivered to RT {}",
                cpus_named(&pair)
            ),
        )];
    }
    let housekeeping = inputs.housekeeping();
    inputs
        .facts
        .irqs_on_rt_cpus
        .iter()
        .map(|irq| {
            let on_rt = rt_cpus_in(inputs, &irq.affinity);
            let label = match &irq.name {
                Some(name) => format!("irq {} ({name})", irq.irq),
                None => format!("irq {}", irq.irq),
            };
            let remedy = if housekeeping.is_empty() {
                "no CPU outside the RT pair to move it to: use a machine with more CPUs".to_string()
            } else {
                let hk = cpulist::format(&housekeeping);
                format!(
                    "move it with `echo {hk} > /proc/irq/{}/smp_affinity_list` (or boot with \
                     `irqaffinity={hk}`)",
                    irq.irq
                )
            };
            Finding::bad(
                id.clone(),
                Level::Warning,
                "interrupts",
                format!(
                    "RT {} {} {label} in {} affinity ({})",
                    cpus_named(&on_rt),
                    if on_rt.len() == 1 { "has" } else { "have" },
                    if on_rt.len() == 1 { "its" } else { "their" },
                    cpulist::format(&irq.affinity)
                ),
                remedy,
                Some("interrupts may be delivered to the RT CPUs".to_string()),
            )
        })
        .collect()
}

fn irqbalance(inputs: &Inputs) -> Finding {
    let id = CheckId::IrqIrqbalance;
    let pids = &inputs.facts.irqbalance_pids;
    if pids.is_empty() {
        return Finding::ok(id, "irqbalance", "not running");
    }
    let pair = cpulist::format(&inputs.cpus.pair());
    Finding::bad(
        id,
        Level::Warning,
        "irqbalance",
        format!(
            "running (pid {}): it moves interrupts around, onto the RT CPUs too, and undoes \
             affinities set by hand",
            join(pids.iter().map(|p| p.to_string()))
        ),
        format!(
            "stop it (`systemctl stop irqbalance`), or keep it off the RT CPUs with \
             `IRQBALANCE_BANNED_CPULIST={pair}` in its environment file"
        ),
        Some("irqbalance runs and may move interrupts onto the RT CPUs".to_string()),
    )
}

fn user_tasks(inputs: &Inputs) -> Finding {
    let id = CheckId::TasksUser;
    let pair = inputs.cpus.pair();
    let tasks: Vec<&Task> = inputs
        .facts
        .tasks_on_rt_cpus
        .iter()
        .filter(|t| !t.kernel_thread)
        .collect();
    if tasks.is_empty() {
        return Finding::ok(
            id,
            "other processes",
            format!("none may run on RT {}", cpus_named(&pair)),
        );
    }
    let mut processes: Vec<(i32, &str)> = tasks.iter().map(|t| (t.pid, t.comm.as_str())).collect();
    processes.dedup_by_key(|(pid, _)| *pid);
    let housekeeping = cpulist::format(&inputs.housekeeping());
    Finding::bad(
        id,
        Level::Warning,
        "other processes",
        format!(
            "{} processes ({} threads) may run on RT {}: {}",
            processes.len(),
            tasks.len(),
            cpus_named(&pair),
            named_list(
                processes
                    .iter()
                    .map(|(pid, comm)| format!("{comm} ({pid})"))
            )
        ),
        if housekeeping.is_empty() {
            "use a machine with CPUs to spare for everything else".to_string()
        } else {
            format!(
                "boot with `isolcpus=domain,{}` so tasks stay off them, or move each with \
                 `taskset -apc {housekeeping} PID`",
                cpulist::format(&pair)
            )
        },
        Some("other processes may run on the RT CPUs".to_string()),
    )
}

fn kernel_threads(inputs: &Inputs) -> Finding {
    let id = CheckId::TasksKernel;
    let pair = inputs.cpus.pair();
    let (per_cpu, unbound): (Vec<&Task>, Vec<&Task>) = inputs
        .facts
        .tasks_on_rt_cpus
        .iter()
        .filter(|t| t.kernel_thread)
        .partition(|t| t.is_per_cpu_kernel_thread());
    let bound_note = format!(
        "{} per-CPU kernel threads are bound there, as on every CPU",
        per_cpu.len()
    );
    if unbound.is_empty() {
        return Finding::ok(
            id,
            "kernel threads",
            format!(
                "no unbound kernel thread may run on RT {}; {bound_note}",
                cpus_named(&pair)
            ),
        );
    }
    Finding::bad(
        id,
        Level::Warning,
        "kernel threads",
        format!(
            "{} unbound kernel threads may run on RT {}: {}; {bound_note}",
            unbound.len(),
            cpus_named(&pair),
            named_list(unbound.iter().map(|t| format!("{} ({})", t.comm, t.tid)))
        ),
        format!(
            "boot with `{}`; unbound workqueues follow /sys/devices/virtual/workqueue/cpumask",
            isolation_cmdline(inputs)
        ),
        Some("unbound kernel threads may run on the RT CPUs".to_string()),
    )
}

/// The first [`NAMES_SHOWN`] names, then "and N more".
fn named_list(names: impl Iterator<Item = String>) -> String {
    let names: Vec<String> = names.collect();
    let shown = join(names.iter().take(NAMES_SHOWN).cloned());
    match names.len().saturating_sub(NAMES_SHOWN) {
        0 => shown,
        more => format!("{shown} and {more} more"),
    }
}

fn join(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(", ")
}

fn none_if_empty(cpus: &[usize]) -> String {
    if cpus.is_empty() {
        "none".to_string()
    } else {
        cpulist::format(cpus)
    }
}
