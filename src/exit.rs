//! Exit codes: the only place they are numbered. Documented in the README and `--help`.

/// How an invocation ended, as its exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// 0: pass: measured what was asked, every run completed without lost messages, within
    /// every limit.
    Pass = 0,
    /// 1: a pass/fail threshold was breached, or `--break-on` fired.
    ThresholdBreach = 1,
    /// 2: bad command line or profile; an input that is not a regular file of bounded size, or
    /// not a result; a refused `RTSOAK_LOCK_DIR`; as root, a directory to write into or a
    /// program to run that another user controls.
    Usage = 2,
    /// 3: worse than the baseline (`diff`, `--baseline`).
    Regression = 3,
    /// 4: a run lost messages or its transport failed (failed wake calls, error completions,
    /// messages only the fallback poll delivered, own wakes that never arrived).
    LostMessages = 4,
    /// 5: a run failed or the system refused something rtsoak needs.
    SystemError = 5,
    /// 6: another rtsoak holds the RT CPUs or is queued for them (and `--wait-for-cpus` ran
    /// out, if given).
    CpusBusy = 6,
    /// 7: inconclusive: nothing failed, but the run could not measure what it was asked
    /// (nothing measured, too many missed periods, noise or RT priority not as asked, too few
    /// messages), or a baseline comparison compared nothing it should have. Never a pass.
    Inconclusive = 7,
    /// 125: `campaign --bisect`: the campaign made no claim, so `git bisect run` skips this
    /// commit.
    BisectSkip = 125,
    /// 128: `campaign --bisect`: an error (a bad plan, a refused kernel), so `git bisect run`
    /// stops instead of calling the commit bad.
    BisectAbort = 128,
    /// 130: stopped by a signal; what was measured is saved, marked interrupted.
    Interrupted = 130,
    /// `probe` only, exit 1: the machine has a problem that invalidates real-time figures
    /// measured on it (the probe's own codes: [`PROBE_EXIT_CODES_HELP`]).
    NotReady,
}

impl Outcome {
    /// The process exit code.
    pub fn code(self) -> i32 {
        match self {
            Outcome::NotReady => 1,
            other => other as i32,
        }
    }
}

/// The exit codes of `rtsoak probe`, which measures nothing: whether the machine is ready.
pub(crate) const PROBE_EXIT_CODES_HELP: &str = "\
Exit codes:
  0    ready: no finding invalidates real-time figures measured here (warnings may remain)
  1    not ready: a problem, or a condition that invalidates real-time figures (no PREEMPT_RT,
       no real-time priority, noise on the RT CPUs), was found; each PROBLEM line says what
  2    usage error: bad flag, profile or CPU list
  5    the probe could not run (the system refused something it needs)
A lab gates a soak on it: `rtsoak probe && rtsoak run ...`.";

/// The exit-code table of the command called `name` (its `--help` and manual page).
pub(crate) fn exit_codes_help(name: &str) -> &'static str {
    match name {
        "probe" => PROBE_EXIT_CODES_HELP,
        _ => EXIT_CODES_HELP,
    }
}

/// The table printed by `--help`.
pub(crate) const EXIT_CODES_HELP: &str = "\
Exit codes:
  0    PASS: measured what was asked, every run completed and delivered every message
  1    a profile threshold was breached, or --break-on fired
  2    usage error, before anything runs: bad flag, profile or CPU list, an input that is not
       a regular result or profile file of bounded size, a path root must not use
  3    regression against the baseline
  4    messages were lost, or a transport failed (wake or completion errors, fallback deliveries)
  5    a run failed, or the system refused something rtsoak needs
  6    another rtsoak holds or is queued for the RT CPUs: nothing ran (--wait-for-cpus queues)
  7    INCONCLUSIVE: could not measure what was asked (nothing measured, too many missed
       periods, noise or RT priority not as asked, too few messages), or a diff compared nothing
  125  campaign --bisect: inconclusive, git bisect skips the commit (1: regression, 0: none)
  128  campaign --bisect: an error; git bisect stops
  130  interrupted by a signal (the result is saved, marked interrupted)
When several apply, the first in this order wins: 130, 2, 6 and 5, 4, 3, 1, 7, 0.";
