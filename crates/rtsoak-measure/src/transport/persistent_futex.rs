//! `persistent-futex`: the persistent futex wait with registered wakes proposed by the RFC
//! "io_uring: futex wakeups that a preempted lower-priority task cannot delay" (2026-10-22). The
//! publisher registers the futex word with its ring once and wakes the registered slot; the
//! subscriber arms one wait that stays armed and posts a completion per wakeup.
//!
//! Needs: a kernel with the unmerged RFC patch. Everything assumed about its ABI is in
//! `crate::abi::persistent_futex` and overridable in the profile's `[abi.persistent-futex]`.
//! Probed by a trial registration and a trial persistent wait; on mainline the registration
//! fails with `EINVAL` and the transport is reported unsupported with that call and errno.

use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU32, Ordering};

use io_uring::{IoUring, cqueue, opcode};
use nix::errno::Errno;

use super::futex::{FutexWaker, WakeCall, trial_wait};
use super::sender::RingSender;
use super::{ARM_USER_DATA, Completion, Env, Mechanism, Own, Transport, Waiter};
use crate::abi::persistent_futex::{Abi, register_word, still_armed, wait_sqe, wake_sqe};
use rtsoak_record::Attribution;
use rtsoak_record::Support;
use rtsoak_record::abi::PatchedAbi;
use rtsoak_sys::SysError;
use rtsoak_sys::uring::{OpcodeSupport, build, push};

/// The `persistent-futex` transport.
pub(super) struct PersistentFutex;

/// What the probe reports as missing.
const FEATURE: &str = "persistent futex waits and registered wakes (unmerged RFC)";

impl Transport for PersistentFutex {
    fn about(&self) -> &'static str {
        "one IORING_OP_FUTEX_WAIT that stays armed, woken through a registered futex slot (RFC)"
    }

    fn wake_side(&self) -> &'static str {
        "`IORING_OP_FUTEX_WAKE` of a futex slot registered with the publisher's ring once"
    }

    fn wait_side(&self) -> &'static str {
        "one `IORING_OP_FUTEX_WAIT` that stays armed, a completion per wakeup"
    }

    fn requires(&self) -> &'static str {
        "the unmerged RFC \"io_uring: futex wakeups that a preempted lower-priority task cannot delay\" (2026-10-22, io-uring mailing list)"
    }

    fn needs(&self) -> &'static str {
        "a kernel with the persistent futex wait RFC (not in mainline); ABI in crates/rtsoak-measure/src/abi/persistent_futex.rs"
    }

    fn probe(&self, abi: &PatchedAbi) -> Support {
        let abi = &abi.persistent_futex;
        let ops = match OpcodeSupport::query() {
            Ok(ops) => ops,
            Err(e) => return super::missing("io_uring", "io_uring_setup", Some(e.errno)),
        };
        // Name the opcode that is missing: a kernel may have the wait and not the wake.
        let opcodes = [
            (opcode::FutexWait::CODE, "IORING_OP_FUTEX_WAIT"),
            (opcode::FutexWake::CODE, "IORING_OP_FUTEX_WAKE"),
        ];
        if let Some((_, name)) = opcodes.into_iter().find(|(code, _)| !ops.has(*code)) {
            return super::missing(name, "io_uring opcode probe", None);
        }
        match trial(abi) {
            Ok(()) => Support::Supported,
            Err((probe, errno)) => super::missing(FEATURE, &probe, Some(errno)),
        }
    }
}

impl Mechanism for PersistentFutex {
    type Settings = super::NoSettings;
    type Waker = FutexWaker<'static>;
    type Waiter = PersistentWaiter<'static>;

    fn waker(&self, env: &Env<'_, Self::Settings>) -> anyhow::Result<Self::Waker> {
        let abi = env.abi.persistent_futex;
        let word = &env.region.futex_word.0;
        let sender = RingSender::new(env.ring_setup)?;
        register_word(&abi, sender.ring().as_raw_fd(), word.as_ptr())
            .map_err(|errno| anyhow::anyhow!("{}: {errno}", registration_call(&abi)))?;
        // Bump the word and wake registered slot 0 from the publisher's ring.
        let call = WakeCall::Ring(sender, wake_sqe(&abi, 0, 0));
        Ok(FutexWaker { word, call })
    }

    fn waiter(&self, env: &Env<'_, Self::Settings>) -> anyhow::Result<Self::Waiter> {
        let abi = env.abi.persistent_futex;
        let word = &env.region.futex_word.0;
        let expected = word.load(Ordering::Acquire);
        Ok(PersistentWaiter {
            word,
            expected,
            abi,
        })
    }
}

fn registration_call(abi: &Abi) -> String {
    format!(
        "io_uring_register(IORING_REGISTER_FUTEX = {}, assumed; set abi.persistent-futex.register_opcode)",
        abi.register_opcode
    )
}

/// Register a local word, then arm a persistent wait on it with a stale value: a patched kernel
/// accepts the registration and completes the wait with `-EAGAIN`.
fn trial(abi: &Abi) -> Result<(), (String, Errno)> {
    let (mut ring, _) = build(rtsoak_sys::uring::SetupFlags::None)
        .map_err(|e| ("io_uring_setup".to_string(), e.errno))?;
    let word = AtomicU32::new(1);
    register_word(abi, ring.as_raw_fd(), word.as_ptr())
        .map_err(|errno| (registration_call(abi), errno))?;
    trial_wait(&mut ring, &wait_sqe(abi, &word, 0, 1)).map_err(|e| {
        let wait_call = format!(
            "persistent IORING_OP_FUTEX_WAIT (futex_flags = {:#x}, assumed)",
            abi.wait_flag
        );
        (wait_call, e.errno)
    })
}

/// One wait, armed once; re-armed only if the kernel ends it.
pub(crate) struct PersistentWaiter<'r> {
    word: &'r AtomicU32,
    expected: u32,
    abi: Abi,
}

impl Waiter for PersistentWaiter<'_> {
    /// The registered wake of the RFC carries no bitset rtsoak could tell apart.
    fn attribution(&self) -> Attribution {
        Attribution::None
    }

    fn before_drain(&mut self) {
        self.expected = self.word.load(Ordering::SeqCst);
    }

    fn arm(&mut self, ring: &mut IoUring) -> Result<(), SysError> {
        push(
            ring,
            &wait_sqe(&self.abi, self.word, self.expected, ARM_USER_DATA),
        )
    }

    fn complete(&mut self, cqe: &cqueue::Entry) -> Completion {
        match cqe.result() {
            r if r == 0 || r == -libc::EAGAIN => Completion::Woken {
                own: Own::No,
                rearm: !still_armed(cqe.flags()),
            },
            r => Completion::Error(-r),
        }
    }
}
