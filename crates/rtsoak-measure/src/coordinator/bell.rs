//! The coordinator's wake-up bell: a self-pipe that SIGINT, SIGTERM, SIGHUP and SIGCHLD write a
//! byte to, which the coordinator sleeps on (`rtsoak_sys::clock::sleep_until_ns_or_ready`).
//!
//! Its sleeps are long where it shares the RT CPUs (up to a second; a `--floor` run's lasts to
//! its planned end), so a signal must end one whenever it arrives: a handler that runs just
//! before the sleep begins, or in another thread, leaves its byte in the pipe and the sleep
//! does not start. The flags the handlers set ([`super::stop::StopFlag`],
//! [`super::exits::ChildExits`]) still say what happened; the bell only wakes.
//!
//! An RT worker watching `--on-threshold` is given a write end too ([`Bell::ringer`]): the
//! sample it publishes in the shared region is acted on at once, not at the next tick.
//!
//! Owns the pipe, registered once for the process. Never handles a signal itself.

use std::io::Read;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::sync::OnceLock;

/// The signals that must wake the coordinator.
const SIGNALS: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGCHLD];

/// The two ends of a made bell.
struct Ends {
    reader: UnixStream,
    writer: UnixStream,
}

/// The process's bell; `None` where it could not be made, and the coordinator then sleeps to its
/// deadlines as a plain timer.
pub(super) struct Bell {
    ends: Option<&'static Ends>,
}

impl Bell {
    /// The process's bell, made and registered on first use.
    pub(super) fn get() -> Self {
        static ENDS: OnceLock<Option<Ends>> = OnceLock::new();
        Bell {
            ends: ENDS.get_or_init(|| make().ok()).as_ref(),
        }
    }

    /// What to sleep on, if there is a bell.
    pub(super) fn fd(&self) -> Option<BorrowedFd<'static>> {
        self.ends.map(|ends| ends.reader.as_fd())
    }

    /// A write end to give a worker, if there is a bell: one byte written on it wakes the
    /// coordinator as a signal does.
    pub(super) fn ringer(&self) -> Option<BorrowedFd<'static>> {
        self.ends.map(|ends| ends.writer.as_fd())
    }

    /// Empty the pipe after a wake: one wake answers every signal that rang before it.
    pub(super) fn drain(&self) {
        let Some(mut reader) = self.ends.map(|ends| &ends.reader) else {
            return;
        };
        let mut buffer = [0u8; 64];
        while matches!(reader.read(&mut buffer), Ok(n) if n > 0) {}
    }
}

/// A non-blocking socket pair, its write end registered for every signal in [`SIGNALS`].
fn make() -> std::io::Result<Ends> {
    let (reader, writer) = UnixStream::pair()?;
    reader.set_nonblocking(true)?;
    for signal in SIGNALS {
        signal_hook::low_level::pipe::register(signal, writer.try_clone()?)?;
    }
    Ok(Ends { reader, writer })
}

/// The bell is the process's: a test that rings it, or makes a child whose end (SIGCHLD) rings
/// it, holds this, so that a test of the bell hears only its own.
#[cfg(test)]
pub(crate) fn ringing_alone() -> std::sync::MutexGuard<'static, ()> {
    static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    ONE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_that_ends_rings_the_bell_and_a_drain_silences_it() {
        let _alone = ringing_alone();
        let bell = Bell::get();
        bell.drain();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        child.wait().unwrap();
        let far_ns = rtsoak_sys::clock::now_ns() + 10_000_000_000;
        let fd = bell.fd().expect("a bell on this machine");
        assert!(rtsoak_sys::clock::sleep_until_ns_or_ready(far_ns, fd));
        bell.drain();
        let soon_ns = rtsoak_sys::clock::now_ns() + 2_000_000;
        assert!(!rtsoak_sys::clock::sleep_until_ns_or_ready(soon_ns, fd));
    }

    #[test]
    fn a_byte_from_a_worker_rings_the_bell() {
        use std::io::Write;
        let _alone = ringing_alone();
        let bell = Bell::get();
        bell.drain();
        let ringer = bell.ringer().expect("a bell on this machine");
        let mut worker = UnixStream::from(ringer.try_clone_to_owned().unwrap());
        worker.write_all(&[1]).unwrap();
        let far_ns = rtsoak_sys::clock::now_ns() + 10_000_000_000;
        assert!(rtsoak_sys::clock::sleep_until_ns_or_ready(
            far_ns,
            bell.fd().unwrap()
        ));
        bell.drain();
    }
}
