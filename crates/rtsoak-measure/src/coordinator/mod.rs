//! The coordinator: the non-real-time process the user started. For one transport run it
//! creates the shared region, starts the RT subscriber then the RT publisher, sets the start
//! time, supervises (signals, worker exits, deadline, progress, draining the workers' frame
//! rings, the on-threshold actions), and collects what the workers left behind into a
//! [`RunResult`]. It never leaves a
//! worker behind: every path out of [`run_one`] kills and reaps the workers it started, and the
//! workers die with it if it dies.

pub mod actions;
mod bell;
pub mod cpustat;
mod exits;
pub mod noise;
mod pace;
mod progress;
pub use progress::Progress;
pub mod stop;
mod watchdog;

use std::ops::ControlFlow;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::Context;

use self::actions::{Responder, RunWatch};
use self::bell::Bell;
use self::exits::ChildExits;
use self::noise::NoiseManager;
use self::pace::{Pace, Wakeups};
use self::stop::StopFlag;
use crate::explain::{self, Tracer};
use crate::launch::{Spawned, ring_for, spawn_with_bell};
use crate::protocol::Work;
use crate::protocol::read_report;
use crate::result::{NoiseOutcome, WorkerOutput};
use crate::result::{RunInputs, build_run};
use rtsoak_record::plan::RunPlan;
use rtsoak_record::result::{RunResult, RunStatus};
use rtsoak_record::transport::Name;
use rtsoak_record::{CoordinatorActivity, Role};
use rtsoak_sys::clock::timestamp;
use rtsoak_sys::clock::{now_ns, sleep_until_ns, sleep_until_ns_or_ready};
use rtsoak_sys::region::{
    RT_PUBLISHER_SLOT, RT_SUBSCRIBER_SLOT, Region, SharedRegion, phase, worker_state,
};

/// Time a worker gets to set itself up and report `READY`.
const SETUP_TIMEOUT: Duration = Duration::from_secs(10);
/// Lead time between everyone being ready and the first period.
const START_LEAD_NS: u64 = 50_000_000;
/// Slack beyond the planned end before the coordinator declares a worker hung.
const HANG_SLACK_NS: u64 = 10_000_000_000;
/// How late the coordinator's timed sleeps may end: its phase-locked wakeups (`pace`) must
/// fall in the quiet part of a period, not anywhere in the 50 us a SCHED_OTHER thread's sleep
/// is otherwise allowed to slip.
const TIMER_SLACK_NS: u64 = 1_000;
/// Without a bell to wake it (a process that could not make one), the longest the coordinator
/// sleeps: signals are then seen at this tick, as before it had one.
const FALLBACK_TICK_NS: u64 = 10_000_000;

/// Run one transport under `plan`; noise scratch files, and the actions' files, go to
/// `scratch_dir` (the result directory); `responder` does the on-threshold actions (`None`:
/// there are none). Errors are for setup failures before any worker ran; once workers run,
/// every outcome (including failures) comes back as a result.
pub fn run_one(
    plan: &RunPlan,
    transport: Name,
    scratch_dir: &std::path::Path,
    stop: &StopFlag,
    progress: &mut Progress,
    responder: Option<&mut Responder>,
) -> anyhow::Result<RunResult> {
    let started_at = timestamp();
    let region = SharedRegion::create().context("creating the shared region")?;
    let mut workers: Vec<Spawned> = Vec::new();
    let mut served = Served {
        noise: NoiseManager::new(plan, transport, &region, scratch_dir),
        actions: RunWatch::new(responder, transport.as_str(), scratch_dir),
    };
    let mut tracing = Tracing::asked(plan, transport, scratch_dir);
    let run = ToRun {
        plan,
        transport,
        region: &region,
    };
    let outcome = drive(
        &run,
        &mut workers,
        &mut tracing,
        &mut served,
        stop,
        progress,
    );
    // Whatever happened, no worker outlives this function: nothing below can fail.
    let Served { noise, actions } = served;
    let ended = end_every_process(&region, &mut workers, noise, tracing);
    // The commands of the actions too: each is waited for up to its timeout, then stopped.
    let actions = actions.finish(region.get(), stop.is_set());
    let done = outcome.unwrap_or_else(|error| Driven::cut_short(&error, stop));
    let outputs = collect(&mut workers, ended.exits);
    let frame_problems = frame_problems(&outputs);
    let mut result = build_run(RunInputs {
        transport: transport.to_string(),
        status: done.status,
        reason: done.reason,
        started_at,
        measured_ns: done.measured_ns,
        cpu_busy_percent: done.cpu_busy_percent,
        workers: outputs,
        noise: ended.noise,
    });
    result.coordinator = done.coordinator;
    result.actions = actions;
    analyse(&mut result, plan, &region, ended.trace, ended.rt_pids);
    settle_status(&mut result, &frame_problems);
    Ok(result)
}

