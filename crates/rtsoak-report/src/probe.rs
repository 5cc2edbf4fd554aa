//! The text `rtsoak probe` prints: the machine in brief, a per-CPU table, one verdict line per
//! finding with what to do, the transport matrix and the "what a result is worth" summary.
//! Pure: a function from the check to a string.

use std::fmt::Write;

use rtsoak_record::cpulist;
use rtsoak_record::{BoardFinding, CheckId, HostFacts, Level, SystemCheck};
use rtsoak_record::{Support, TransportSupport};

/// The whole report; `about` says what a supported transport is, by name (the caller asks the
/// transport registry, which an export never imports).
pub fn render(
    check: &SystemCheck,
    host: &HostFacts,
    support: &[TransportSupport],
    about: impl Fn(&str) -> &'static str,
) -> String {
    let mut out = String::new();
    header(&mut out, check, host);
    cpu_table(&mut out, check, host);
    verdicts(&mut out, check);
    board(&mut out, check, host);
    matrix(&mut out, support, about);
    worth(&mut out, check);
    out
}

fn header(out: &mut String, check: &SystemCheck, host: &HostFacts) {
    let _ = writeln!(
        out,
        "host     {} ({}), {} CPUs online, {}",
        host.hostname.as_deref().unwrap_or("unknown"),
        host.arch,
        host.online.len(),
        host.cpu_model.as_deref().unwrap_or("CPU model unknown"),
    );
    let _ = writeln!(
        out,
        "kernel   {} {}",
        host.kernel_release.as_deref().unwrap_or("unknown"),
        host.kernel_version.as_deref().unwrap_or("")
    );
    let boot = &host.boot_isolation;
    let _ = writeln!(
        out,
        "boot     isolcpus={} nohz_full={} rcu_nocbs={} irqaffinity={}",
        boot.isolcpus.as_deref().unwrap_or("-"),
        boot.nohz_full.as_deref().unwrap_or("-"),
        boot.rcu_nocbs.as_deref().unwrap_or("-"),
        boot.irqaffinity.as_deref().unwrap_or("-"),
    );
    let _ = writeln!(
        out,
        "RT pair  publisher CPU {}, subscriber CPU {}; noise and coordinator on CPUs {}\n",
        check.cpus.publisher,
        check.cpus.subscriber,
        cpulist::format(&check.cpus.noise)
    );
}

fn yes(flag: bool) -> &'static str {
    if flag { "yes" } else { "no" }
}

fn cpu_table(out: &mut String, check: &SystemCheck, host: &HostFacts) {
    let pair = check.cpus.pair();
    let _ = writeln!(
        out,
        "{:<6} {:<6} {:<8} {:<9} {:<12} {:<10} idle states",
        "CPU", "online", "isolated", "nohz_full", "governor", "SMT with"
    );
    for cpu in &host.cpus {
        let role = if pair.contains(&cpu.cpu) { "*" } else { "" };
        let siblings = if cpu.smt_siblings.is_empty() {
            "-".to_string()
        } else {
            cpulist::format(&cpu.smt_siblings)
        };
        let idle = if cpu.idle_states.is_empty() {
            "-".to_string()
        } else {
            cpu.idle_states.join(", ")
        };
        let _ = writeln!(
            out,
            "{:<6} {:<6} {:<8} {:<9} {:<12} {:<10} {idle}",
            format!("{}{role}", cpu.cpu),
            yes(cpu.online),
            yes(host.isolated.contains(&cpu.cpu)),
            yes(host.nohz_full.contains(&cpu.cpu)),
            cpu.governor.as_deref().unwrap_or("no cpufreq"),
            siblings,
        );
    }
    let _ = writeln!(out, "(* = RT CPU)\n");
}

/// Findings of one id shown before the rest are summed up (a VM has dozens of interrupts).
const SAME_ID_SHOWN: usize = 5;

