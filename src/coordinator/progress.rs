//! Progress on stderr, drawn by the coordinator from the workers' relaxed progress counters (a
//! read of shared memory: it never disturbs the RT workers). On a terminal one line redrawn a
//! few times a second; otherwise (systemd, CI) a plain line every ten seconds.

use std::io::{IsTerminal, Write};
use std::sync::atomic::Ordering;

use crate::region::{RT_PUBLISHER_SLOT, RT_SUBSCRIBER_SLOT, Region};

const TTY_EVERY_NS: u64 = 200_000_000;
const PLAIN_EVERY_NS: u64 = 10_000_000_000;

/// Progress display state.
pub struct Progress {
    tty: bool,
    enabled: bool,
    run: usize,
    runs: usize,
    transport: String,
    measure_start_ns: u64,
    end_ns: u64,
    last_ns: u64,
}

impl Progress {
    /// A display for `runs` runs; `enabled` false silences it (`--quiet`).
    pub fn new(runs: usize, enabled: bool) -> Self {
        Progress {
            tty: std::io::stderr().is_terminal(),
            enabled,
            run: 0,
            runs,
            transport: String::new(),
            measure_start_ns: 0,
            end_ns: 0,
            last_ns: 0,
        }
    }

    /// A run began.
    pub fn run_started(&mut self, transport: &str, measure_start_ns: u64, end_ns: u64) {
        self.run += 1;
        self.transport = transport.to_string();
        self.measure_start_ns = measure_start_ns;
        self.end_ns = end_ns;
        self.last_ns = 0;
    }

    /// Redraw if it is time.
    pub fn tick(&mut self, region: &Region, now_ns: u64) {
        let every = if self.tty {
            TTY_EVERY_NS
        } else {
            PLAIN_EVERY_NS
        };
        if !self.enabled || now_ns < self.last_ns + every {
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
    pub fn run_finished(&mut self, _region: &Region) {
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
        format!(
            "[{}/{}] {:<9} {:>6.1}/{:.0} s  messages {}  send longest {:.1} us ({} over)  delivery longest {:.1} us ({} over)",
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
        )
    }
}
