//! Progress on stderr, drawn by the coordinator from the workers' relaxed progress counters (a
//! read of shared memory: it never disturbs the RT workers). On a terminal one line redrawn a
//! few times a second; otherwise (systemd, CI) a plain line every ten seconds. Each line shows
//! the current run (transport, round, elapsed of its measured time, messages, longest and
//! over-threshold so far) and the whole invocation (elapsed, and an estimate of what is left:
//! the runs still to come at the longer of their planned length and the average so far).

use std::io::{IsTerminal, Write};
use std::sync::atomic::Ordering;

use rtsoak_sys::region::{RT_PUBLISHER_SLOT, RT_SUBSCRIBER_SLOT, Region};

const TTY_EVERY_NS: u64 = 200_000_000;
const PLAIN_EVERY_NS: u64 = 10_000_000_000;

/// Progress display state.
pub struct Progress {
    tty: bool,
    enabled: bool,
    run: usize,
    runs: usize,
    round: u32,
    rounds: u32,
    /// Planned wall time of one run (warm-up plus measured), ns.
    planned_run_ns: u64,
    started: std::time::Instant,
    /// When the current run began, and the wall time of the runs finished so far.
    run_started: std::time::Instant,
    finished_ns: u64,
    finished: u64,
    transport: String,
    measure_start_ns: u64,
    end_ns: u64,
    last_ns: u64,
}

impl Progress {
    /// A display for `runs` runs in `rounds` rounds, each planned to take `planned_run_ns`
    /// (warm-up plus measured); `enabled` false silences it (`--quiet`).
    pub fn new(runs: usize, rounds: u32, planned_run_ns: u64, enabled: bool) -> Self {
        let now = std::time::Instant::now();
        Progress {
            tty: std::io::stderr().is_terminal(),
            enabled,
            run: 0,
            runs,
            round: 1,
            rounds,
            planned_run_ns,
            started: now,
            run_started: now,
            finished_ns: 0,
            finished: 0,
            transport: String::new(),
            measure_start_ns: 0,
            end_ns: 0,
            last_ns: 0,
        }
    }

    /// The next runs belong to `round` (from 1).
    pub fn set_round(&mut self, round: u32) {
        self.round = round;
    }

    /// A run began.
    pub(crate) fn run_started(&mut self, transport: &str, measure_start_ns: u64, end_ns: u64) {
        self.run += 1;
        self.run_started = std::time::Instant::now();
        self.transport = transport.to_string();
        self.measure_start_ns = measure_start_ns;
        self.end_ns = end_ns;
        self.last_ns = 0;
    }

    /// How often the display redraws, ns; `None` when it is off (`--quiet`).
    pub(crate) fn every_ns(&self) -> Option<u64> {
        self.enabled.then_some(if self.tty {
            TTY_EVERY_NS
        } else {
            PLAIN_EVERY_NS
        })
    }

    /// Redraw if it is time.
    pub(crate) fn tick(&mut self, region: &Region, now_ns: u64) {
        let Some(every) = self.every_ns() else {
            return;
        };
        if now_ns < self.last_ns + every {
            return;
        }
        if self.last_ns == 0 && !self.tty {
            // First tick of a plain display: wait a full interval before the first line.
            self.last_ns = now_ns;
            return;
        }
        self.last_ns = now_ns;
        let line = self.line(region, now_ns);
        let mut err = std::io::stderr().lock();
        if self.tty {
            let _ = write!(err, "\r\x1b[2K{line}");
        } else {
            let _ = writeln!(err, "{line}");
        }
        let _ = err.flush();
    }

    /// The run ended: clear the live line.
    pub(crate) fn run_finished(&mut self, _region: &Region) {
        self.finished += 1;
        self.finished_ns += self.run_started.elapsed().as_nanos() as u64;
        if self.enabled && self.tty {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }

    fn line(&self, region: &Region, now_ns: u64) -> String {
        let publisher = &region.workers[RT_PUBLISHER_SLOT];
        let subscriber = &region.workers[RT_SUBSCRIBER_SLOT];
        let elapsed_s = now_ns.saturating_sub(self.measure_start_ns) as f64 / 1e9;
        let total_s = self.end_ns.saturating_sub(self.measure_start_ns) as f64 / 1e9;
        let us = |ns: u64| ns as f64 / 1e3;
        let round = if self.rounds > 1 {
            format!(" round {}/{}", self.round, self.rounds)
        } else {
            String::new()
        };
        format!(
            "[{}/{}] {:<9}{round} {:>6.1}/{:.1} s  messages {}  send longest {:.1} us ({} over)  delivery longest {:.1} us ({} over)  | {}",
            self.run,
            self.runs,
            self.transport,
            elapsed_s.clamp(0.0, total_s),
            total_s,
            publisher.messages.load(Ordering::Relaxed),
            us(publisher.longest_ns.load(Ordering::Relaxed)),
            publisher.over_threshold.load(Ordering::Relaxed),
            us(subscriber.longest_ns.load(Ordering::Relaxed)),
            subscriber.over_threshold.load(Ordering::Relaxed),
            self.overall(),
        )
    }

    /// `total 1m 2s, about 3m 10s left`.
    fn overall(&self) -> String {
        let elapsed_ns = self.started.elapsed().as_nanos() as u64;
        let this_run_ns = self.run_started.elapsed().as_nanos() as u64;
        let remaining = remaining_ns(
            self.planned_run_ns,
            self.finished_ns.checked_div(self.finished),
            this_run_ns,
            self.runs.saturating_sub(self.run) as u64,
        );
        format!(
            "total {} elapsed, about {} left",
            clock(elapsed_ns),
            clock(remaining)
        )
    }
}

/// What is left: the rest of the current run plus `runs_to_come` runs, each taking the longer
/// of its planned length and the average of the runs so far (setup and teardown included).
fn remaining_ns(
    planned_ns: u64,
    average_ns: Option<u64>,
    this_run_ns: u64,
    runs_to_come: u64,
) -> u64 {
    let per_run = planned_ns.max(average_ns.unwrap_or(0));
    per_run.saturating_sub(this_run_ns) + runs_to_come * per_run
}

/// `75 s` as `1m 15s`; under a minute as `42s`.
fn clock(ns: u64) -> String {
    let s = ns / 1_000_000_000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, s % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_left_counts_the_current_run_and_every_run_to_come() {
        let s = 1_000_000_000;
        assert_eq!(remaining_ns(10 * s, None, 4 * s, 3), 36 * s);
        // Runs so far took 12 s each (setup included): the estimate follows them.
        assert_eq!(remaining_ns(10 * s, Some(12 * s), 4 * s, 1), 20 * s);
        // A run late past its plan leaves nothing of itself, never a negative.
        assert_eq!(remaining_ns(10 * s, None, 15 * s, 0), 0);
    }

    #[test]
    fn times_read_like_a_clock() {
        assert_eq!(clock(42_000_000_000), "42s");
        assert_eq!(clock(75_000_000_000), "1m 15s");
        assert_eq!(clock(7_500_000_000_000), "2h 05m");
    }
}
