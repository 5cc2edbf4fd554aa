//! `rtsoak bench <name>`: flags → config → pin and prioritise this thread → warm-up and
//! measured rounds → result saved → summary and exit code. `rtsoak bench compare`: load two or
//! three saved results → refuse mismatched configs → A/B/A arithmetic → verdict and exit code.
//!
//! Bad input (unknown CPU, wake index beyond the width, missing or mismatched result files)
//! is a [`UsageError`], answered with exit code 2 before anything is measured.

use std::path::{Path, PathBuf};

use anyhow::Context;

mod compare;

use crate::exit::Outcome;
use crate::store::save_json;
use crate::sysinfo::{SysRoot, host_facts};
use rtsoak_analysis::bench::compare::Gates;
use rtsoak_measure::bench::args::{BenchCommand, BenchRun, CommonArgs, CompareCommand};
use rtsoak_measure::bench::{Bench, RoundPlan, UsageError};
use rtsoak_measure::worker::realtime;
use rtsoak_record::HostFacts;
use rtsoak_record::bench::{BENCH_COMMAND, BENCH_FILE, BENCH_SCHEMA_VERSION, Setup};
use rtsoak_record::bench::{BenchConfig, BenchDoc};
use rtsoak_record::result::Tool;
use rtsoak_report::bench as report;
use rtsoak_sys::clock::timestamp;
use rtsoak_sys::sched;
use rtsoak_sys::uring::OpcodeSupport;

/// Run a benchmark or a comparison.
pub(super) fn bench(command: BenchCommand, quiet: bool) -> anyhow::Result<Outcome> {
    let result = match command {
        BenchCommand::Compare(CompareCommand::Compare {
            results,
            signal_pct,
            drift_pct,
            cv_pct,
            json,
        }) => compare::compare_results(
            &results,
            &Gates {
                signal_pct,
                drift_pct,
                cv_pct,
            },
            json,
        ),
        BenchCommand::Run(bench) => run(bench, quiet),
    };
    match result {
        Err(error) if error.downcast_ref::<UsageError>().is_some() => {
            eprintln!("Error: {error:#}");
            Ok(Outcome::Usage)
        }
        other => other,
    }
}

/// The flags of one benchmark, split into the bench, its config and the common options.
fn resolve(
    BenchRun {
        bench,
        flags,
        common,
    }: BenchRun,
    host: &HostFacts,
) -> anyhow::Result<(&'static dyn Bench, BenchConfig, CommonArgs)> {
    let shape = bench.shape(&flags, host)?;
    let cpu = choose_cpu(common.cpu, host)?;
    let config = BenchConfig {
        k: shape.k,
        vectors: shape.vectors,
        width: shape.width,
        wake_index: shape.wake_index,
        thread_counts: shape.thread_counts,
        shared: common.shared,
        word_stride_bytes: 64,
        warmup_rounds: common.warmup_rounds,
        rounds: common.rounds,
        cycles: common.cycles,
        cpu,
        policy: common.policy,
        priority: common.priority,
        ring_setup: common.ring_setup,
    };
    Ok((bench, config, common))
}

/// `--cpu`, checked against the online CPUs; by default the last isolated CPU, else the last
/// online one (CPU 0 takes most housekeeping).
fn choose_cpu(requested: Option<usize>, host: &HostFacts) -> anyhow::Result<usize> {
    match requested {
        Some(cpu) if host.online.is_empty() || host.online.contains(&cpu) => Ok(cpu),
        Some(cpu) => Err(UsageError(format!(
            "--cpu {cpu} is not online (online: {:?}): choose one of those",
            host.online
        ))
        .into()),
        None => Ok(host
            .isolated
            .last()
            .or(host.online.last())
            .copied()
            .unwrap_or(0)),
    }
}

