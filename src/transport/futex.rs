//! `futex`: one-shot `IORING_OP_FUTEX_WAIT` on a shared word, re-armed after every wakeup. The
//! publisher bumps the word and wakes every waiter with one call: `futex(2)` `FUTEX_WAKE`, or
//! `IORING_OP_FUTEX_WAKE` from its own ring (profile `rt.futex_wake`).
//!
//! Needs: Linux 6.7 (`IORING_OP_FUTEX_WAIT`, `IORING_OP_FUTEX_WAKE`); probed by io_uring opcode
//! probe and a trial wait/wake on a local word. The word is in a memfd mapping shared by
//! processes, so neither side may use `FUTEX2_PRIVATE` (kernel-notes, pitfall 6).

use std::sync::atomic::{AtomicU32, Ordering};

use io_uring::{IoUring, cqueue, opcode};
use nix::errno::Errno;

use super::sender::RingSender;
use super::{ARM_USER_DATA, Completion, Support, Transport, Waiter, Waker, push, require_opcodes};
use crate::plan::FutexWake;
use crate::queue::Message;
use crate::region::Region;
use crate::sys::futex::{FUTEX_BITSET_MATCH_ANY, FUTEX2_SIZE_U32, wake_shared};
use crate::sys::{SysError, uring};
use crate::worker::{WorkerContext, publisher, subscriber};

/// The `futex` transport.
pub struct Futex;

impl Transport for Futex {
    fn name(&self) -> &'static str {
        "futex"
    }

    fn about(&self) -> &'static str {
        "one-shot IORING_OP_FUTEX_WAIT, re-armed per wakeup; woken by futex(2) or IORING_OP_FUTEX_WAKE"
    }

    fn needs(&self) -> &'static str {
        "Linux 6.7: IORING_OP_FUTEX_WAIT and IORING_OP_FUTEX_WAKE"
    }

    fn probe(&self, _abi: &crate::abi::PatchedAbi) -> Support {
        Support::from_steps(|| {
            require_opcodes(&[
                (opcode::FutexWait::CODE, "IORING_OP_FUTEX_WAIT"),
                (opcode::FutexWake::CODE, "IORING_OP_FUTEX_WAKE"),
            ])?;
            super::trial("IORING_OP_FUTEX_WAIT", trial())
        })
    }

    fn publish(&self, context: &mut WorkerContext) -> anyhow::Result<()> {
        let word = &context.region().futex_word.0;
        let waker = FutexWaker {
            word,
            sender: match context.spec.futex_wake {
                FutexWake::Syscall => None,
                FutexWake::IoUring => Some(RingSender::new(context.spec.ring_setup)?),
            },
        };
        publisher::run(context, waker)
    }

    fn subscribe(&self, context: &mut WorkerContext) -> anyhow::Result<()> {
        let word = &context.region().futex_word.0;
        let waiter = FutexWaiter {
            word,
            expected: word.load(Ordering::Acquire),
        };
        subscriber::run(context, waiter)
    }
}

/// Arm a wait on a local word whose value has already moved on: a working kernel completes it
/// at once with `-EAGAIN`. Catches kernels (or seccomp filters) that list the opcode but refuse it.
fn trial() -> Result<(), SysError> {
    let (mut ring, _) = uring::build(crate::plan::RingSetup::None)?;
    let word = AtomicU32::new(1);
    let wait = opcode::FutexWait::new(word.as_ptr(), 0, FUTEX_BITSET_MATCH_ANY, FUTEX2_SIZE_U32)
        .build()
        .user_data(1);
    push(&mut ring, &wait)?;
    ring.submit_and_wait(1)
        .map_err(|e| SysError::from_io("io_uring_enter", &e))?;
    let cqe = ring
        .completion()
        .next()
        .ok_or(SysError::new("IORING_OP_FUTEX_WAIT", Errno::EIO))?;
    match cqe.result() {
        r if r == -libc::EAGAIN => Ok(()),
        r if r < 0 => Err(SysError::new("IORING_OP_FUTEX_WAIT", Errno::from_raw(-r))),
        _ => Err(SysError::new("IORING_OP_FUTEX_WAIT", Errno::EIO)),
    }
}

/// Bump the word, then wake all waiters on it. One call wakes every subscriber. Shared with
/// `futex-syscall`, whose subscribers wait on the same word without io_uring.
pub(super) struct FutexWaker<'r> {
    pub(super) word: &'r AtomicU32,
    /// `None`: wake with `futex(2)`; else with `IORING_OP_FUTEX_WAKE` from this ring.
    pub(super) sender: Option<RingSender>,
}

impl Waker for FutexWaker<'_> {
    fn refresh(&mut self, _region: &Region) -> Result<(), SysError> {
        Ok(()) // waiters find the word themselves
    }

    fn targets(&self) -> usize {
        1
    }

    #[inline]
    fn wake(&mut self, _index: usize, _message: &Message) -> Result<(), Errno> {
        self.word.fetch_add(1, Ordering::SeqCst);
        match &mut self.sender {
            None => wake_shared(self.word, i32::MAX).map(drop),
            Some(sender) => {
                let wake = opcode::FutexWake::new(
                    self.word.as_ptr(),
                    i32::MAX as u64,
                    FUTEX_BITSET_MATCH_ANY,
                    FUTEX2_SIZE_U32,
                )
                .build()
                .user_data(0);
                // SAFETY: the word lives in the shared region, mapped for the worker's life.
                unsafe { sender.send(&wake) }
            }
        }
    }

    fn settle(&mut self) -> Result<(), Errno> {
        self.sender.as_mut().map_or(Ok(()), RingSender::settle)
    }
}

/// One-shot waits on the word, each expecting the value seen before the last drain.
struct FutexWaiter<'r> {
    word: &'r AtomicU32,
    expected: u32,
}

impl Waiter for FutexWaiter<'_> {
    fn wake_fd(&self, _ring: Option<&IoUring>) -> i32 {
        -1
    }

    fn before_drain(&mut self) {
        self.expected = self.word.load(Ordering::SeqCst);
    }

    fn arm(&mut self, ring: &mut IoUring) -> Result<(), SysError> {
        let wait = opcode::FutexWait::new(
            self.word.as_ptr(),
            u64::from(self.expected),
            FUTEX_BITSET_MATCH_ANY,
            FUTEX2_SIZE_U32,
        )
        .build()
        .user_data(ARM_USER_DATA);
        push(ring, &wait)
    }

    fn complete(&mut self, cqe: &cqueue::Entry) -> Completion {
        match cqe.result() {
            // Woken, or the word moved before the wait was armed: either way, look at the queue.
            0 => Completion::Woken { rearm: true },
            r if r == -libc::EAGAIN => Completion::Woken { rearm: true },
            r => Completion::Error(-r),
        }
    }
}
