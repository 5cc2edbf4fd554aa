//! The rounds of a soak: every supported transport and ring setup once per round, the
//! unsupported ones recorded once, the document saved after every run, and with `--floor` each
//! run's floor run beside it.

use std::path::Path;

use crate::profile;
use crate::store::Saver;
use rtsoak_analysis::judge::ranked_caveats;
use rtsoak_measure::coordinator::actions::Responder;
use rtsoak_measure::coordinator::stop::StopFlag;
use rtsoak_measure::coordinator::{Progress, run_one};
use rtsoak_measure::worker::floor::MAX_FLOOR_PERIODS;
use rtsoak_record::plan::RunPlan;
use rtsoak_record::result::{ResultDoc, RunKey, RunResult, RunStatus};
use rtsoak_record::transport::Name;
use rtsoak_sys::clock::timestamp;

/// How the rounds run: what stops them, whether progress is shown, and whether each run has
/// its floor run beside it (`--floor`).
pub(crate) struct Rounds<'a> {
    /// Where noise scratch files go (the result directory).
    pub(crate) result_dir: &'a Path,
    pub(crate) stop: &'a StopFlag,
    pub(crate) quiet: bool,
    pub(crate) floor: bool,
}

/// Record each unsupported transport once, then run every supported transport and ring setup
/// once per round (`responder` doing the on-threshold actions), saving the document after every
/// run. Stops early on a stop signal, a save
/// that failed or a `--break-on` that does not continue; the error is a run's setup failure.
/// With `--floor`, each run's floor run goes beside it, first in even rounds, so neither side
/// always runs on a machine the other has just warmed.
pub(super) fn run_rounds(
    doc: &mut ResultDoc,
    saver: &mut Saver,
    rounds: &Rounds<'_>,
    mut responder: Option<&mut Responder>,
) -> anyhow::Result<()> {
    let Rounds {
        result_dir,
        stop,
        quiet,
        floor,
    } = *rounds;
    let supported: Vec<Name> = doc
        .plan
        .transports
        .iter()
        .copied()
        .filter(|name| unsupported_reason(doc, name.as_str()).is_none())
        .collect();
    let setups = doc.plan.ring_setups();
    let mut progress = Progress::new(
        supported.len() * setups.len() * doc.plan.rounds as usize * if floor { 2 } else { 1 },
        doc.plan.rounds,
        doc.plan.warmup_ns + doc.plan.round_duration_ns(),
        !quiet,
    );
    // Unsupported transports are recorded once, before the first round.
    for name in doc.plan.transports.clone() {
        if let Some(reason) = unsupported_reason(doc, name.as_str()) {
            doc.runs.push(unsupported(name.as_str(), reason));
        }
    }
    for round in 1..=doc.plan.rounds {
        progress.set_round(round);
        for (name, setup) in supported
            .iter()
            .flat_map(|name| setups.iter().map(move |setup| (*name, *setup)))
        {
            if stop.is_set() {
                return Ok(());
            }
            // Each ring setup of a variant comparison is a run of its own, with its own row.
            let plan = RunPlan {
                ring_setup: setup,
                ..doc.plan.clone()
            };
            let key = RunKey {
                transport: name.as_str(),
                ring_setup: (setups.len() > 1).then_some(setup),
            };
            let harness = Harness {
                plan: &plan,
                name,
                key: &key,
                round,
            };
            let floor_first = floor && round % 2 == 0;
            if floor_first && !run_floor(doc, rounds, &harness, &mut progress)? {
                return Ok(());
            }
            let responder = responder.as_deref_mut();
            let mut run = run_one(&plan, name, result_dir, stop, &mut progress, responder)?;
            key.apply(&mut run);
            run.round = round;
            let broke = run.break_event.is_some_and(|event| !event.continued);
            doc.runs.push(run);
            doc.caveats = ranked_caveats(doc);
            if !saver.save(doc) || broke {
                return Ok(());
            }
            if floor && !floor_first && !run_floor(doc, rounds, &harness, &mut progress)? {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// The harness run a floor run goes beside: its plan, transport, row and round.
struct Harness<'a> {
    plan: &'a RunPlan,
    name: Name,
    key: &'a RunKey<'a>,
    round: u32,
}

/// The floor run beside `harness` (`--floor`): the floor pair under the same plan, without
/// tracing, breaks, actions or injected faults (they are the harness's), recorded in
/// `floor_runs`. Returns whether the rounds go on (not after a stop signal).
fn run_floor(
    doc: &mut ResultDoc,
    rounds: &Rounds<'_>,
    harness: &Harness,
    progress: &mut Progress,
) -> anyhow::Result<bool> {
    let stop = rounds.stop;
    if stop.is_set() {
        return Ok(false);
    }
    let plan = RunPlan {
        floor: true,
        explain: false,
        keep_trace: false,
        break_on_ns: None,
        inject_fault: None,
        actions: Default::default(),
        ..harness.plan.clone()
    };
    let mut run = run_one(&plan, harness.name, rounds.result_dir, stop, progress, None)?;
    harness.key.apply(&mut run);
    run.round = harness.round;
    doc.floor_runs.push(run);
    Ok(!stop.is_set())
}

/// `--floor` keeps every sample of a run in memory locked before it starts
/// ([`MAX_FLOOR_PERIODS`] per series): refuse (a usage error) a plan whose runs hold more,
/// naming what to change.
pub(crate) fn check_floor(plan: &RunPlan) -> anyhow::Result<()> {
    let periods = plan.measured_periods();
    if periods <= MAX_FLOOR_PERIODS {
        return Ok(());
    }
    Err(profile::ProfileError::Invalid {
        key: "run.duration (per round, with --floor)".into(),
        value: format!(
            "{} of {periods} periods",
            humantime::format_duration(std::time::Duration::from_nanos(plan.round_duration_ns()))
        ),
        allowed: format!(
            "at most {MAX_FLOOR_PERIODS} periods per run, the samples a floor run keeps per \
             series: shorten --duration, split it over more --rounds, or lengthen the period"
        ),
    }
    .into())
}

/// Why `transport` cannot run on this kernel, if it cannot.
fn unsupported_reason(doc: &ResultDoc, transport: &str) -> Option<String> {
    doc.support
        .iter()
        .find(|s| s.transport == transport)
        .filter(|entry| !entry.support.is_supported())
        .map(|entry| entry.support.reason())
}

/// The row of a transport this kernel lacks: nothing ran.
fn unsupported(transport: &str, reason: String) -> RunResult {
    rtsoak_measure::result::build_run(rtsoak_measure::result::RunInputs {
        transport: transport.to_string(),
        status: RunStatus::Unsupported,
        reason: Some(reason),
        started_at: timestamp(),
        measured_ns: 0,
        cpu_busy_percent: Default::default(),
        workers: Vec::new(),
        noise: Default::default(),
    })
}
