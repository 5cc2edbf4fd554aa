//! `futex-syscall`: the baseline most RT code uses today. The subscriber blocks in `futex(2)`
//! `FUTEX_WAIT` on the shared word (no io_uring at all); publishers bump the word and
//! `FUTEX_WAKE` it exactly as for `futex`.
//!
//! Needs: any Linux; probed by a trial wait on a word whose value has moved on (`EAGAIN`).

use std::sync::atomic::{AtomicU32, Ordering};

use io_uring::{IoUring, cqueue};
use nix::errno::Errno;

use super::futex::FutexWaker;
use super::{Completion, Support, Transport, Waiter};
use crate::sys::SysError;
use crate::sys::futex::wait_shared;
use crate::worker::{WorkerContext, publisher, subscriber};

/// The `futex-syscall` transport.
pub struct FutexSyscall;

impl Transport for FutexSyscall {
    fn name(&self) -> &'static str {
        "futex-syscall"
    }

    fn about(&self) -> &'static str {
        "futex(2) FUTEX_WAIT on the shared word, no io_uring: the baseline"
    }

    fn needs(&self) -> &'static str {
        "any Linux: futex(2)"
    }

    fn probe(&self, _abi: &crate::abi::PatchedAbi) -> Support {
        let word = AtomicU32::new(1);
        match wait_shared(&word, 0, 1_000_000) {
            Err(Errno::EAGAIN) => Support::Supported,
            Err(errno) => Support::missing("futex(2) FUTEX_WAIT", "trial futex wait", Some(errno)),
            Ok(()) => Support::missing("futex(2) FUTEX_WAIT", "trial futex wait", Some(Errno::EIO)),
        }
    }

    fn publish(&self, context: &mut WorkerContext) -> anyhow::Result<()> {
        let word = &context.region().futex_word.0;
        publisher::run(context, FutexWaker { word, sender: None })
    }

    fn subscribe(&self, context: &mut WorkerContext) -> anyhow::Result<()> {
        let word = &context.region().futex_word.0;
        let waiter = SyscallWaiter {
            word,
            expected: word.load(Ordering::Acquire),
        };
        subscriber::run(context, waiter)
    }
}

struct SyscallWaiter<'r> {
    word: &'r AtomicU32,
    expected: u32,
}

impl Waiter for SyscallWaiter<'_> {
    const USES_RING: bool = false;

    fn wake_fd(&self, _ring: Option<&IoUring>) -> i32 {
        -1
    }

    fn before_drain(&mut self) {
        self.expected = self.word.load(Ordering::SeqCst);
    }

    fn arm(&mut self, _ring: &mut IoUring) -> Result<(), SysError> {
        Ok(())
    }

    fn complete(&mut self, _cqe: &cqueue::Entry) -> Completion {
        Completion::Error(libc::EINVAL) // there is no ring, so no completion ever comes
    }

    fn block(&mut self, timeout_ns: u64) -> std::io::Result<Completion> {
        match wait_shared(self.word, self.expected, timeout_ns) {
            // Woken, or the word moved before we slept: look at the queue either way.
            Ok(()) | Err(Errno::EAGAIN) => Ok(Completion::Woken { rearm: false }),
            Err(Errno::ETIMEDOUT) => Err(std::io::Error::from_raw_os_error(libc::ETIME)),
            Err(errno) => Err(std::io::Error::from_raw_os_error(errno as i32)),
        }
    }
}
