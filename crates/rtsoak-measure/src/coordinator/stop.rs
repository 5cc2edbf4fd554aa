//! SIGINT, SIGTERM and SIGHUP for the coordinator: the first one asks the run to stop (workers
//! finish, what was measured is saved, marked interrupted); a second one of the same kind exits
//! at once (workers die with the coordinator through `PR_SET_PDEATHSIG`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Set by the first stop signal; holds its number.
#[derive(Clone, Default)]
pub struct StopFlag {
    signal: Arc<AtomicUsize>,
}

impl StopFlag {
    /// Install the handlers.
    pub fn install() -> anyhow::Result<Self> {
        let flag = StopFlag::default();
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            let seen = Arc::new(std::sync::atomic::AtomicBool::new(false));
            // A second signal of the same kind while stopping: leave now, with the shell's
            // 128 + signal convention.
            signal_hook::flag::register_conditional_shutdown(
                signal,
                128 + signal,
                Arc::clone(&seen),
            )?;
            signal_hook::flag::register(signal, seen)?;
            signal_hook::flag::register_usize(signal, Arc::clone(&flag.signal), signal as usize)?;
        }
        Ok(flag)
    }

    /// True once a stop signal arrived.
    pub fn is_set(&self) -> bool {
        self.signal.load(Ordering::Relaxed) != 0
    }

    /// The signal that arrived, or 0.
    pub(crate) fn signal(&self) -> i32 {
        self.signal.load(Ordering::Relaxed) as i32
    }

    /// Its name (`SIGINT`).
    pub fn signal_name(&self) -> String {
        match nix::sys::signal::Signal::try_from(self.signal()) {
            Ok(signal) => signal.as_str().to_string(),
            Err(_) => "a signal".to_string(),
        }
    }
}
