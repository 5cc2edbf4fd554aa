//! `futex`: one-shot `IORING_OP_FUTEX_WAIT` on a shared word, re-armed after every wakeup. The
//! publisher bumps the word and wakes every waiter with one call: `futex(2)` `FUTEX_WAKE_BITSET`,
//! or `IORING_OP_FUTEX_WAKE` from its own ring (profile `rt.futex_wake`).
//!
//! Whose wake it was: the RT publisher wakes with bitset [`FROM_RT_PUBLISHER`], noise publishers
//! with [`FROM_NOISE`]. The RT subscriber keeps one wait per bitset (the noise one only when noise
//! wakes it), so a completion of its RT wait is the RT publisher's own wake: it carries every RT
//! message published before it (covering attribution; a futex wake does not say for which
//! message). Noise subscribers wait on both bits. Every wake and wait is on the same word, so
//! all of them still contend on the same futex hash bucket.
//!
//! Needs: Linux 6.7 (`IORING_OP_FUTEX_WAIT`, `IORING_OP_FUTEX_WAKE`); probed by io_uring opcode
//! probe and a trial wait/wake on a local word. The word is in a memfd mapping shared by
//! processes, so neither side may use `FUTEX2_PRIVATE`: a private futex is keyed by the
//! process's mm, and a wake would silently miss waiters in other processes.

use std::sync::atomic::{AtomicU32, Ordering};

use super::sender::RingSender;
use super::{
    ARM_USER_DATA, Completion, Env, Mechanism, Own, Transport, Waiter, Waker, attribution_if,
    require_opcodes,
};
use io_uring::{IoUring, cqueue, opcode};
use nix::errno::Errno;
use rtsoak_record::Attribution;
use rtsoak_record::Role;
use rtsoak_record::Support;
use rtsoak_record::transport::futex::{FutexSettings, FutexWake};
use rtsoak_sys::SysError;
use rtsoak_sys::futex::{FUTEX_BITSET_MATCH_ANY, FUTEX2_SIZE_U32, wake_shared_bitset};
use rtsoak_sys::queue::Message;
use rtsoak_sys::region::Region;
use rtsoak_sys::uring::{self, Sqe, push};

/// The `futex` transport.
pub(super) struct Futex;

impl Transport for Futex {
    fn about(&self) -> &'static str {
        "one-shot IORING_OP_FUTEX_WAIT, re-armed per wakeup; woken by futex(2) or IORING_OP_FUTEX_WAKE"
    }

    fn wake_side(&self) -> &'static str {
        "bump the shared futex word, `futex(2)` `FUTEX_WAKE` (or `IORING_OP_FUTEX_WAKE` with `--futex-wake io-uring`)"
    }

    fn wait_side(&self) -> &'static str {
        "`IORING_OP_FUTEX_WAIT`, re-armed after every wakeup"
    }

    fn requires(&self) -> &'static str {
        "Linux 6.7"
    }

    fn needs(&self) -> &'static str {
        "Linux 6.7: IORING_OP_FUTEX_WAIT and IORING_OP_FUTEX_WAKE"
    }

    fn probe(&self, _abi: &rtsoak_record::abi::PatchedAbi) -> Support {
        Support::from_steps(|| {
            require_opcodes(&[
                (opcode::FutexWait::CODE, "IORING_OP_FUTEX_WAIT"),
                (opcode::FutexWake::CODE, "IORING_OP_FUTEX_WAKE"),
            ])?;
            super::trial("IORING_OP_FUTEX_WAIT", trial())
        })
    }
}

/// Its flag.
#[derive(Debug, Default, Clone, clap::Args)]
#[group(skip)]
pub(crate) struct FutexFlags {
    /// How the futex transport wakes.
    #[arg(long, value_enum)]
    pub(crate) futex_wake: Option<FutexWake>,
}

impl super::OwnSettings for FutexSettings {
    type Flags = FutexFlags;

    fn overridden(&self, flags: &FutexFlags) -> Self {
        FutexSettings {
            futex_wake: flags.futex_wake.unwrap_or(self.futex_wake),
        }
    }
}

impl Mechanism for Futex {
    type Settings = FutexSettings;
    type Waker = FutexWaker<'static>;
    type Waiter = FutexWaiter<'static>;

    fn waker(&self, env: &Env<'_, Self::Settings>) -> anyhow::Result<Self::Waker> {
        let word = &env.region.futex_word.0;
        let bitset = wake_bitset(env);
        let call = match env.settings.futex_wake {
            FutexWake::Syscall => WakeCall::Syscall(bitset),
            FutexWake::IoUring => {
                let wake =
                    Sqe::futex_wake(word, i32::MAX as u64, u64::from(bitset), FUTEX2_SIZE_U32);
                WakeCall::Ring(RingSender::new(env.ring_setup)?, wake.user_data(0))
            }
        };
        Ok(FutexWaker { word, call })
    }

    fn waiter(&self, env: &Env<'_, Self::Settings>) -> anyhow::Result<Self::Waiter> {
        let word = &env.region.futex_word.0;
        let rt_subscriber = env.role == Role::Subscriber;
        let waits = if !rt_subscriber {
            vec![Wait::new(FROM_RT_PUBLISHER | FROM_NOISE, ARM_USER_DATA)]
        } else if env.noise_wakes_rt_subscriber {
            vec![
                Wait::new(FROM_RT_PUBLISHER, ARM_USER_DATA),
                Wait::new(FROM_NOISE, ARM_USER_DATA - 1),
            ]
        } else {
            vec![Wait::new(FROM_RT_PUBLISHER, ARM_USER_DATA)]
        };
        Ok(FutexWaiter {
            word,
            expected: word.load(Ordering::Acquire),
            waits,
            rt_subscriber,
        })
    }
}