fn verdicts(out: &mut String, check: &SystemCheck) {
    let mut shown: Vec<(&CheckId, usize)> = Vec::new();
    // Transports have their own table below.
    for finding in check.findings.iter().filter(|f| !f.id.is_transport()) {
        let total = check.by_id(&finding.id).count();
        let seen = match shown.iter_mut().find(|(id, _)| **id == finding.id) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                shown.push((&finding.id, 1));
                1
            }
        };
        if seen > SAME_ID_SHOWN {
            if seen == total {
                let _ = writeln!(
                    out,
                    "{:<8} ... and {} more like these ({}; `rtsoak probe --json` lists them all)",
                    finding.level.label(),
                    total - SAME_ID_SHOWN,
                    finding.id
                );
            }
            continue;
        }
        // A passed check's remedy is not shown: there is nothing to do.
        let remedy = finding
            .remedy
            .as_deref()
            .filter(|_| finding.level != Level::Ok);
        finding_lines(
            out,
            finding.level,
            &finding.subject,
            &finding.detail,
            remedy,
        );
    }
    out.push('\n');
}

/// A finding as the probe shows it: `warning  subject: detail`, and its remedy under it.
fn finding_lines(
    out: &mut String,
    level: Level,
    subject: &str,
    detail: &str,
    remedy: Option<&str>,
) {
    let _ = writeln!(out, "{:<8} {subject}: {detail}", level.label());
    if let Some(remedy) = remedy {
        let _ = writeln!(out, "{:<8}   do: {remedy}", "");
    }
}

/// Device interrupts of the less telling kinds (storage, USB, PCIe, other) shown before the
/// rest are counted; the GPU's, host1x's, Ethernet's and CAN's are all shown.
const OTHER_DEVICES_SHOWN: usize = 3;

/// The board check, on a Jetson: its identity, then one line per finding with what to do.
fn board(out: &mut String, check: &SystemCheck, host: &HostFacts) {
    let Some(board) = &check.board else {
        return;
    };
    let identity = host.board.as_ref().map(super::board::identity);
    let _ = writeln!(out, "Board    {}", identity.unwrap_or_default());
    let conf = board
        .boot
        .as_ref()
        .map_or("extlinux.conf", |b| b.path.as_str());
    let mut others = 0;
    for (finding, line) in board
        .findings
        .iter()
        .zip(super::board::worded(&board.findings, conf))
    {
        if let BoardFinding::DeviceIrqOnRtCpus(irq) = finding
            && !irq.device.is_named_unit()
        {
            others += 1;
            if others > OTHER_DEVICES_SHOWN {
                continue;
            }
        }
        let remedy = line.remedy.as_deref();
        finding_lines(out, line.level, &line.subject, &line.detail, remedy);
    }
    if others > OTHER_DEVICES_SHOWN {
        let _ = writeln!(
            out,
            "{:<8} ... and {} more device interrupts on the RT CPUs (`rtsoak probe --json` lists \
             them all)",
            Level::Warning.label(),
            others - OTHER_DEVICES_SHOWN
        );
    }
    out.push('\n');
}

fn matrix(out: &mut String, support: &[TransportSupport], about: impl Fn(&str) -> &'static str) {
    let _ = writeln!(out, "Transports");
    let width = support.iter().map(|s| s.transport.len()).max().unwrap_or(0);
    for entry in support {
        let (state, text) = if entry.support.is_supported() {
            ("supported", about(&entry.transport).to_string())
        } else if let Support::NotPermitted { .. } = entry.support {
            ("NOT PERMITTED", entry.support.reason())
        } else {
            ("UNSUPPORTED", entry.support.reason())
        };
        let _ = writeln!(out, "  {:<width$}  {state:<13}  {text}", entry.transport);
    }
    out.push('\n');
}

fn worth(out: &mut String, check: &SystemCheck) {
    if check.worth.is_empty() {
        let _ = writeln!(
            out,
            "What a result measured here is worth: nothing to add, this machine is set up for \
             real-time measurement."
        );
        return;
    }
    let _ = writeln!(out, "What a result measured here is worth:");
    for line in &check.worth {
        let _ = writeln!(out, "  - {line}");
    }
}
