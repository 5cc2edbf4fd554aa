//! `rtsoak run` and `rtsoak compare`: profile → plan → support check → one run per transport
//! (result saved after each) → table, caveats and exit code. The rounds are in `rounds`, what
//! scheduled runs do once the measuring is over in `nightly`, the report into a LAVA test shell
//! in `lava_shell`.

mod cpu_wait;
mod lava_shell;
mod nightly;
mod rounds;

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::cli::SoakArgs;
use crate::exit::Outcome;
use crate::preflight::{self, WORKER_LOCK_BYTES};
use crate::profile::{self, CpuTopology, Overrides};
use crate::store::RESULT_FILE;
use crate::store::{Saver, new_result_dir};
use crate::sysinfo::{SysRoot, host_facts};
use cpu_wait::WaitProgress;
use rounds::{Rounds, check_floor, run_rounds};
use rtsoak_analysis::judge::ranked_caveats;
use rtsoak_measure::coordinator::actions::Responder;
use rtsoak_measure::coordinator::stop::StopFlag;
use rtsoak_measure::transport;
use rtsoak_record::action::ActionKind;
use rtsoak_record::plan::RunPlan;
use rtsoak_record::result::{ResultDoc, Tool};
use rtsoak_record::{CpuDmaLatency, HostFacts, Privileges, SystemCheck, TransportSupport};
use rtsoak_sys::clock::timestamp;
use rtsoak_sys::trace::{Mount, Trace, find_tracefs, mount_if_missing};
use rtsoak_sys::{cpu_dma_latency, cpu_lock};

/// Soak each transport of the plan in turn, once per round: plan, refuse early, the rounds,
/// then judge, save and report.
pub(super) fn soak(
    command: &str,
    transports: Option<Vec<String>>,
    args: &SoakArgs,
    quiet: bool,
) -> anyhow::Result<Outcome> {
    let host = host_facts(&SysRoot::system());
    let plan = resolve_plan(args, transports, &host)?;
    check_external_command(&plan)?;
    if args.floor {
        check_floor(&plan)?;
    }
    // The worker binary beside this one, found and checked before anything runs: a missing or
    // untrusted one is refused here, naming what to install.
    rtsoak_measure::launch::worker_binary::worker_executable()?;
    // Every path argument is refused here, if it is refused at all, before anything is locked,
    // mounted, removed or measured: the baseline (read once, now), the textfile directory
    // (held open until the metrics are written) and where the result directory will be made.
    let scheduled = nightly::prepare(&args.nightly)?;
    check_output(command, args)?;
    // Every action made ready (programs found and checked, processes opened) or refused.
    let mut responder = Responder::prepare(&plan)?;
    // Held until this function returns: before the result directory exists, so a refusal
    // leaves nothing behind.
    let cpu_locks = lock_rt_cpus(&plan, args.wait_for_cpus, quiet)?;
    end_leftovers();
    let tracefs_mounted = prepare_tracefs(&plan);
    let trace = prepare_break_on(&plan)?;
    // A trace action opens tracefs now (mounted above, where it can be) and switches tracing on.
    if let Some(responder) = responder.as_mut() {
        responder.open_tracefs(&plan)?;
    }
    let result_dir = prepare_output(command, args)?;
    let mut saver = Saver::new(&result_dir);
    let stop = StopFlag::install()?;
    let (support, system_check) = check_system(&plan, &host);
    // Held (if it could be) until this function returns, whichever way it does.
    let (_dma_hold, dma_record) = hold_cpu_dma_latency(&plan);
    place_coordinator(&plan);
    if let Some(trace) = &trace {
        trace
            .start()
            .context("switching tracing on for --break-on: run as root, or drop --break-on")?;
    }

    let mut doc = ResultDoc {
        support,
        system_check: Some(system_check),
        cpu_dma_latency: Some(dma_record),
        cpu_wait: cpu_locks.wait().cloned(),
        tracefs_mounted,
        ..new_doc(command, plan, host)
    };
    let rounds = Rounds {
        result_dir: &result_dir,
        stop: &stop,
        quiet,
        floor: args.floor,
    };
    run_rounds(&mut doc, &mut saver, &rounds, responder.as_mut())?;
    judge_and_save(
        &mut doc,
        scheduled.baseline.as_ref(),
        &stop,
        &mut saver,
        &result_dir,
        &args.export,
    );
    end_actions(&mut doc, responder.as_mut(), &mut saver, &result_dir);
    report(&doc, &saver, &result_dir, args, &scheduled)
}

