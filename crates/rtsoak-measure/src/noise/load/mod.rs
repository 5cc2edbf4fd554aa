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

use crate::protocol::WorkerReport;
use rtsoak_record::LoadCount;
use rtsoak_record::plan::LoadPlan;
use rtsoak_sys::region::{Region, WorkerSlot, worker_state};
use rtsoak_sys::sched;

/// One generator: its name, what one operation is, how many threads the plan gives it, and
/// the body each of its threads runs (returning the operations it did).
pub(crate) struct Generator {
    /// Name in results (`load.<name>`).
    pub(crate) name: &'static str,
    /// What one operation is.
    unit: &'static str,
    /// Its thread count in a plan (0: off).
    pub(crate) threads: fn(&LoadPlan) -> u32,
    body: fn(&Region, &Path, usize) -> u64,
}

/// Every load generator, in the order results list them. Adding one: a file here and a line.
pub(crate) static GENERATORS: &[Generator] = &[
    Generator {
        name: "sched",
        unit: "pipe/socket round trips",
        threads: |plan| plan.sched_pairs,
        body: sched_pairs::run,
    },
    Generator {
        name: "net",
        unit: "bytes over loopback TCP",
        threads: |plan| plan.net_streams,
        body: net::run,
    },
    Generator {
        name: "mm",
        unit: "map-touch-unmap cycles of 2 MiB",
        threads: |plan| plan.mm_threads,
        body: mm::run,
    },
    Generator {
        name: "timers",
        unit: "timer expirations",
        threads: |plan| plan.timers,
        body: timers::run,
    },
    Generator {
        name: "file_io",
        unit: "bytes written and fsynced",
        threads: |plan| plan.file_writers,
        body: file_io::run,
    },
];

/// Run every enabled generator until the run stops.
pub(crate) fn run(
    plan: &LoadPlan,
    scratch: &Path,
    slot: &WorkerSlot,
    region: &'static Region,
    out: &mut WorkerReport,
) -> anyhow::Result<()> {
    let threads: Vec<u32> = GENERATORS.iter().map(|g| (g.threads)(plan)).collect();
    slot.state.store(worker_state::READY, Ordering::Release);
    // Each thread also says which CPU it ended on: the threads inherit the worker's affinity and
    // policy, and where they really ran is what the result reports.
    let counts: Vec<(usize, u64, i32)> = std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for (g, generator) in GENERATORS.iter().enumerate() {
            for index in 0..threads[g] as usize {
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
    for (g, generator) in GENERATORS.iter().enumerate() {
        if threads[g] == 0 {
            continue;
        }
        let operations = counts
            .iter()
            .filter(|(i, _, _)| *i == g)
            .map(|(_, n, _)| n)
            .sum();
        out.load.insert(
            generator.name.to_string(),
            LoadCount {
                threads: threads[g],
                operations,
                unit: generator.unit.to_string(),
            },
        );
    }
    let observed = &mut out.setup.cpus_observed;
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
