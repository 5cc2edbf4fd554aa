//! Any text as a profile: parsing, then resolving against a 2-CPU and an 8-CPU machine with and
//! without command-line overrides, must give a plan or an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rtsoak::profile::{CpuTopology, Overrides, parse, resolve};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(profile) = parse("fuzz", text) else {
        return;
    };
    let transports = rtsoak_record::transport::Name::all();
    let machines = [
        CpuTopology { online: vec![0, 1], isolated: vec![] },
        CpuTopology { online: (0..8).collect(), isolated: vec![2, 3] },
    ];
    let overrides = [
        Overrides::default(),
        Overrides {
            duration_ns: Some(u64::MAX),
            period_ns: Some(1),
            priority: Some(99),
            rt_cpus: Some(vec![1, 0]),
            noise_cpus: Some(vec![]),
            no_noise: true,
            ..Overrides::default()
        },
    ];
    for machine in &machines {
        for overrides in &overrides {
            let _ = resolve("fuzz", &profile, overrides, machine, &transports);
        }
    }
});