/// The document of an invocation of `command` under `plan` on `host`, as it starts: nothing
/// checked, run or judged yet.
fn new_doc(command: &str, plan: RunPlan, host: HostFacts) -> ResultDoc {
    ResultDoc {
        schema_version: rtsoak_record::result::SCHEMA_VERSION,
        tool: Tool::current(),
        command: command.to_string(),
        argv: crate::cli::argv(),
        started_at: timestamp(),
        finished_at: None,
        interrupted: false,
        host,
        support: Vec::new(),
        caveats: Vec::new(),
        plan,
        runs: Vec::new(),
        system_check: None,
        cpu_dma_latency: None,
        cpu_wait: None,
        tracefs_mounted: None,
        decision: None,
        verdict: None,
        floor_runs: Vec::new(),
        tail_pooled: Vec::new(),
        end_actions: Vec::new(),
    }
}

/// What a killed rtsoak left behind, ended before this run starts, explaining or not: trace
/// instances still tracing into their buffers, and the processes of an external noise command
/// whose rtsoak and noise init were both killed (only possible where the kernel gave it no PID
/// namespace).
fn end_leftovers() {
    rtsoak_measure::explain::tracefs::remove_stale();
    rtsoak_measure::coordinator::noise::leftovers::end();
}

/// What this kernel carries of each transport, and the system check, with a warning for
/// each privilege the workers will not get and for bursts that could starve a CPU.
fn check_system(plan: &RunPlan, host: &HostFacts) -> (Vec<TransportSupport>, SystemCheck) {
    let support = transport::support_matrix(&plan.abi);
    let privileges = preflight::try_privileges(plan.rt.policy, plan.rt.publisher_priority);
    let system_check = preflight::check(&SysRoot::system(), &plan.rt_cpus(), &privileges, &support);
    warn_about_privileges(plan, &privileges);
    warn_about_throttling(plan, host);
    (support, system_check)
}

/// Hold `/dev/cpu_dma_latency` at 0 us where the plan asks (the hold lasts as long as the
/// returned guard), warning where it could not be held, and say which for the result.
fn hold_cpu_dma_latency(plan: &RunPlan) -> (Option<cpu_dma_latency::Hold>, CpuDmaLatency) {
    let (hold, outcome) = cpu_dma_latency::hold(
        Path::new(cpu_dma_latency::PATH),
        plan.hold_cpu_dma_latency,
        0,
    );
    let record = CpuDmaLatency {
        path: cpu_dma_latency::PATH.to_string(),
        requested: plan.hold_cpu_dma_latency,
        held_us: outcome.as_ref().ok().copied(),
        not_held_because: outcome.err(),
    };
    if let (true, Some(reason)) = (record.requested, &record.not_held_because) {
        eprintln!("Warning: {reason}; CPUs may enter deep idle states during the runs.");
    }
    (hold, record)
}

/// Judge the whole document (pooled tails, caveats, decision, verdict against any baseline) and
/// save it with the requested exports; a failure is kept in `saver`.
fn judge_and_save(
    doc: &mut ResultDoc,
    baseline: Option<&nightly::Baseline>,
    stop: &StopFlag,
    saver: &mut Saver,
    result_dir: &Path,
    formats: &[String],
) {
    doc.interrupted = stop.is_set();
    doc.finished_at = Some(timestamp());
    // After the last round, never between rounds: the fits cost CPU the runs must not share.
    doc.tail_pooled = rtsoak_analysis::tail::run::pool(doc);
    doc.caveats = ranked_caveats(doc);
    // The analysis decides; the report words it, and the JSON keeps the words for its readers.
    doc.decision = Some(rtsoak_report::decision::worded(
        rtsoak_analysis::judge::decision::decide(doc),
    ));
    doc.verdict = Some(nightly::judge(doc, baseline));
    if saver.save(doc)
        && let Err(error) = write_exports(doc, result_dir, formats)
    {
        saver.fail(error);
    }
}

/// The `--on-end` actions, once the result is saved (a command may read it), then the result
/// saved again with what they did. Done even where the save failed (an alert matters most
/// then); the record is then only in what is printed.
fn end_actions(
    doc: &mut ResultDoc,
    responder: Option<&mut Responder>,
    saver: &mut Saver,
    dir: &Path,
) {
    let Some(responder) = responder else { return };
    if doc.plan.actions.on_end.is_empty() {
        return;
    }
    // Done in full even after a stop signal: each command is bounded by its timeout.
    doc.end_actions = responder.at_end(dir);
    if saver.failure().is_none() {
        saver.save(doc);
    }
}

