//! The coordinator's side of the actions (`--on-threshold`, `--on-end`): everything an action
//! needs, made and checked once before the first run ([`Responder::prepare`]: programs found
//! and trusted, target processes opened as pidfds; [`Responder::open_tracefs`]: tracefs opened
//! and tracing switched on), then each run's firings
//! read from the shared region and acted on ([`watch`]), and the end's actions
//! ([`Responder::at_end`]).
//!
//! The RT loops never act: they publish the sample and ring the bell; every action here runs in
//! the coordinator, on its CPU, after the sample (`docs/actions.md` says how long after).
//!
//! Owns: the prepared actions and the log of their commands. Never runs a command through a
//! shell, and never leaves one running past its timeout.

mod exec;
mod signal;
mod snapshot;
mod watch;

use std::fs::File;
use std::path::Path;

use rtsoak_record::action::{Action, ActionKind, ActionPlan};
use rtsoak_record::plan::RunPlan;
use rtsoak_record::result::actions::{ActionRecord, ActionStatus};
use rtsoak_sys::clock::{now_ns, timestamp};

use self::exec::{Ended, Exec};
use self::snapshot::Snapshot;
pub(crate) use self::watch::RunWatch;

/// The log every command's output goes to, in the result directory.
const LOG_FILE: &str = "actions.log";

/// Which list an action is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum List {
    /// `--on-threshold`.
    OnThreshold,
    /// `--on-end`.
    OnEnd,
}

/// An action that cannot be done here, found before anything runs.
#[derive(Debug, thiserror::Error)]
#[error("the {} action `{}` cannot be done: {why}", .list.name(), .action)]
pub struct Refused {
    /// Its list.
    pub(crate) list: List,
    /// The action as the command line spells it (foreign text escaped).
    pub(crate) action: String,
    /// Why, in words, with what to do.
    pub(crate) why: String,
    /// Whether it is the system's refusal (tracefs, a process), not the user's input.
    pub system: bool,
}

impl List {
    /// The list's name (its flag without the dashes: `--on-threshold`, `actions.on_threshold`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            List::OnThreshold => "on-threshold",
            List::OnEnd => "on-end",
        }
    }
}

/// One action, ready.
enum Prepared {
    Trace,
    Signal(signal::Target),
    Exec(Exec),
    Continue,
}

/// Every action of an invocation, ready to be done.
pub struct Responder {
    on_threshold: Vec<Prepared>,
    on_end: Vec<Prepared>,
    timeout_ns: u64,
    /// Where commands run: off the RT pair.
    cpus: Vec<usize>,
    snapshot: Option<Snapshot>,
    /// `actions.log`, once a command ran.
    log: Option<File>,
    /// Snapshots saved so far, for their file names.
    snapshots: u32,
}

impl Responder {
    /// Make every action of `plan` ready (`None`: it has none) but the trace action's tracefs
    /// ([`Self::open_tracefs`]), refusing the first that cannot be done here. Changes nothing
    /// on the system: a refusal here is the user's to mend.
    pub fn prepare(plan: &RunPlan) -> Result<Option<Responder>, Refused> {
        let actions = &plan.actions;
        if actions.is_off() {
            return Ok(None);
        }
        let cpus = if plan.housekeeping_cpus.is_empty() {
            plan.noise_cpus.clone()
        } else {
            plan.housekeeping_cpus.clone()
        };
        Ok(Some(Responder {
            on_threshold: prepare_list(&actions.on_threshold, List::OnThreshold)?,
            on_end: prepare_list(&actions.on_end, List::OnEnd)?,
            timeout_ns: actions.timeout_ns,
            cpus,
            snapshot: None,
            log: None,
            snapshots: 0,
        }))
    }

