//! Interrupts: which CPUs each numbered interrupt may be delivered to
//! (`/proc/irq/N/smp_affinity_list`), what it is called (`/proc/interrupts`, or the handler
//! directories of `/proc/irq/N/`) and how many each CPU took (`/proc/interrupts`).
//!
//! Owns: reading and parsing these files. Never judges whether an interrupt belongs on a CPU,
//! and never writes an affinity: moving interrupts is the user's decision.

use std::collections::BTreeMap;

use super::SysRoot;
use rtsoak_record::Irq;
use rtsoak_record::cpulist;

/// Every numbered interrupt whose `smp_affinity_list` includes one of `cpus`, by number.
pub(crate) fn irqs_allowed_on(root: &SysRoot, cpus: &[usize]) -> Vec<Irq> {
    let names = irq_names(&root.read("/proc/interrupts").unwrap_or_default());
    let mut irqs: Vec<Irq> = root
        .list_dir("/proc/irq")
        .iter()
        .filter_map(|entry| entry.parse::<u32>().ok())
        .filter_map(|irq| {
            let text = root.read_trimmed(&format!("/proc/irq/{irq}/smp_affinity_list"))?;
            let affinity = cpulist::parse_or_empty(&text).ok()?;
            Some(Irq {
                irq,
                name: names.get(&irq).cloned(),
                affinity,
            })
        })
        .filter(|irq| irq.affinity.iter().any(|cpu| cpus.contains(cpu)))
        .collect();
    irqs.sort_by_key(|irq| irq.irq);
    irqs
}

/// Handler names by interrupt number from `/proc/interrupts` text. A line is `N:`, one count
/// per CPU column of the header, the chip, the hardware irq and trigger, then the handler
/// names separated by `, `: the name is the last word together with any words before it that
/// end in a comma.
pub(crate) fn irq_names(interrupts: &str) -> BTreeMap<u32, String> {
    let mut lines = interrupts.lines();
    let cpu_columns = lines
        .next()
        .map_or(0, |header| header.split_whitespace().count());
    lines
        .filter_map(|line| {
            let (number, rest) = line.trim_start().split_once(':')?;
            let irq: u32 = number.parse().ok()?;
            let words: Vec<&str> = rest.split_whitespace().skip(cpu_columns).collect();
            let last = words.len().checked_sub(1)?;
            let first = (0..last)
                .rev()
                .take_while(|&i| words[i].ends_with(','))
                .last()
                .unwrap_or(last);
            // Chip and hardware irq come first; a line with nothing after them has no name.
            let name = rtsoak_record::text::visible(&words[first..].join(" ")).into_owned();
            (words.len() > 2 || first < last).then_some((irq, name))
        })
        .collect()
}

/// How many of each numbered interrupt the CPUs `cpus` took since boot, from
/// `/proc/interrupts` text: its header names each count column's CPU (`CPU0 CPU1 ...`;
/// offline CPUs have no column).
pub(crate) fn delivered_on(interrupts: &str, cpus: &[usize]) -> BTreeMap<u32, u64> {
    let mut lines = interrupts.lines();
    let columns: Vec<Option<usize>> = lines.next().map_or_else(Vec::new, |header| {
        header
            .split_whitespace()
            .map(|name| name.strip_prefix("CPU")?.parse().ok())
            .collect()
    });
    lines
        .filter_map(|line| {
            let (number, rest) = line.trim_start().split_once(':')?;
            let irq: u32 = number.parse().ok()?;
            let total = rest
                .split_whitespace()
                .zip(&columns)
                .filter(|(_, cpu)| cpu.is_some_and(|cpu| cpus.contains(&cpu)))
                .filter_map(|(count, _)| count.parse::<u64>().ok())
                .sum();
            Some((irq, total))
        })
        .collect()
}

/// The handlers of interrupt `irq` as `/proc/irq/N/` lists them: one directory per handler
/// that registered a name (`eth0`, `host1x_syncpt`), beside the files every interrupt has.
pub(crate) fn handler_dirs(root: &SysRoot, irq: u32) -> Vec<String> {
    const FILES: [&str; 7] = [
        "affinity_hint",
        "effective_affinity",
        "effective_affinity_list",
        "node",
        "smp_affinity",
        "smp_affinity_list",
        "spurious",
    ];
    root.list_dir(&format!("/proc/irq/{irq}"))
        .into_iter()
        .filter(|name| !FILES.contains(&name.as_str()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_after_the_counts_chip_and_hardware_irq() {
        let text = "           CPU0       CPU1\n\
                    \x20 26:          0         13  IO-APIC   4-edge      ttyS0\n\
                    \x20 45:        100          0  PCI-MSI 524288-edge      eth0\n\
                    \x20  1:          9          0  IO-APIC   1-edge      i8042, serial\n\
                    \x20 27:         10         20  GICv3  27 Level     arch_timer\n\
                    LOC:     535592      78966   Local timer interrupts\n";
        let names = irq_names(text);
        assert_eq!(names.get(&26).map(String::as_str), Some("ttyS0"));
        assert_eq!(names.get(&45).map(String::as_str), Some("eth0"));
        assert_eq!(names.get(&1).map(String::as_str), Some("i8042, serial"));
        assert_eq!(names.get(&27).map(String::as_str), Some("arch_timer"));
        assert_eq!(names.len(), 4, "LOC is not a numbered interrupt");
    }

    #[test]
    fn deliveries_are_added_over_the_columns_of_the_cpus_asked_about() {
        let text = "           CPU0       CPU2       CPU3\n\
                    \x20 62:         10         20         30     GICv3 102 Level     ga10b\n\
                    \x20 63:          1          0          0     GICv3 103 Level\n\
                    IPI0:      99      99      99       Rescheduling interrupts\n";
        let delivered = delivered_on(text, &[2, 3]);
        assert_eq!(delivered.get(&62), Some(&50), "CPU 1 is offline: no column");
        assert_eq!(delivered.get(&63), Some(&0));
        assert_eq!(delivered.len(), 2, "IPI0 is not a numbered interrupt");
    }

    #[test]
    fn an_interrupt_without_a_handler_has_no_name() {
        let names = irq_names("     CPU0\n  7:  0  IO-APIC  7-edge\n");
        assert_eq!(names.get(&7), None);
    }
}
