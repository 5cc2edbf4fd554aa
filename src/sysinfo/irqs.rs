//! Interrupts: which CPUs each numbered interrupt may be delivered to
//! (`/proc/irq/N/smp_affinity_list`) and what it is called (`/proc/interrupts`).
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
    fn an_interrupt_without_a_handler_has_no_name() {
        let names = irq_names("     CPU0\n  7:  0  IO-APIC  7-edge\n");
        assert_eq!(names.get(&7), None);
    }
}