/// What the coordinator serves at each wakeup besides the RT pair: the noise it keeps going,
/// and the on-threshold actions it does.
struct Served<'n, 'w> {
    noise: NoiseManager<'n>,
    actions: RunWatch<'w>,
}

/// What is left of a run's processes once every one of them has ended.
struct Ended {
    /// The noise, folded over every noise process.
    noise: NoiseOutcome,
    /// How each RT worker's process ended, in the order they were started.
    exits: Vec<String>,
    /// The RT publisher's and the RT subscriber's pids (0 for one never started).
    rt_pids: [i32; 2],
    /// The explainer's trace, or why there is none (`None` when the explainer is off or the
    /// RT pair never got ready).
    trace: Option<Result<explain::Trace, String>>,
}

/// Stop the run and end every process it started: the noise first, then the RT pair (`reap`
/// kills what does not stop in time), then the tracer.
fn end_every_process(
    region: &SharedRegion,
    workers: &mut [Spawned],
    noise: NoiseManager<'_>,
    tracing: Tracing,
) -> Ended {
    region
        .get()
        .control
        .phase
        .store(phase::STOP, Ordering::Release);
    let noise = noise.finish();
    let exits = reap(region, workers);
    let rt_pids = [Role::Publisher, Role::Subscriber].map(|role| {
        workers
            .iter()
            .find(|w| w.spec.role == role)
            .map_or(0, |w| w.child.id() as i32)
    });
    // Every worker has exited: the trace holds all they did.
    let trace = tracing.tracer.map(|started| started.map(Tracer::finish));
    Ended {
        noise,
        exits,
        rt_pids,
        trace,
    }
}

/// The last drain, after the workers ended: a worker that died mid-run still leaves every
/// interval it finished.
fn collect(workers: &mut [Spawned], exits: Vec<String>) -> Vec<WorkerOutput> {
    workers
        .iter_mut()
        .zip(exits)
        .map(|(worker, exit)| WorkerOutput {
            role: worker.spec.role,
            pid: worker.child.id() as i32,
            stream: worker.collect(),
            exit,
        })
        .collect()
}

/// The lost or damaged interval frames of each worker, one sentence each.
fn frame_problems(outputs: &[WorkerOutput]) -> Vec<String> {
    outputs
        .iter()
        .filter_map(|w| {
            Some(format!(
                "the {}: {}",
                w.role.name(),
                w.stream.problems.as_ref()?
            ))
        })
        .collect()
}

/// The figures worked out from the whole run: the tail estimates, the bounded interval list
/// and, where the explainer ran and the run started, the outliers laid over the trace.
fn analyse(
    result: &mut RunResult,
    plan: &RunPlan,
    region: &SharedRegion,
    trace: Option<Result<explain::Trace, String>>,
    rt_pids: [i32; 2],
) {
    // After the run, never during it: the fits cost CPU the measuring loops must not share.
    result.tail =
        rtsoak_analysis::tail::run::estimate_run(result, plan.period_ns, plan.threshold_ns);
    // A multi-hour run keeps a bounded interval list (coarser, nothing lost), its share of
    // the document's.
    result.intervals = rtsoak_analysis::coarsen::coarsen(
        std::mem::take(&mut result.intervals),
        rtsoak_analysis::coarsen::intervals_per_run(plan.planned_runs()),
    );
    let start_ns = region.get().control.start_ns.load(Ordering::Acquire);
    if start_ns > 0 {
        let measure_start_ns = start_ns + plan.warmup_periods() * plan.period_ns;
        result.explanation = trace.map(|trace| match trace {
            Ok(trace) => {
                let listed = rtsoak_record::result::explain::chains_per_run(plan.planned_runs());
                explain::explain_run(&trace, result, measure_start_ns, rt_pids, listed)
            }
            Err(reason) => explain::unavailable(reason),
        });
    }
}

