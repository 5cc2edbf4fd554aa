//! SIGCHLD as a flag: the coordinator asks after its children (a `wait4` each) only on the
//! ticks after one of them ended, instead of every child on every 10 ms tick. With the default
//! noise a dozen short-lived workers start and end every second; most ticks see no ending.
//!
//! Owns the one SIGCHLD registration of the process. Never reaps anything itself.

use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether a child ended since the flag was last taken.
#[derive(Clone)]
pub(crate) struct ChildExits {
    ended: Arc<AtomicBool>,
    registered: bool,
}

impl ChildExits {
    /// The process's flag, registered for SIGCHLD on first use. It starts set, so the first
    /// tick looks at every child once. If the handler cannot be installed the flag reads as
    /// always set: every tick looks, as it did before.
    pub(super) fn get() -> Self {
        static FLAG: OnceLock<(Arc<AtomicBool>, bool)> = OnceLock::new();
        let (ended, registered) = FLAG.get_or_init(|| {
            let ended = Arc::new(AtomicBool::new(true));
            let registered = signal_hook::flag::register(libc::SIGCHLD, Arc::clone(&ended)).is_ok();
            (ended, registered)
        });
        ChildExits {
            ended: Arc::clone(ended),
            registered: *registered,
        }
    }

    /// True if a child may have ended since the last call: then look at every child. Taken
    /// before looking, so an ending while looking is seen on the next tick.
    pub(super) fn take(&self) -> bool {
        self.ended.swap(false, Ordering::AcqRel) || !self.registered
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_that_ends_sets_the_flag_once() {
        // Its child's end also rings the process's bell: the bell's own tests must not hear it.
        let _alone = super::super::bell::ringing_alone();
        let exits = ChildExits::get();
        exits.take();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        child.wait().unwrap();
        // The signal is delivered by the time wait returns, to some thread of this process.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while !exits.take() {
            assert!(std::time::Instant::now() < deadline, "no SIGCHLD seen");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
}