    /// Where `plan` has a trace action, open tracefs (mounting it where nothing is) and switch
    /// tracing on, or say why it cannot be (the system's refusal).
    pub fn open_tracefs(&mut self, plan: &RunPlan) -> Result<(), Refused> {
        let actions = &plan.actions;
        if !actions.all().any(|a| a.kind() == ActionKind::Trace) {
            return Ok(());
        }
        self.snapshot = Some(Snapshot::open().map_err(|why| Refused {
            list: list_of(actions, &Action::Trace),
            action: "trace".into(),
            why: format!("{why}; or drop the trace action"),
            system: true,
        })?);
        Ok(())
    }

    /// Do the `--on-end` actions, in order, once the runs are over (an `exec` waited for, up
    /// to its timeout); their records.
    pub fn at_end(&mut self, dir: &Path) -> Vec<ActionRecord> {
        let mut records = Vec::new();
        for index in 0..self.on_end.len() {
            let start_ns = now_ns();
            let started_at = timestamp();
            let deed = Deed {
                marker: b"rtsoak on-end\n".to_vec(),
                snapshot_prefix: "trace-end".to_string(),
                value: 0,
            };
            let mut done = self.act(List::OnEnd, index, &deed, dir, start_ns);
            if let (true, Prepared::Exec(exec)) = (done.started, &mut self.on_end[index]) {
                done.ended(exec.wait(false));
            }
            records.push(done.record(started_at, start_ns));
        }
        records
    }

    /// Do action `index` of `list` for `deed`, its files in `dir`, started at `start_ns`.
    fn act(&mut self, list: List, index: usize, deed: &Deed, dir: &Path, start_ns: u64) -> Done {
        let actions = match list {
            List::OnThreshold => &mut self.on_threshold,
            List::OnEnd => &mut self.on_end,
        };
        match &mut actions[index] {
            Prepared::Continue => Done::new(ActionKind::Continue),
            Prepared::Signal(target) => {
                let mut done = Done::new(ActionKind::Signal);
                done.pid = Some(target.pid());
                done.fail(target.send(deed.value).err());
                done
            }
            Prepared::Trace => {
                self.snapshots += 1;
                let name = format!("{}-{}.txt", deed.snapshot_prefix, self.snapshots);
                match &self.snapshot {
                    Some(snapshot) => snapshot_done(snapshot, &deed.marker, dir, name),
                    None => {
                        let mut done = Done::new(ActionKind::Trace);
                        done.fail(Some("tracefs was not opened for it".to_string()));
                        done
                    }
                }
            }
            Prepared::Exec(exec) => {
                let mut done = Done::new(ActionKind::Exec);
                if exec.busy() {
                    done.status = ActionStatus::Busy;
                    return done;
                }
                match open_log(&mut self.log, dir)
                    .and_then(|log| exec.start(log, &self.cpus, self.timeout_ns, start_ns))
                {
                    Ok(pid) => {
                        done.pid = Some(pid);
                        done.started = true;
                    }
                    Err(why) => done.fail(Some(why)),
                }
                done
            }
        }
    }
}

/// What an action is done for: the marker a trace gets, its copy's file name before its number
/// (`trace-end` makes `trace-end-1.txt`), and the value a signal carries.
struct Deed {
    marker: Vec<u8>,
    snapshot_prefix: String,
    value: u64,
}

/// How one action went, before its times are added.
struct Done {
    kind: ActionKind,
    status: ActionStatus,
    /// An `exec` started, and has yet to end.
    started: bool,
    duration_ns: Option<u64>,
    pid: Option<i32>,
    exit_code: Option<i32>,
    exit_signal: Option<i32>,
    file: Option<String>,
    truncated: bool,
    error: Option<String>,
}

impl Done {
    fn new(kind: ActionKind) -> Self {
        Done {
            kind,
            status: ActionStatus::Done,
            started: false,
            duration_ns: None,
            pid: None,
            exit_code: None,
            exit_signal: None,
            file: None,
            truncated: false,
            error: None,
        }
    }

    /// Failed for `why`, if there is one.
    fn fail(&mut self, why: Option<String>) {
        if let Some(why) = why {
            self.status = ActionStatus::Failed;
            self.error = Some(why);
        }
    }