/// A run that looked completed fails, or is interrupted, for what its result shows: lost
/// frames, a dead noise worker, a worker's own error, or a `--break-on` that stopped it.
fn settle_status(result: &mut RunResult, frame_problems: &[String]) {
    fail_for_frame_problems(&mut result.status, &mut result.reason, frame_problems);
    // A noise worker that died took its share of the noise with it: the figures were not
    // measured under the noise the profile asked for, and something killed a process of ours.
    let deaths: Vec<String> = result.noise.deaths.iter().map(|d| d.sentence()).collect();
    fail_for_frame_problems(&mut result.status, &mut result.reason, &deaths);
    if result.status == RunStatus::Completed
        && let Some(error) = result.workers.iter().find_map(|w| w.error.clone())
    {
        result.status = RunStatus::Failed;
        result.reason = Some(error);
    }
    if result.status == RunStatus::Completed
        && result.break_event.is_some_and(|event| !event.continued)
    {
        result.status = RunStatus::Interrupted;
        result.reason = Some("stopped by --break-on".to_string());
    }
}

/// Lost or damaged interval frames leave histograms incomplete, and a dead noise worker leaves
/// the noise incomplete: a completed run fails naming them, and a run that already failed or
/// was interrupted names them beside its reason.
fn fail_for_frame_problems(
    status: &mut RunStatus,
    reason: &mut Option<String>,
    problems: &[String],
) {
    if problems.is_empty() {
        return;
    }
    let problems = problems.join("; ");
    *reason = Some(match reason.take() {
        Some(earlier) if *status != RunStatus::Completed => format!("{earlier}; {problems}"),
        _ => problems,
    });
    if *status == RunStatus::Completed {
        *status = RunStatus::Failed;
    }
}

/// The spike explainer of one run: what to ask of it (none when it is off), then the tracer
/// started once the RT tasks are known (or why it could not start).
struct Tracing {
    options: Option<explain::Options>,
    tracer: Option<Result<Tracer, String>>,
}

impl Tracing {
    /// What the plan asks of the explainer for this run; nothing is started yet.
    fn asked(plan: &RunPlan, transport: Name, scratch_dir: &std::path::Path) -> Self {
        Self {
            options: plan.explain.then(|| explain::Options {
                min_wait_us: plan.threshold_ns / 2_000,
                keep: plan.keep_trace.then(|| {
                    explain::trace_file(scratch_dir, transport.as_str(), plan.ring_setup.name())
                }),
            }),
            tracer: None,
        }
    }

    /// Start tracing the RT pair `workers`, if the explainer is on.
    fn start(&mut self, workers: &[Spawned]) {
        if let Some(options) = self.options.take() {
            let pids: Vec<i32> = workers.iter().map(|w| w.child.id() as i32).collect();
            self.tracer = Some(Tracer::start(&pids, options));
        }
    }
}

/// How the supervised part of a run went.
struct Driven {
    status: RunStatus,
    reason: Option<String>,
    /// Measured time covered, ns.
    measured_ns: u64,
    /// Busy share of each CPU from the first period to the end, percent.
    cpu_busy_percent: std::collections::BTreeMap<usize, f64>,
    /// What the coordinator did on the RT CPUs while the run measured (`None` where it never
    /// started).
    coordinator: Option<CoordinatorActivity>,
}

impl Driven {
    /// A run whose setup went wrong: nothing was measured.
    fn cut_short(error: &anyhow::Error, stop: &StopFlag) -> Self {
        Self {
            // A stop signal during setup interrupts the run; anything else failed it.
            status: if stop.is_set() {
                RunStatus::Interrupted
            } else {
                RunStatus::Failed
            },
            reason: Some(format!("{error:#}")),
            measured_ns: 0,
            cpu_busy_percent: Default::default(),
            coordinator: None,
        }
    }
}

/// When a run's periods fall, ns of `CLOCK_MONOTONIC`.
struct Window {
    /// The first period, warm-up included.
    start_ns: u64,
    /// The first measured period, after the warm-up.
    measure_start_ns: u64,
    /// The end of the last measured period.
    planned_end_ns: u64,
}

impl Window {
    /// The periods of `plan`, starting a lead time from now.
    fn from_now(plan: &RunPlan) -> Self {
        let start_ns = now_ns() + START_LEAD_NS;
        let measure_start_ns = start_ns + plan.warmup_periods() * plan.period_ns;
        Self {
            start_ns,
            measure_start_ns,
            planned_end_ns: measure_start_ns + plan.measured_periods() * plan.period_ns,
        }
    }
}