fn run(command: BenchRun, quiet: bool) -> anyhow::Result<Outcome> {
    let host = host_facts(&SysRoot::system());
    let (bench, config, common) = resolve(command, &host)?;
    let name = bench.name();
    check_support(bench)?;
    let plan = RoundPlan {
        warmup_rounds: config.warmup_rounds,
        rounds: config.rounds,
        cycles: config.cycles,
    };
    let result_path = prepare_output(name, common.output.as_deref())?;
    let started_at = timestamp();
    if !quiet {
        eprintln!(
            "bench {name}: {} warm-up + {} measured rounds x {} cycles on CPU {}",
            plan.warmup_rounds, plan.rounds, plan.cycles, config.cpu
        );
    }
    let mut setup = become_measuring_thread(&config);
    let measured = bench.run(&config, plan, &host, &mut setup);
    // Leave real-time priority before writing files and printing.
    let _ = sched::set_policy(sched::SchedPolicy::Other, 0);
    let series = measured?;
    let doc = BenchDoc {
        schema_version: BENCH_SCHEMA_VERSION,
        tool: Tool::current(),
        command: BENCH_COMMAND.to_string(),
        bench: bench.about().id,
        argv: crate::cli::argv(),
        started_at,
        finished_at: timestamp(),
        host,
        valid: series.iter().all(|s| s.rounds.iter().all(|r| r.valid)),
        config,
        setup,
        series,
    };
    save_json(&doc, &result_path)?;
    if common.json {
        println!("{}", rtsoak_report::escape::pretty_json(&doc)?);
    } else {
        print!("{}", report::render_doc(&doc));
    }
    eprintln!("Result saved to {}", result_path.display());
    if doc.valid {
        Ok(Outcome::Pass)
    } else {
        eprintln!("Error: some rounds failed their checks (see `checks.failed` in the result)");
        Ok(Outcome::SystemError)
    }
}

/// Refuse early, naming the opcode, when the kernel's io_uring lacks what the bench submits.
fn check_support(bench: &dyn Bench) -> anyhow::Result<()> {
    let needed = bench.about().needs;
    if needed.is_empty() {
        return Ok(());
    }
    let support = OpcodeSupport::query()
        .context("io_uring is not available: check kernel.io_uring_disabled")?;
    for opcode in needed {
        anyhow::ensure!(
            support.has(opcode.code),
            "this kernel's io_uring lacks {} (Linux {}): run `rtsoak bench {}` on a newer kernel",
            opcode.name,
            opcode.since,
            bench.name()
        );
    }
    Ok(())
}

/// Pin, prioritise and lock the calling thread; record what it really got.
fn become_measuring_thread(config: &BenchConfig) -> Setup {
    let mut warnings = Vec::new();
    let steps = realtime::take_cpus_and_policy(&[config.cpu], config.policy, config.priority, true);
    if let Err(error) = steps.pin {
        warnings.push(format!("could not pin to CPU {} ({error})", config.cpu));
    }
    if let Err(error) = steps.policy {
        warnings.push(format!(
            "no {} priority {} ({error}): measured under the default policy; run as root or \
             grant CAP_SYS_NICE",
            config.policy.name(),
            config.priority
        ));
    }
    let mut locked = rtsoak_record::RtSetup::default();
    realtime::lock_memory(&mut locked);
    if let Some(note) = locked.memory_lock_error {
        warnings.push(format!("memory: {note}"));
    }
    let memory_locked = locked.memory_locked;
    for warning in &warnings {
        eprintln!("Warning: {warning}");
    }
    let (policy, priority) = sched::current_policy();
    Setup {
        cpus: vec![config.cpu],
        policy,
        priority,
        memory_locked,
        ring_setup: None,
        warnings,
    }
}

/// Create the result directory and return the result file's path.
fn prepare_output(name: &str, output: Option<&Path>) -> anyhow::Result<PathBuf> {
    let dir = crate::store::new_result_dir(
        output,
        Path::new("rtsoak-results"),
        &format!("bench-{name}"),
    )?;
    Ok(dir.join(BENCH_FILE))
}
