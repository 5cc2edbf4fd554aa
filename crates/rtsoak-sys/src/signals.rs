//! Signal dispositions set at process start, and signal sets.

use nix::sys::signal::{SigHandler, SigSet, Signal, signal};

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

/// The set holding just `signal`, real-time signals included (nix's `Signal` has none of those).
pub fn set_of(signal: i32) -> SigSet {
    let mut raw = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigemptyset initialises the set it is given, and sigaddset adds a signal to the
    // initialised set; a signal out of range only makes it fail, leaving the set empty.
    unsafe {
        libc::sigemptyset(raw.as_mut_ptr());
        libc::sigaddset(raw.as_mut_ptr(), signal);
        SigSet::from_sigset_t_unchecked(raw.assume_init())
    }
}
