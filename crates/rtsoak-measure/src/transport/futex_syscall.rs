//! `futex-syscall`: the baseline most RT code uses today. The subscriber blocks in `futex(2)`
//! `FUTEX_WAIT_BITSET` on the shared word (no io_uring at all); publishers bump the word and wake
//! it exactly as for `futex`, each with its bitset. One blocking wait holds one bitset, so the RT
//! subscriber can tell the RT publisher's wakes apart only when noise does not wake it
//! (covering attribution); otherwise it waits on both bits and cannot tell (none).
//!
//! Needs: any Linux; probed by a trial wait on a word whose value has moved on (`EAGAIN`).

use std::sync::atomic::{AtomicU32, Ordering};

use io_uring::{IoUring, cqueue};
use nix::errno::Errno;

use super::futex::{FROM_NOISE, FROM_RT_PUBLISHER, FutexWaker, WakeCall, wake_bitset};
use super::{Completion, Env, Mechanism, Own, Transport, Waiter, attribution_if};
use rtsoak_record::Attribution;
use rtsoak_record::Role;
use rtsoak_record::Support;
use rtsoak_sys::SysError;
use rtsoak_sys::futex::{wait_shared, wait_shared_bitset};

/// The `futex-syscall` transport.
pub(super) struct FutexSyscall;

impl Transport for FutexSyscall {
    fn about(&self) -> &'static str {
        "futex(2) FUTEX_WAIT on the shared word, no io_uring: the baseline"
    }

    fn wake_side(&self) -> &'static str {
        "as `futex`"
    }

    fn wait_side(&self) -> &'static str {
        "`futex(2)` `FUTEX_WAIT`, no io_uring: the baseline most RT code uses today"
    }

    fn requires(&self) -> &'static str {
        "any"
    }

    fn needs(&self) -> &'static str {
        "any Linux: futex(2)"
    }

    fn probe(&self, _abi: &rtsoak_record::abi::PatchedAbi) -> Support {
        let word = AtomicU32::new(1);
        match wait_shared(&word, 0, 1_000_000) {
            Err(Errno::EAGAIN) => Support::Supported,
            Err(errno) => super::missing("futex(2) FUTEX_WAIT", "trial futex wait", Some(errno)),
            Ok(()) => super::missing("futex(2) FUTEX_WAIT", "trial futex wait", Some(Errno::EIO)),
        }
    }
}

impl Mechanism for FutexSyscall {
    type Settings = super::NoSettings;
    type Waker = FutexWaker<'static>;
    type Waiter = SyscallWaiter<'static>;

    fn waker(&self, env: &Env<'_, Self::Settings>) -> anyhow::Result<Self::Waker> {
        let word = &env.region.futex_word.0;
        Ok(FutexWaker {
            word,
            call: WakeCall::Syscall(wake_bitset(env)),
        })
    }

    fn waiter(&self, env: &Env<'_, Self::Settings>) -> anyhow::Result<Self::Waiter> {
        let word = &env.region.futex_word.0;
        let only_own = env.role == Role::Subscriber && !env.noise_wakes_rt_subscriber;
        Ok(SyscallWaiter {
            word,
            expected: word.load(Ordering::Acquire),
            bitset: if only_own {
                FROM_RT_PUBLISHER
            } else {
                FROM_RT_PUBLISHER | FROM_NOISE
            },
            only_own,
        })
    }
}

pub(crate) struct SyscallWaiter<'r> {
    word: &'r AtomicU32,
    expected: u32,
    /// Whose wakes it waits for.
    bitset: u32,
    /// The RT subscriber waiting for the RT publisher's wakes alone: a wake is its own.
    only_own: bool,
}

impl Waiter for SyscallWaiter<'_> {
    const USES_RING: bool = false;

    fn attribution(&self) -> Attribution {
        attribution_if(self.only_own, Attribution::Covering)
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
        match wait_shared_bitset(self.word, self.expected, timeout_ns, self.bitset) {
            Ok(()) => Ok(Completion::Woken {
                rearm: false,
                own: if self.only_own {
                    Own::Covering
                } else {
                    Own::No
                },
            }),
            // The word moved before we slept: look at the queue; no wake carried it.
            Err(Errno::EAGAIN) => Ok(Completion::Woken {
                rearm: false,
                own: Own::No,
            }),
            Err(Errno::ETIMEDOUT) => Err(std::io::Error::from_raw_os_error(libc::ETIME)),
            Err(errno) => Err(std::io::Error::from_raw_os_error(errno as i32)),
        }
    }
}
