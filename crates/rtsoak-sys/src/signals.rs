//! Signal dispositions set at process start.

use nix::sys::signal::{SigHandler, Signal, signal};

/// Ignore each of `signals` (a worker does, for the ones meant for the whole process group:
/// the coordinator decides when workers stop).
pub fn ignore(signals: &[Signal]) {
    for &each in signals {
        // SAFETY: SIG_IGN installs no handler code, so nothing can run in signal context.
        let _ = unsafe { signal(each, SigHandler::SigIgn) };
    }
}

/// Give `signal` its default disposition back (the coordinator does for SIGPIPE, which the Rust
/// runtime ignores, so that `rtsoak ... | head` ends quietly instead of failing a write).
pub fn restore_default(each: Signal) {
    // SAFETY: SIG_DFL installs no handler code.
    let _ = unsafe { signal(each, SigHandler::SigDfl) };
}
