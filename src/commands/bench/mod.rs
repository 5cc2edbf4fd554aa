//! `rtsoak bench <name>`: flags → config → pin and prioritise this thread → warm-up and
//! measured rounds → result saved → summary and exit code. `rtsoak bench compare`: load two or
//! three saved results → refuse mismatched configs → A/B/A arithmetic → verdict and exit code.
//!
//! Bad input (unknown CPU, wake index beyond the width, missing or mismatched result files)
//! is a [`UsageError`], answered with exit code 2 before anything is measured.

use std::path::{Path, PathBuf};

use anyhow::Context;

mod compare;

use crate::bench::args::{BenchCommand, CommonArgs};
use crate::bench::compare::Gates;
use crate::bench::doc::{BENCH_COMMAND, BENCH_FILE, BENCH_SCHEMA_VERSION, Setup};
use crate::bench::{
    BenchConfig, BenchDoc, BenchSeries, RoundPlan, Workload, describe_rounds, eventfd,
    futex_syscall, futex_wait_wake, futex_waitv, msg_ring, run_rounds,
};
use crate::exit::Outcome;
use crate::export::bench as report;
use crate::record::HostFacts;
use crate::record::RingSetup;
use crate::result::store::save_json;
use crate::result::{Tool, timestamp};
use crate::sys::sched;
use crate::sys::uring::OpcodeSupport;
use crate::sysinfo::{SysRoot, host_facts};
use crate::worker::realtime;

/// Bad input to `rtsoak bench`: exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(String);

/// Run a benchmark or a comparison.
pub fn bench(command: BenchCommand, quiet: bool) -> anyhow::Result<Outcome> {
    let result = match command {
        BenchCommand::Compare {
            results,
            signal_pct,
            drift_pct,
            cv_pct,
            json,
        } => compare::compare_results(
            &results,
            &Gates {
                signal_pct,
                drift_pct,
                cv_pct,
            },
            json,
        ),
        other => run(other, quiet),
    };
    match result {
        Err(error) if error.downcast_ref::<UsageError>().is_some() => {
            eprintln!("Error: {error:#}");
            Ok(Outcome::Usage)
        }
        other => other,
    }
}

