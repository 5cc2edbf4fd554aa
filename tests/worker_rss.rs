//! What an RT worker keeps resident. An RT worker locks all its memory (`mlockall`), so every
//! mapped page of the binary it runs is resident: the workers run a small binary of their own,
//! `rtsoak-worker` (src/bin/rtsoak-worker.rs says why, with the figures), not the whole of
//! `rtsoak`. This test prints each RT worker's peak RSS (`hygiene.peak_rss_bytes`, VmHWM) in a
//! short quiet comparison of every transport and holds every publisher and subscriber under
//! 8 MiB. A size bound, not a
//! timing one: it does not depend on how loaded the machine is.
//!
//! It starts RT workers: run it serialised with the other soak tests,
//! `flock /tmp/rtsoak-soak-tests.lock cargo test --test worker_rss`.

mod common;

use common::{saved_run, serial};
use rtsoak_record::Role;

/// The most an RT worker may keep resident.
const RT_WORKER_RSS_BOUND: u64 = 8 * 1024 * 1024;

#[test]
fn every_rt_worker_of_every_transport_keeps_under_8_mib_resident() {
    let _serial = serial();
    // Every transport this kernel supports (each builds its own rings and buffers), quiet.
    let (_dir, doc) = saved_run(&["compare", "-q", "--no-noise", "--duration", "1s"]);
    let measured: Vec<_> = doc
        .runs
        .iter()
        .filter(|run| !run.workers.is_empty())
        .collect();
    assert!(
        measured.len() >= 2,
        "only {} transports ran",
        measured.len()
    );
    for run in measured {
        for worker in &run.workers {
            let peak = worker.hygiene.peak_rss_bytes;
            eprintln!(
                "{}: {:?} worker peak RSS: {peak} bytes ({:.2} MiB)",
                run.transport,
                worker.role,
                peak as f64 / (1024.0 * 1024.0)
            );
        }
        for role in [Role::Publisher, Role::Subscriber] {
            let worker = run
                .workers
                .iter()
                .find(|w| w.role == role)
                .unwrap_or_else(|| panic!("{}: no {role:?} worker", run.transport));
            let peak = worker.hygiene.peak_rss_bytes;
            assert!(
                peak > 0,
                "{}: the {role:?} worker recorded no peak RSS",
                run.transport
            );
            assert!(
                peak < RT_WORKER_RSS_BOUND,
                "{}: the {role:?} worker's peak RSS is {peak} bytes, over 8 MiB",
                run.transport
            );
        }
    }
}