/// Show the result (JSON or the table on stdout), then where it was saved or why it was not,
/// and turn the verdict into the exit code.
fn report(
    doc: &ResultDoc,
    saver: &Saver,
    result_dir: &Path,
    args: &SoakArgs,
    scheduled: &nightly::Scheduled,
) -> anyhow::Result<Outcome> {
    lava_shell::report(doc);
    if args.json {
        println!("{}", rtsoak_report::escape::pretty_json(doc)?);
    } else {
        let columns = super::columns::stdout_columns();
        print!(
            "{}",
            rtsoak_report::terminal::render(
                doc,
                args.details,
                columns,
                &super::invocation::rtsoak_command()
            )
        );
    }
    if let Some(error) = saver.failure() {
        // Printed after the table, so nothing measured is lost with the file.
        let message = format!("{error:#}");
        eprintln!("Error: {}", rtsoak_record::text::visible(&message));
        return Ok(Outcome::SystemError);
    }
    eprintln!("Result saved to {}", saver.path().display());
    nightly::finish(doc, result_dir, &args.nightly, scheduled, !args.json);
    Ok(nightly::outcome(doc))
}

/// Take the RT CPUs for this invocation, or say who has them (the kernel tells who: no note);
/// with `--wait-for-cpus`, in turn behind those queued for them, showing where it stands.
fn lock_rt_cpus(
    plan: &RunPlan,
    wait_ns: Option<u64>,
    quiet: bool,
) -> anyhow::Result<cpu_lock::CpuLocks> {
    let cpus = [plan.rt.publisher_cpu, plan.rt.subscriber_cpu];
    let limit = std::time::Duration::from_nanos(wait_ns.unwrap_or(0));
    let mut progress = WaitProgress::new(&cpus, limit, quiet);
    let locks = cpu_lock::lock(&cpus, limit, |waiting| progress.show(waiting))?;
    progress.took(locks.wait());
    Ok(locks)
}

/// Where the explainer, `--break-on` or a trace action will trace, make sure tracefs is mounted
/// (mounting it where nothing is, as trace-cmd does) and say so: the path rtsoak mounted, for
/// the result.
fn prepare_tracefs(plan: &RunPlan) -> Option<String> {
    let trace_action = plan.actions.all().any(|a| a.kind() == ActionKind::Trace);
    if !plan.explain && plan.break_on_ns.is_none() && !trace_action {
        return None;
    }
    match mount_if_missing() {
        Mount::Mounted(dir) => {
            eprintln!(
                "Note: tracefs was not mounted; rtsoak mounted it at {} (as trace-cmd does) and \
                 leaves it mounted.",
                dir.display()
            );
            Some(dir.display().to_string())
        }
        // A failure is said where it matters: --break-on refuses below, and the explainer
        // records itself unavailable with the reason.
        Mount::Found(_) | Mount::Failed(_) => None,
    }
}

/// With `--break-on`, find and open tracefs before anything runs: a clear error now beats a
/// break that cannot mark the trace later.
fn prepare_break_on(plan: &RunPlan) -> anyhow::Result<Option<Trace>> {
    if plan.break_on_ns.is_none() {
        return Ok(None);
    }
    if let Mount::Failed(reason) = mount_if_missing() {
        anyhow::bail!("--break-on needs tracefs: {reason}; or drop --break-on");
    }
    let needs = "--break-on needs tracefs (or drop --break-on)";
    let dir = find_tracefs(Path::new("/")).context(needs)?;
    Ok(Some(Trace::open(&dir).context(needs)?))
}

/// Write the requested exports next to the result.
fn write_exports(doc: &ResultDoc, dir: &Path, formats: &[String]) -> anyhow::Result<()> {
    for name in formats {
        let format = rtsoak_report::by_name(name)
            .with_context(|| format!("unknown export format `{name}`"))?;
        if format.file_name == RESULT_FILE {
            continue; // the result itself, already saved
        }
        super::export_files::write(format, doc, &dir.join(format.file_name))?;
    }
    Ok(())
}