/// The flags of one benchmark, split into its name, its config and the common options.
fn resolve(
    command: BenchCommand,
    host: &HostFacts,
) -> anyhow::Result<(&'static str, BenchConfig, CommonArgs)> {
    let (name, k, vectors, width, wake_index, threads, common) = match command {
        BenchCommand::FutexWaitWake { k, common } => {
            ("futex-wait-wake", k, None, None, None, None, common)
        }
        BenchCommand::FutexWaitv {
            vectors,
            width,
            wake_index,
            common,
        } => {
            if wake_index >= width {
                return Err(UsageError(format!(
                    "--wake-index {wake_index} is not an element of a {width}-word vector: \
                     give an index below --width"
                ))
                .into());
            }
            (
                "futex-waitv",
                vectors,
                Some(vectors),
                Some(width),
                Some(wake_index),
                None,
                common,
            )
        }
        BenchCommand::FutexSyscall { k, threads, common } => {
            let threads = threads
                .unwrap_or_else(|| futex_syscall::default_thread_counts(host.online.len().max(1)));
            ("futex-syscall", k, None, None, None, Some(threads), common)
        }
        BenchCommand::MsgRing { k, common } => ("msg-ring", k, None, None, None, None, common),
        BenchCommand::Eventfd { k, common } => ("eventfd", k, None, None, None, None, common),
        BenchCommand::Compare { .. } => unreachable!("compare is dispatched before resolve"),
    };
    let cpu = choose_cpu(common.cpu, host)?;
    let config = BenchConfig {
        k,
        vectors,
        width,
        wake_index,
        thread_counts: threads,
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
    Ok((name, config, common))
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

fn run(command: BenchCommand, quiet: bool) -> anyhow::Result<Outcome> {
    let host = host_facts(&SysRoot::system());
    let (name, config, common) = resolve(command, &host)?;
    check_support(name)?;
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
    let measured = measure(name, &config, plan, &host, &mut setup);
    // Leave real-time priority before writing files and printing.
    let _ = sched::set_policy(sched::SchedPolicy::Other, 0);
    let series = measured?;
    let doc = BenchDoc {
        schema_version: BENCH_SCHEMA_VERSION,
        tool: Tool::current(),
        command: BENCH_COMMAND.to_string(),
        bench: name.to_string(),
        argv: crate::commands::argv(),
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
        println!("{}", serde_json::to_string_pretty(&doc)?);
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
fn check_support(name: &str) -> anyhow::Result<()> {
    use io_uring::opcode;
    let needed: &[(u8, &str, &str)] = match name {
        "futex-wait-wake" => &[
            (opcode::FutexWait::CODE, "IORING_OP_FUTEX_WAIT", "6.7"),
            (opcode::FutexWake::CODE, "IORING_OP_FUTEX_WAKE", "6.7"),
        ],
        "futex-waitv" => &[
            (opcode::FutexWaitV::CODE, "IORING_OP_FUTEX_WAITV", "6.7"),
            (opcode::FutexWake::CODE, "IORING_OP_FUTEX_WAKE", "6.7"),
        ],
        "msg-ring" => &[(opcode::MsgRingData::CODE, "IORING_OP_MSG_RING", "5.18")],
        "eventfd" => &[(opcode::Read::CODE, "IORING_OP_READ", "5.6")],
        _ => &[],
    };
    if needed.is_empty() {
        return Ok(());
    }
    let support = OpcodeSupport::query()
        .context("io_uring is not available: check kernel.io_uring_disabled")?;
    for (code, opcode_name, version) in needed {
        anyhow::ensure!(
            support.has(*code),
            "this kernel's io_uring lacks {opcode_name} (Linux {version}): run `rtsoak bench \
             {name}` on a newer kernel"
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
    let mut locked = crate::record::RtSetup::default();
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

fn measure(
    name: &str,
    config: &BenchConfig,
    plan: RoundPlan,
    host: &HostFacts,
    setup: &mut Setup,
) -> anyhow::Result<Vec<BenchSeries>> {
    let cpu = config.cpu;
    let (series, ring) = match name {
        "futex-wait-wake" => one(
            name,
            "wait/wake pair",
            futex_wait_wake::FutexWaitWake::new(config)?,
            plan,
            cpu,
        ),
        "futex-waitv" => one(
            name,
            "waitv/wake pair",
            futex_waitv::FutexWaitv::new(config)?,
            plan,
            cpu,
        ),
        "msg-ring" => one(name, "message", msg_ring::MsgRing::new(config)?, plan, cpu),
        "eventfd" => one(name, "message", eventfd::Eventfd::new(config)?, plan, cpu),
        "futex-syscall" => {
            let cpus = rotated_online(host, cpu);
            let counts = config.thread_counts.clone().unwrap_or_default();
            let widest = counts.iter().copied().max().unwrap_or(1) as usize;
            setup.cpus = (0..widest).map(|t| cpus[t % cpus.len()]).collect();
            (futex_syscall::run(config, plan, &counts, &cpus)?, None)
        }
        other => unreachable!("unknown bench {other}"),
    };
    setup.ring_setup = ring;
    Ok(series)
}

/// Run one single-thread workload on the calling thread.
fn one<W: Workload>(
    name: &str,
    op: &str,
    (mut workload, ring): (W, RingSetup),
    plan: RoundPlan,
    cpu: usize,
) -> (Vec<BenchSeries>, Option<RingSetup>) {
    let raw = run_rounds(&mut workload, plan, cpu);
    let rounds = describe_rounds(
        &raw,
        plan,
        workload.ops_per_cycle(),
        workload.checks_per_cycle(),
    );
    (
        vec![BenchSeries::new(name, op, workload.ops_per_cycle(), rounds)],
        Some(ring),
    )
}

/// The online CPUs, starting at `first` (thread t of futex-syscall runs on the t-th).
fn rotated_online(host: &HostFacts, first: usize) -> Vec<usize> {
    let mut cpus = host.online.clone();
    if cpus.is_empty() {
        return vec![first];
    }
    let start = cpus.iter().position(|&c| c == first).unwrap_or(0);
    cpus.rotate_left(start);
    cpus
}

/// Create the result directory and return the result file's path.
fn prepare_output(name: &str, output: Option<&Path>) -> anyhow::Result<PathBuf> {
    let dir = crate::result::store::new_result_dir(
        output,
        Path::new("rtsoak-results"),
        &format!("bench-{name}"),
    )?;
    Ok(dir.join(BENCH_FILE))
}