/// Arm a wait on a local word whose value has already moved on: a working kernel completes it
/// at once with `-EAGAIN`. Catches kernels (or seccomp filters) that list the opcode but refuse it.
fn trial() -> Result<(), SysError> {
    let (mut ring, _) = uring::build(rtsoak_sys::uring::SetupFlags::None)?;
    let word = AtomicU32::new(1);
    let wait = Sqe::futex_wait(&word, 0, FUTEX_BITSET_MATCH_ANY, FUTEX2_SIZE_U32).user_data(1);
    trial_wait(&mut ring, &wait)
}

/// Submit `wait`, a futex wait on a word whose value has moved on, and check that it completes
/// with `-EAGAIN` (shared with `persistent-futex`, whose wait is flagged persistent).
pub(super) fn trial_wait(ring: &mut IoUring, wait: &Sqe) -> Result<(), SysError> {
    push(ring, wait)?;
    ring.submit_and_wait(1)
        .map_err(|e| SysError::from_io("io_uring_enter", &e))?;
    let result = ring
        .completion()
        .next()
        .map_or(-libc::EIO, |cqe| cqe.result());
    match result {
        r if r == -libc::EAGAIN => Ok(()),
        r if r < 0 => Err(SysError::new("IORING_OP_FUTEX_WAIT", Errno::from_raw(-r))),
        _ => Err(SysError::new("IORING_OP_FUTEX_WAIT", Errno::EIO)),
    }
}

/// The bitset of the RT publisher's wakes.
pub(super) const FROM_RT_PUBLISHER: u32 = 0b01;
/// The bitset of noise publishers' wakes.
pub(super) const FROM_NOISE: u32 = 0b10;

/// The bitset the publisher of `env` wakes with.
pub(super) fn wake_bitset<S>(env: &Env<'_, S>) -> u32 {
    if env.role == Role::Publisher {
        FROM_RT_PUBLISHER
    } else {
        FROM_NOISE
    }
}

/// Bump the word, then wake every waiter whose bitset holds ours. One call wakes every
/// subscriber. Shared with `futex-syscall`, whose subscribers wait on the same word without
/// io_uring, and `persistent-futex`, which wakes the slot its ring registered for the word.
pub(crate) struct FutexWaker<'r> {
    pub(super) word: &'r AtomicU32,
    pub(super) call: WakeCall,
}

/// How a [`FutexWaker`] wakes the word's waiters.
#[allow(
    clippy::large_enum_variant,
    reason = "one per publisher; a box would add a load to every timed wake"
)]
pub(crate) enum WakeCall {
    /// `futex(2)` `FUTEX_WAKE_BITSET` with this bitset, [`FROM_RT_PUBLISHER`] or [`FROM_NOISE`].
    Syscall(u32),
    /// This SQE (an `IORING_OP_FUTEX_WAKE`, built once), submitted from this ring.
    Ring(RingSender, Sqe),
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
        match &mut self.call {
            WakeCall::Syscall(bitset) => wake_shared_bitset(self.word, i32::MAX, *bitset).map(drop),
            WakeCall::Ring(sender, wake) => sender.send(wake),
        }
    }

    fn settle(&mut self) -> Result<(), Errno> {
        match &mut self.call {
            WakeCall::Syscall(_) => Ok(()),
            WakeCall::Ring(sender, _) => sender.settle(),
        }
    }
}

/// One one-shot wait on the word for one bitset.
#[derive(Debug, Clone, Copy)]
struct Wait {
    bitset: u32,
    user_data: u64,
    armed: bool,
}

impl Wait {
    fn new(bitset: u32, user_data: u64) -> Self {
        Wait {
            bitset,
            user_data,
            armed: false,
        }
    }
}

/// One-shot waits on the word, one per bitset, each expecting the value seen before the last
/// drain; a completed wait is armed again, the others stay in the kernel.
pub(crate) struct FutexWaiter<'r> {
    word: &'r AtomicU32,
    expected: u32,
    waits: Vec<Wait>,
    /// The RT subscriber: a wake of its [`FROM_RT_PUBLISHER`] wait is the RT publisher's own.
    rt_subscriber: bool,
}

impl Waiter for FutexWaiter<'_> {
    fn attribution(&self) -> Attribution {
        attribution_if(self.rt_subscriber, Attribution::Covering)
    }

    fn before_drain(&mut self) {
        self.expected = self.word.load(Ordering::SeqCst);
    }

    fn arm(&mut self, ring: &mut IoUring) -> Result<(), SysError> {
        for wait in self.waits.iter_mut().filter(|w| !w.armed) {
            let sqe = Sqe::futex_wait(
                self.word,
                u64::from(self.expected),
                u64::from(wait.bitset),
                FUTEX2_SIZE_U32,
            )
            .user_data(wait.user_data);
            push(ring, &sqe)?;
            wait.armed = true;
        }
        Ok(())
    }

    fn complete(&mut self, cqe: &cqueue::Entry) -> Completion {
        let Some(wait) = self
            .waits
            .iter_mut()
            .find(|w| w.user_data == cqe.user_data())
        else {
            return Completion::Foreign { rearm: false };
        };
        wait.armed = false;
        let own_wait = self.rt_subscriber && wait.bitset == FROM_RT_PUBLISHER;
        match cqe.result() {
            // Woken through the RT publisher's bitset: its own wake.
            0 if own_wait => Completion::Woken {
                rearm: true,
                own: Own::Covering,
            },
            // Woken by a noise publisher, or the word moved before the wait was armed: either
            // way, look at the queue; no wake carried what is found there.
            r if r == 0 || r == -libc::EAGAIN => Completion::Woken {
                rearm: true,
                own: Own::No,
            },
            r => Completion::Error(-r),
        }
    }
}