fn resolve_plan(
    args: &SoakArgs,
    transports: Option<Vec<String>>,
    host: &HostFacts,
) -> anyhow::Result<RunPlan> {
    let (name, profile) = profile::load(&args.profile)?;
    let overrides = Overrides {
        transports,
        ..args.overrides.clone()
    };
    let topology = CpuTopology {
        online: host.online_cpus(),
        isolated: host.isolated_cpus(),
    };
    Ok(profile::resolve(
        &name,
        &profile,
        &overrides,
        &topology,
        &rtsoak_record::transport::Name::all(),
    )?)
}

/// Create the result directory (one per invocation, named by its UTC start time) and return it.
fn prepare_output(command: &str, args: &SoakArgs) -> anyhow::Result<PathBuf> {
    new_result_dir(
        args.output.as_deref(),
        &nightly::results_parent(&args.nightly),
        command,
    )
}

/// Refuse the place the result directory will be made (`-o`, or in `--results-dir`) as
/// [`prepare_output`] would, making nothing yet: that waits until the RT CPUs are locked, so a
/// run refused for busy CPUs leaves no empty directory behind.
fn check_output(command: &str, args: &SoakArgs) -> anyhow::Result<()> {
    let dir = args.output.clone().unwrap_or_else(|| {
        let stamp = timestamp().replace([':', '-'], "");
        nightly::results_parent(&args.nightly).join(format!("{stamp}-{command}"))
    });
    rtsoak_sys::safe_dir::SafeDir::check_creatable(&dir).with_context(|| {
        format!(
            "creating the result directory {}: choose another with --output or --results-dir",
            dir.display()
        )
    })
}

/// Keep the coordinator (its progress display and the explainer's trace reader) off the RT
/// CPUs, and off the noise where the layout allows (`plan.housekeeping_cpus`).
fn place_coordinator(plan: &RunPlan) {
    if !plan.housekeeping_cpus.is_empty() {
        let _ = rtsoak_sys::sched::pin_to(&plan.housekeeping_cpus);
    }
}

/// Find and check the external noise command's program before anything runs
/// (`launch::program`): a missing one, or as root one another user could have planted, is
/// refused here, as a bad profile value.
fn check_external_command(plan: &RunPlan) -> anyhow::Result<()> {
    let Some(program) = plan.noise.external.first().filter(|_| plan.noise.enabled) else {
        return Ok(());
    };
    if let Err(why) = rtsoak_measure::launch::program::external_program(program) {
        return Err(profile::ProfileError::Invalid {
            key: "noise.load.external".into(),
            value: format!("{:?}", plan.noise.external),
            allowed: format!("a program that exists and may be run: {why}, or set external = []"),
        }
        .into());
    }
    Ok(())
}

/// With RT throttling off, nothing but the duty-cycle cap stops FIFO bursts from owning a CPU.
fn warn_about_throttling(plan: &RunPlan, host: &HostFacts) {
    let bursts = &plan.noise.bursts;
    if plan.noise.enabled
        && bursts.enabled
        && host.sched_rt_runtime_us == Some(-1)
        && bursts.duty_cap_percent > 50
    {
        eprintln!(
            "Warning: RT throttling is off (kernel.sched_rt_runtime_us = -1) and FIFO {} bursts may \
             keep each noise CPU busy {}% of the time: kernel threads on those CPUs can starve. \
             Lower noise.bursts.duty_cap_percent, or turn throttling back on.",
            bursts.priority, bursts.duty_cap_percent
        );
    }
}

/// Say before the first run, loudly, what the workers will not get (found by trying, in
/// `privileges`). They run regardless, and the result records what each one actually had.
fn warn_about_privileges(plan: &RunPlan, privileges: &Privileges) {
    if let Some(error) = &privileges.rt_priority.error {
        eprintln!(
            "Warning: no real-time priority ({error}); the RT pair will run SCHED_OTHER and the \
             result will say so. Run as root, or grant CAP_SYS_NICE or an RLIMIT_RTPRIO of {}.",
            plan.rt.publisher_priority.max(plan.rt.subscriber_priority)
        );
    }
    if let Some(error) = &privileges.memory_lock.error {
        eprintln!(
            "Warning: cannot lock {} MiB of memory ({error}); each RT worker locks only what \
             fits and may page-fault elsewhere (the result says how much). Run as root, or \
             raise RLIMIT_MEMLOCK (ulimit -l, LimitMEMLOCK=).",
            WORKER_LOCK_BYTES >> 20
        );
    }
}