/// What a run runs: the plan, the transport under it, and the region its processes share.
struct ToRun<'r> {
    plan: &'r RunPlan,
    transport: Name,
    region: &'r SharedRegion,
}

/// Start, run and stop the workers.
fn drive(
    run: &ToRun,
    workers: &mut Vec<Spawned>,
    tracing: &mut Tracing,
    served: &mut Served,
    stop: &StopFlag,
    progress: &mut Progress,
) -> anyhow::Result<Driven> {
    start_rt_pair(run, workers, stop)?;
    // Tracing starts with the RT tasks known (its filters name them), before the noise and
    // the first period.
    tracing.start(workers);
    // Noise starts before the first period, so the warm-up already runs under it.
    served.noise.start().context("starting the noise")?;

    let window = Window::from_now(run.plan);
    served.actions.measure_from(window.measure_start_ns);
    let ticks_before = cpustat::read(cpustat::PROC_STAT);
    let r = run.region.get();
    r.control.start_ns.store(window.start_ns, Ordering::Release);
    r.control.phase.store(phase::RUN, Ordering::Release);
    progress.run_started(
        run.transport.as_str(),
        window.measure_start_ns,
        window.planned_end_ns,
    );
    let supervised = supervise(run, workers, served, stop, progress, &window);
    progress.run_finished(r);
    let cpu_busy_percent = cpustat::busy_percent(&ticks_before, &cpustat::read(cpustat::PROC_STAT));
    let measured_ns = now_ns()
        .min(window.planned_end_ns)
        .saturating_sub(window.measure_start_ns);
    Ok(Driven {
        status: supervised.status,
        reason: supervised.reason,
        measured_ns,
        cpu_busy_percent,
        coordinator: Some(supervised.coordinator.activity(measured_ns)),
    })
}

/// Start the RT subscriber, then the RT publisher, each ready before the next starts.
fn start_rt_pair(run: &ToRun, workers: &mut Vec<Spawned>, stop: &StopFlag) -> anyhow::Result<()> {
    for (role, slot) in [
        (Role::Subscriber, RT_SUBSCRIBER_SLOT),
        (Role::Publisher, RT_PUBLISHER_SLOT),
    ] {
        let spec = crate::launch::rt_spec(run.plan, run.transport, role, slot);
        // A worker that watches --on-threshold rings the bell when a sample fires.
        let watches = matches!(&spec.work, Work::Queue(queue)
            if queue.rt().is_some_and(|rt| rt.on_threshold.is_some()));
        let bell = Bell::get().ringer().filter(|_| watches);
        let ring = ring_for(role, slot)?;
        workers.push(spawn_with_bell(spec, run.region, ring, bell)?);
        wait_ready(run.region, workers, slot, stop)?;
    }
    Ok(())
}

/// Supervise the running workers, a tick at a time, until they are all done, or the
/// publisher is, or one ended early, a stop signal came, one went silent or the run overran
/// its planned end. Returns how the run ended, why where it did not complete, and how often
/// the coordinator woke on the RT CPUs meanwhile. It sleeps between ticks as `pace` says, and
/// wakes at once on a signal (a stop, or a worker that ended).
fn supervise(
    run: &ToRun,
    workers: &mut [Spawned],
    served: &mut Served,
    stop: &StopFlag,
    progress: &mut Progress,
    window: &Window,
) -> Supervised {
    let (plan, r) = (run.plan, run.region.get());
    let mut supervisor = Supervisor {
        region: r,
        stop,
        watched: watched_rt_pair(r),
        watchdog_ns: watchdog::deadline_ns(plan.period_ns, plan.delivery_timeout_ns),
        start_ns: window.start_ns,
        overrun_ns: window.planned_end_ns + plan.delivery_timeout_ns + HANG_SLACK_NS,
        status: RunStatus::Completed,
        reason: None,
        dead: None,
    };
    let exits = ChildExits::get();
    let bell = Bell::get();
    let pace = Pace::new(
        plan,
        window.start_ns,
        window.planned_end_ns,
        progress.every_ns(),
    );
    let mut wakeups = Wakeups::new(pace, plan, window.measure_start_ns, window.planned_end_ns);
    loop {
        sleep_until_tick(&pace, &bell);
        wakeups.count(now_ns(), rtsoak_sys::sched::current_cpu());
        // First: a firing's delay runs from its sample, and the rest can wait for it.
        served.actions.poll(r);
        for worker in workers.iter_mut() {
            worker.frames.drain();
        }
        let ended = exits.take();
        if ended && supervisor.dead.is_none() {
            supervisor.dead = exited(workers);
        }
        served.noise.tick(ended);
        let now = now_ns();
        progress.tick(r, now);
        if supervisor.stop_if_due(now).is_break() || supervisor.over(workers, now) {
            break;
        }
    }
    Supervised {
        status: supervisor.status,
        reason: supervisor.reason,
        coordinator: wakeups,
    }
}

