//! When a fresh boot is quiet enough to measure: not after a fixed sleep, but once each stated
//! condition holds, watched until it does or until `settle.timeout_s` (or the boot's deadline)
//! runs out. First, where asked and where systemd is PID 1, `systemctl is-system-running
//! --wait` must say `running` (or `degraded`, where the plan accepts it): every unit of the
//! boot has started. Then the CPUs together must have been idle at least `idle_percent` of the
//! time over the last `idle_span_s` seconds (from `/proc/stat`, sampled every second):
//! whatever the boot left running in the background (a package database update, a page cache
//! warming) has finished.
//!
//! Owns: the conditions and the watching. Never changes the system.

use std::collections::VecDeque;
use std::path::Path;
use std::time::{Duration, Instant};

use super::command::{Finished, run_program};
use super::plan::SettleSection;
use super::state::Settled;
use rtsoak_measure::coordinator::cpustat;
use rtsoak_measure::coordinator::stop::StopFlag;

use crate::sysinfo::SysRoot;

/// Why a boot did not settle.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum NotSettled {
    /// The time ran out.
    #[error(
        "not settled within {waited_s:.0} s (systemd: {}; the most idle span: {best_idle_percent:.1} % idle)",
        systemd.as_deref().unwrap_or("not asked")
    )]
    Timeout {
        /// What systemd last said.
        systemd: Option<String>,
        /// The idlest span seen, percent.
        best_idle_percent: f64,
        /// How long it waited.
        waited_s: f64,
    },
    /// systemd says the boot is degraded (a unit failed) and the plan does not accept it.
    #[error("systemd says the system is {0} (a unit failed), and settle.accept_degraded is false")]
    Degraded(String),
    /// The campaign was asked to stop.
    #[error("stopped by {0}")]
    Stopped(String),
}

/// The CPUs' idle share over a sliding span of samples.
#[derive(Debug)]
struct IdleWindow {
    span: usize,
    samples: VecDeque<(u64, u64)>,
}

impl IdleWindow {
    /// A window over `span` intervals (one more sample than that).
    fn new(span: usize) -> Self {
        IdleWindow {
            span: span.max(1),
            samples: VecDeque::new(),
        }
    }

    /// Add a sample of all CPUs' ticks (`busy`, `total`); once the window is full, the idle
    /// share over it, percent.
    fn push(&mut self, busy: u64, total: u64) -> Option<f64> {
        self.samples.push_back((busy, total));
        while self.samples.len() > self.span + 1 {
            self.samples.pop_front();
        }
        if self.samples.len() <= self.span {
            return None;
        }
        let (first, last) = (self.samples.front()?, self.samples.back()?);
        let total = last.1.checked_sub(first.1)?;
        let busy = last.0.checked_sub(first.0)?;
        (total > 0).then(|| 100.0 * (1.0 - busy as f64 / total as f64))
    }
}

/// Wait until the boot has settled as `section` says, or `until`.
pub(crate) fn settle(
    section: &SettleSection,
    root: &SysRoot,
    systemctl: Option<&Path>,
    until: Instant,
    stop: &StopFlag,
) -> Result<Settled, NotSettled> {
    let started = Instant::now();
    let until = until.min(started + Duration::from_secs(section.timeout_s));
    let systemd = match systemctl.filter(|_| section.systemd && root.exists("/run/systemd/system"))
    {
        Some(systemctl) => Some(wait_for_systemd(section, systemctl, until, started)?),
        None => None,
    };
    let mut window = IdleWindow::new(section.idle_span_s as usize);
    let mut best = 0.0f64;
    loop {
        if stop.is_set() {
            return Err(NotSettled::Stopped(stop.signal_name()));
        }
        let (busy, total) = cpustat::read(root.path(cpustat::PROC_STAT))
            .values()
            .fold((0, 0), |(b, t), cpu| (b + cpu.busy, t + cpu.total));
        if let Some(idle) = window.push(busy, total) {
            best = best.max(idle);
            if idle >= section.idle_percent {
                return Ok(Settled {
                    systemd,
                    idle_percent: (idle * 10.0).round() / 10.0,
                    waited_s: started.elapsed().as_secs_f64(),
                });
            }
        }
        if Instant::now() + Duration::from_secs(1) > until {
            return Err(NotSettled::Timeout {
                systemd,
                best_idle_percent: best,
                waited_s: started.elapsed().as_secs_f64(),
            });
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// `systemctl is-system-running --wait`, within `until`: what it said, if that settles.
fn wait_for_systemd(
    section: &SettleSection,
    systemctl: &Path,
    until: Instant,
    started: Instant,
) -> Result<String, NotSettled> {
    let timeout = || NotSettled::Timeout {
        systemd: Some("still starting".into()),
        best_idle_percent: 0.0,
        waited_s: started.elapsed().as_secs_f64(),
    };
    let ran =
        run_program(systemctl, &["is-system-running", "--wait"], until).map_err(|_| timeout())?;
    let state = match ran {
        Finished::Exited { stdout, .. } => stdout.trim().to_string(),
        Finished::TimedOut => return Err(timeout()),
    };
    match state.as_str() {
        "running" => Ok(state),
        "degraded" if section.accept_degraded => Ok(state),
        "degraded" => Err(NotSettled::Degraded(state)),
        _ => Err(NotSettled::Timeout {
            systemd: Some(state),
            best_idle_percent: 0.0,
            waited_s: started.elapsed().as_secs_f64(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_idle_share_is_over_the_whole_span_and_slides() {
        let mut window = IdleWindow::new(2);
        assert_eq!(window.push(0, 0), None);
        assert_eq!(window.push(50, 100), None);
        // Over two intervals: 60 busy of 200.
        assert_eq!(window.push(60, 200), Some(70.0));
        // The first sample leaves: 15 busy of 200 since (50, 100).
        assert_eq!(window.push(65, 300), Some(92.5));
    }

    #[test]
    fn a_counter_that_went_backwards_or_did_not_move_gives_no_share() {
        let mut window = IdleWindow::new(1);
        window.push(100, 1000);
        assert_eq!(window.push(100, 1000), None);
        assert_eq!(window.push(50, 900), None);
    }

    #[test]
    fn a_quiet_fixture_settles_at_once_and_a_stop_ends_the_wait() {
        let root = SysRoot::at(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sys/vm-2cpu"),
        );
        // A fixture's /proc/stat never moves: no span ever has ticks, so it times out, fast.
        let section = SettleSection {
            systemd: true,
            accept_degraded: true,
            idle_percent: 50.0,
            idle_span_s: 1,
            timeout_s: 2,
        };
        let result = settle(
            &section,
            &root,
            None,
            Instant::now() + Duration::from_secs(2),
            &StopFlag::default(),
        );
        assert!(
            matches!(result, Err(NotSettled::Timeout { systemd: None, .. })),
            "{result:?}"
        );
    }
}
