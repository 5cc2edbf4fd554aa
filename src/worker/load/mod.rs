//! The load worker: system and interrupt load on the noise CPUs, SCHED_OTHER, each generator
//! sized by the profile (0 turns it off) and each counting what it did, so a quiet run can
//! never pass for a loaded one.
//!
//! Generators: `sched` (hackbench-style pipe and socket ping-pong), `net` (loopback TCP
//! streams: network softirqs), `mm` (map, touch, unmap: page faults and TLB-shootdown IPIs),
//! `timers` (short periodic sleeps: hrtimer interrupts), `file_io` (write + fsync in the result
//! directory). Every thread checks the run's phase at least every 100 ms and stops with it.

mod file_io;
mod mm;
mod net;
mod sched_pairs;
mod timers;

use std::path::Path;
use std::sync::atomic::Ordering;

use anyhow::Context;

use super::WorkerContext;
use crate::record::LoadCount;
use crate::region::{Region, phase, worker_state};
use crate::sys::sched;

/// True once the run is stopping.
pub(super) fn stopping(region: &Region) -> bool {
    region.phase() == phase::STOP
}

/// One generator: its name, what one operation is, and the body each of its threads runs
/// (returning the operations it did).
struct Generator {
    name: &'static str,
    unit: &'static str,
    threads: u32,
    body: fn(&Region, &Path, usize) -> u64,
}

/// Run every enabled generator until the run stops.
pub fn run(context: &mut WorkerContext) -> anyhow::Result<()> {
    let plan = context
        .spec
        .load
        .clone()
        .context("a load worker needs load settings")?;
    let scratch = context
        .spec
        .scratch_dir
        .clone()
        .unwrap_or_else(std::env::temp_dir);
    let region = context.region();
    let generators = [
        Generator {
            name: "sched",
            unit: "pipe/socket round trips",
            threads: plan.sched_pairs,
            body: sched_pairs::run,
        },
        Generator {
            name: "net",
            unit: "bytes over loopback TCP",
            threads: plan.net_streams,
            body: net::run,
        },
        Generator {
            name: "mm",
            unit: "map-touch-unmap cycles of 2 MiB",
            threads: plan.mm_threads,
            body: mm::run,
        },
        Generator {
            name: "timers",
            unit: "timer expirations",
            threads: plan.timers,
            body: timers::run,
        },
        Generator {
            name: "file_io",
            unit: "bytes written and fsynced",
            threads: plan.file_writers,
            body: file_io::run,
        },
    ];
    context
        .slot()
        .state
        .store(worker_state::READY, Ordering::Release);
    // Each thread also says which CPU it ended on: the threads inherit the worker's affinity and
    // policy, and where they really ran is what the result reports.
    let counts: Vec<(usize, u64, i32)> = std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for (g, generator) in generators.iter().enumerate() {
            for index in 0..generator.threads as usize {
                let scratch = scratch.as_path();
                let body = generator.body;
                handles.push((
                    g,
                    scope.spawn(move || (body(region, scratch, index), sched::current_cpu())),
                ));
            }
        }
        handles
            .into_iter()
            .map(|(g, h)| {
                let (operations, cpu) = h.join().unwrap_or((0, -1));
                (g, operations, cpu)
            })
            .collect()
    });
    for (g, generator) in generators.iter().enumerate() {
        if generator.threads == 0 {
            continue;
        }
        let operations = counts
            .iter()
            .filter(|(i, _, _)| *i == g)
            .map(|(_, n, _)| n)
            .sum();
        context.report.load.insert(
            generator.name.to_string(),
            LoadCount {
                threads: generator.threads,
                operations,
                unit: generator.unit.to_string(),
            },
        );
    }
    let observed = &mut context.report.setup.cpus_observed;
    sched::current_cpu_into(observed);
    for cpu in counts
        .iter()
        .filter_map(|&(_, _, cpu)| usize::try_from(cpu).ok())
    {
        if !observed.contains(&cpu) {
            observed.push(cpu);
        }
    }
    Ok(())
}