/// What [`supervise`] looks at from tick to tick to tell when the run must stop, and how it
/// ended.
struct Supervisor<'r> {
    region: &'r Region,
    stop: &'r StopFlag,
    watched: [watchdog::Watched<'r>; 2],
    /// How long an RT worker may go without a heartbeat.
    watchdog_ns: u64,
    /// When the run started: the watchdog watches from then.
    start_ns: u64,
    /// Past this, a run still going has overrun its planned end (its delivery timeout and
    /// slack included), which fails it.
    overrun_ns: u64,
    status: RunStatus,
    reason: Option<String>,
    /// An RT worker that ended early, once seen (its exit is looked for only after a SIGCHLD).
    dead: Option<String>,
}

impl Supervisor<'_> {
    /// Stop the run if it must stop at `now`: a stop signal came, the publisher is done, or an
    /// RT worker ended early or went silent. Breaks for a silent one: supervising ends at once.
    fn stop_if_due(&mut self, now: u64) -> ControlFlow<()> {
        let r = self.region;
        if r.phase() == phase::STOP {
            return ControlFlow::Continue(());
        }
        if self.stop.is_set() {
            self.status = RunStatus::Interrupted;
            self.reason = Some(format!("stopped by {}", self.stop.signal_name()));
            r.control.phase.store(phase::STOP, Ordering::Release);
        } else if r.workers[RT_PUBLISHER_SLOT].state.load(Ordering::Acquire) >= worker_state::DONE {
            r.control.phase.store(phase::STOP, Ordering::Release);
        } else if let Some(dead) = &self.dead {
            self.status = RunStatus::Failed;
            self.reason = Some(dead.clone());
            r.control.phase.store(phase::STOP, Ordering::Release);
        } else if let Some(hung) =
            watchdog::silent(r, &self.watched, self.start_ns, now, self.watchdog_ns)
        {
            // A silent worker will not finish: stop now; `reap` kills it.
            self.status = RunStatus::Failed;
            self.reason = Some(hung);
            r.control.phase.store(phase::STOP, Ordering::Release);
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }

    /// Whether supervising is over at `now`: every worker is done, an RT worker ended early and
    /// the run is stopping, or the run overran its planned end (which fails it).
    fn over(&mut self, workers: &[Spawned], now: u64) -> bool {
        let r = self.region;
        let all_done = workers
            .iter()
            .all(|w| r.workers[w.spec.slot].state.load(Ordering::Acquire) >= worker_state::DONE);
        if all_done {
            return true;
        }
        if self.dead.is_some() && r.phase() == phase::STOP {
            return true;
        }
        if now > self.overrun_ns {
            self.status = RunStatus::Failed;
            self.reason = Some(format!(
                "a worker did not finish within {} s of the planned end: killed",
                HANG_SLACK_NS / 1_000_000_000
            ));
            return true;
        }
        false
    }
}

/// The RT pair, whose heartbeats the watchdog reads.
fn watched_rt_pair(r: &Region) -> [watchdog::Watched<'_>; 2] {
    [
        watchdog::Watched {
            name: Role::Publisher.name(),
            slot: &r.workers[RT_PUBLISHER_SLOT],
        },
        watchdog::Watched {
            name: Role::Subscriber.name(),
            slot: &r.workers[RT_SUBSCRIBER_SLOT],
        },
    ]
}

/// Sleep until the next tick `pace` places, or until the bell rings (a stop signal, or a
/// worker that ended).
fn sleep_until_tick(pace: &Pace, bell: &Bell) {
    // Only for the sleep, and only where the wakeups are placed within a period: the noise
    // processes the loop starts must not inherit it. Best effort: a coarser slack only blurs
    // where in a period the wakeups fall.
    let _slack = pace
        .phase_locked()
        .then(|| rtsoak_sys::sched::lower_timer_slack_ns(TIMER_SLACK_NS).ok());
    let deadline_ns = pace.next_after(now_ns());
    match bell.fd() {
        Some(fd) => {
            if sleep_until_ns_or_ready(deadline_ns, fd) {
                bell.drain();
            }
        }
        None => sleep_until_ns(deadline_ns.min(now_ns() + FALLBACK_TICK_NS)),
    }
}