    /// The command it started ended so (`None`: it was not running).
    fn ended(&mut self, ended: Option<Ended>) {
        let Some(ended) = ended else { return };
        self.status = ended.status;
        self.duration_ns = Some(ended.duration_ns);
        self.exit_code = ended.exit_code;
        self.exit_signal = ended.exit_signal;
        self.error = ended.error;
    }

    /// The record of an action started at `started_at` (`start_ns` on the monotonic clock).
    fn record(self, started_at: String, start_ns: u64) -> ActionRecord {
        ActionRecord {
            kind: self.kind,
            started_at,
            at_ns: None,
            delay_ns: None,
            duration_ns: self
                .duration_ns
                .unwrap_or_else(|| now_ns().saturating_sub(start_ns)),
            status: self.status,
            pid: self.pid,
            exit_code: self.exit_code,
            exit_signal: self.exit_signal,
            file: self.file,
            truncated: self.truncated,
            error: self.error,
        }
    }
}

/// The trace action done (`marker` written, the copy saved as `name` in `dir`), or why not.
fn snapshot_done(snapshot: &Snapshot, marker: &[u8], dir: &Path, name: String) -> Done {
    let mut done = Done::new(ActionKind::Trace);
    match snapshot.take(marker, dir, &name) {
        Ok(saved) => {
            done.file = Some(saved.file);
            done.truncated = saved.truncated;
        }
        Err(why) => done.fail(Some(why)),
    }
    done
}

/// `actions.log` in `dir`, created on first use (by the directory's fd, under a fresh name
/// renamed onto it: a link planted as `actions.log` is replaced, never written through).
fn open_log<'a>(log: &'a mut Option<File>, dir: &Path) -> Result<&'a File, String> {
    if log.is_none() {
        let file = rtsoak_sys::safe_dir::SafeDir::open(dir)
            .and_then(|dir| Ok(dir.create_file(LOG_FILE.as_ref(), 0o644)?))
            .map_err(|e| format!("creating {LOG_FILE} in the result directory: {e:#}"))?;
        *log = Some(file);
    }
    Ok(log.as_ref().expect("just made"))
}

/// The list `action` is in (the first it is in).
fn list_of(actions: &ActionPlan, action: &Action) -> List {
    if actions.on_threshold.contains(action) {
        List::OnThreshold
    } else {
        List::OnEnd
    }
}

/// Each action of `list` (from `actions`) made ready.
fn prepare_list(actions: &[Action], list: List) -> Result<Vec<Prepared>, Refused> {
    actions
        .iter()
        .map(|action| {
            let refused = |why: String, system: bool| Refused {
                list,
                action: spelled(action),
                why,
                system,
            };
            Ok(match action {
                Action::Trace => Prepared::Trace,
                Action::Continue => Prepared::Continue,
                Action::Signal { signal, pid } => Prepared::Signal(
                    signal::Target::open(*signal, *pid).map_err(|why| refused(why, false))?,
                ),
                Action::Exec { argv } => {
                    let program = crate::launch::program::external_program(&argv[0])
                        .map_err(|why| refused(why, false))?;
                    Prepared::Exec(Exec::new(program, argv.clone()))
                }
            })
        })
        .collect()
}

/// `action` as the command line spells it, escaped for the terminal.
fn spelled(action: &Action) -> String {
    let text = match action {
        Action::Trace | Action::Continue => action.kind().name().to_string(),
        Action::Signal { signal, pid } => match nix::sys::signal::Signal::try_from(*signal) {
            Ok(name) => format!("signal={},pid={pid}", name.as_str()),
            Err(_) => format!("signal={signal},pid={pid}"),
        },
        Action::Exec { argv } => {
            format!("exec={}", serde_json::to_string(argv).unwrap_or_default())
        }
    };
    rtsoak_record::text::printable(&text).into_owned()
}
