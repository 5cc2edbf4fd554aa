//! Waiting for the RT CPUs, shown on stderr: this run's place in the queue, whom it waits
//! behind and how long it has waited. Each change of those queued ahead is a line of its own,
//! under `--quiet` too (a journal should say why a nightly started late); between changes a
//! terminal shows a live line redrawn every second, and other outputs a plain line every five
//! minutes.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use rtsoak_record::text::visible;
use rtsoak_record::{CpuHolder, CpuHolderRole, CpuWait, cpulist};
use rtsoak_sys::cpu_lock::Waiting;

const LIVE_EVERY: Duration = Duration::from_secs(1);
const PLAIN_EVERY: Duration = Duration::from_secs(300);

/// The display of one wait.
pub(super) struct WaitProgress {
    /// `4-5`.
    cpus: String,
    limit: Duration,
    /// A terminal redraws a live line; `None` under `--quiet`.
    live: Option<bool>,
    last_line: Option<Instant>,
    drawn: bool,
}

impl WaitProgress {
    /// The display of a wait for `cpus`, for up to `limit`.
    pub(super) fn new(cpus: &[usize], limit: Duration, quiet: bool) -> Self {
        WaitProgress {
            cpus: cpulist::format(cpus),
            limit,
            live: (!quiet).then(|| std::io::stderr().is_terminal()),
            last_line: None,
            drawn: false,
        }
    }

    /// Show where the wait stands, if it is time to.
    pub(super) fn show(&mut self, waiting: &Waiting<'_>) {
        let mut err = std::io::stderr().lock();
        if waiting.changed {
            self.clear(&mut err);
            let _ = writeln!(err, "{}", self.change_line(waiting));
            self.last_line = Some(Instant::now());
            return;
        }
        let every = match self.live {
            Some(true) => LIVE_EVERY,
            Some(false) => PLAIN_EVERY,
            None => return,
        };
        if self.last_line.is_some_and(|at| at.elapsed() < every) {
            return;
        }
        self.last_line = Some(Instant::now());
        let line = format!(
            "Waiting for RT CPUs {}: queue position {}, waited {} of up to {}",
            self.cpus,
            waiting.position,
            seconds(waiting.waited),
            seconds(self.limit)
        );
        if self.live == Some(true) {
            let _ = write!(err, "\r\x1b[2K{line}");
            self.drawn = true;
        } else {
            let _ = writeln!(err, "{line}");
        }
        let _ = err.flush();
    }

    /// The CPUs are this run's: say after how long, where it waited at all.
    pub(super) fn took(mut self, wait: Option<&CpuWait>) {
        let mut err = std::io::stderr().lock();
        self.clear(&mut err);
        if let Some(wait) = wait {
            let _ = writeln!(
                err,
                "Took RT CPUs {} after waiting {} (queue position {} on arrival)",
                self.cpus,
                seconds(Duration::from_nanos(wait.waited_ns)),
                wait.queue_position
            );
        }
    }

    /// Clear the live line, if one is drawn.
    fn clear(&mut self, err: &mut impl Write) {
        if std::mem::take(&mut self.drawn) {
            let _ = write!(err, "\r\x1b[2K");
        }
    }

    /// `Waiting for RT CPUs 4-5 (for up to 1h 30m), queue position 2: held by pid 1, uid 0,
    /// rtsoak run (CPUs 4-5); queued ahead: pid 2, uid 1000, rtsoak run (CPU 5)`.
    fn change_line(&self, waiting: &Waiting<'_>) -> String {
        let mut line = format!(
            "Waiting for RT CPUs {} (for up to {}), queue position {}",
            self.cpus,
            seconds(self.limit),
            waiting.position
        );
        let mut joiner = ": ";
        for (role, label) in [
            (CpuHolderRole::Holding, "held by"),
            (CpuHolderRole::Queued, "queued ahead:"),
        ] {
            let named: Vec<String> = waiting
                .behind
                .iter()
                .filter(|h| h.role == role)
                .map(holder)
                .collect();
            if !named.is_empty() {
                line.push_str(&format!("{joiner}{label} {}", named.join(", then ")));
                joiner = "; ";
            }
        }
        line
    }
}

/// `pid 1234, uid 0, rtsoak run --profile ci (CPUs 4-5)`; the command was escaped when read,
/// and is shown escaped again (which changes nothing) in case it was not.
fn holder(holder: &CpuHolder) -> String {
    let cpus = cpulist::format(&holder.cpus);
    let which = if holder.cpus.len() == 1 {
        "CPU"
    } else {
        "CPUs"
    };
    match (holder.pid, holder.uid) {
        (Some(pid), Some(uid)) => format!(
            "pid {pid}, uid {uid}, {} ({which} {cpus})",
            visible(holder.command.as_deref().unwrap_or("command unknown"))
        ),
        _ => format!("a process the kernel did not name ({which} {cpus})"),
    }
}

/// A duration to the second, as `1h 30m 5s`.
fn seconds(duration: Duration) -> humantime::FormattedDuration {
    humantime::format_duration(Duration::from_secs(duration.as_secs()))
}