/// How the supervised part of a run ended, and the coordinator's own wakeups meanwhile.
struct Supervised {
    status: RunStatus,
    reason: Option<String>,
    coordinator: Wakeups,
}

/// Wait until the worker in `slot` is ready, has failed, or the setup time ran out.
fn wait_ready(
    region: &SharedRegion,
    workers: &mut [Spawned],
    slot: usize,
    stop: &StopFlag,
) -> anyhow::Result<()> {
    let state = &region.get().workers[slot].state;
    let deadline = std::time::Instant::now() + SETUP_TIMEOUT;
    loop {
        match state.load(Ordering::Acquire) {
            worker_state::READY => return Ok(()),
            worker_state::FAILED | worker_state::DONE => {
                anyhow::bail!("{}", setup_failure(workers))
            }
            _ => {}
        }
        if let Some(dead) = exited(workers) {
            anyhow::bail!("{dead}: {}", setup_failure(workers));
        }
        anyhow::ensure!(
            !stop.is_set(),
            "stopped by {} during setup",
            stop.signal_name()
        );
        anyhow::ensure!(
            std::time::Instant::now() < deadline,
            "a worker did not get ready within {} s",
            SETUP_TIMEOUT.as_secs()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The error the last started worker reported, for a setup failure.
fn setup_failure(workers: &mut [Spawned]) -> String {
    let Some(worker) = workers.last_mut() else {
        return "no worker started".into();
    };
    // Give a failing worker a moment to finish writing its report.
    let _ = worker.child.try_wait();
    std::thread::sleep(Duration::from_millis(20));
    match read_report(&mut worker.report) {
        Ok(report) => report.and_then(|r| r.error).unwrap_or_else(|| {
            format!("the {:?} worker failed without a report", worker.spec.role)
        }),
        Err(error) => format!(
            "the {:?} worker's report is unreadable: {error:#}",
            worker.spec.role
        ),
    }
}

/// A worker that exited before it was done, described.
fn exited(workers: &mut [Spawned]) -> Option<String> {
    for worker in workers.iter_mut() {
        if let Ok(Some(status)) = worker.child.try_wait()
            && !status.success()
        {
            return Some(format!(
                "the {} worker (pid {}) ended early: {status}; the run was stopped",
                worker.spec.role.name(),
                worker.child.id()
            ));
        }
    }
    None
}

/// Stop every worker: let them finish for a moment, then kill; always reap. Returns how each
/// process ended.
fn reap(region: &SharedRegion, workers: &mut [Spawned]) -> Vec<String> {
    region
        .get()
        .control
        .phase
        .store(phase::STOP, Ordering::Release);
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    workers
        .iter_mut()
        .map(|worker| {
            loop {
                match worker.child.try_wait() {
                    Ok(Some(status)) => return status.to_string(),
                    Ok(None) if std::time::Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(10))
                    }
                    _ => {
                        let _ = worker.child.kill();
                        return match worker.child.wait() {
                            Ok(status) => format!("{status} (killed by the coordinator)"),
                            Err(error) => format!("unknown: {error}"),
                        };
                    }
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lost_frames_fail_a_completed_run_and_are_named_beside_an_earlier_reason() {
        let lost = ["the RT publisher: 3 interval frames were lost".to_string()];
        let (mut status, mut reason) = (RunStatus::Completed, None);
        fail_for_frame_problems(&mut status, &mut reason, &lost);
        assert_eq!(status, RunStatus::Failed);
        assert_eq!(reason.as_deref(), Some(lost[0].as_str()));

        let (mut status, mut reason) = (RunStatus::Interrupted, Some("stopped by SIGINT".into()));
        fail_for_frame_problems(&mut status, &mut reason, &lost);
        assert_eq!(status, RunStatus::Interrupted);
        assert_eq!(
            reason.as_deref(),
            Some("stopped by SIGINT; the RT publisher: 3 interval frames were lost")
        );

        let (mut status, mut reason) = (RunStatus::Completed, None);
        fail_for_frame_problems(&mut status, &mut reason, &[]);
        assert_eq!((status, reason), (RunStatus::Completed, None));
    }
}
