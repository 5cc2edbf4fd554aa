//! `eventfd-multishot`: a mainline way to keep one wait armed. The subscriber arms one multishot
//! `IORING_OP_POLL_ADD` on its eventfd, which posts a completion each time the eventfd becomes
//! readable and stays armed; the subscriber then drains the count with a non-blocking `read`.
//! Publishers `write(2)` exactly as for `eventfd`, and the count tells the RT publisher's wakes
//! apart the same way.
//!
//! Needs: Linux 5.13 (multishot `IORING_OP_POLL_ADD`) and `pidfd_getfd`; probed by opcode probe
//! and a trial multishot poll on a local eventfd.

use std::os::fd::{AsFd, AsRawFd};

use io_uring::{IoUring, cqueue, opcode};
use nix::errno::Errno;
use nix::sys::eventfd::{EfdFlags, EventFd};

use super::eventfd::{CountDecoder, EventfdWaker, nonblocking_eventfd};
use super::{ARM_USER_DATA, Completion, Env, Mechanism, Own, Transport, Waiter, require_opcodes};
use rtsoak_record::Attribution;
use rtsoak_record::Support;
use rtsoak_sys::SysError;
use rtsoak_sys::uring::{Sqe, build, push};

/// The `eventfd-multishot` transport.
pub(super) struct EventfdMultishot;

impl Transport for EventfdMultishot {
    fn about(&self) -> &'static str {
        "write(2) to each subscriber's eventfd; one multishot POLL_ADD stays armed on it"
    }

    fn wake_side(&self) -> &'static str {
        "`write(2)` on each subscriber's eventfd"
    }

    fn wait_side(&self) -> &'static str {
        "one multishot `IORING_OP_POLL_ADD` that stays armed, the count drained by `read`"
    }

    fn requires(&self) -> &'static str {
        "Linux 5.13, `pidfd_getfd`"
    }

    fn needs(&self) -> &'static str {
        "Linux 5.13: multishot IORING_OP_POLL_ADD; Linux 5.6: pidfd_getfd"
    }

    fn probe(&self, _abi: &rtsoak_record::abi::PatchedAbi) -> Support {
        Support::from_steps(|| {
            require_opcodes(&[(opcode::PollAdd::CODE, "IORING_OP_POLL_ADD")])?;
            super::trial("multishot IORING_OP_POLL_ADD", trial())?;
            super::trial("pidfd_getfd", super::targets::RemoteFd::trial())
        })
    }
}

impl Mechanism for EventfdMultishot {
    type Settings = super::NoSettings;
    type Waker = EventfdWaker;
    type Waiter = MultishotWaiter;

    fn waker(&self, env: &Env<'_, Self::Settings>) -> anyhow::Result<Self::Waker> {
        Ok(EventfdWaker::new(env))
    }

    fn waiter(&self, env: &Env<'_, Self::Settings>) -> anyhow::Result<Self::Waiter> {
        let eventfd = nonblocking_eventfd()?;
        let decoder = CountDecoder::new(env);
        Ok(MultishotWaiter { eventfd, decoder })
    }
}

/// Arm a multishot poll on a readable eventfd: a kernel with multishot polls completes it with
/// `POLLIN` and `IORING_CQE_F_MORE` (still armed).
fn trial() -> Result<(), SysError> {
    let (mut ring, _) = build(rtsoak_sys::uring::SetupFlags::None)?;
    let eventfd = EventFd::from_value_and_flags(1, EfdFlags::EFD_CLOEXEC)
        .map_err(|e| SysError::new("eventfd2", e))?;
    let poll = Sqe::poll_add(eventfd.as_fd().as_raw_fd(), libc::POLLIN as u32, true);
    push(&mut ring, &poll.user_data(1))?;
    ring.submit_and_wait(1)
        .map_err(|e| SysError::from_io("io_uring_enter", &e))?;
    let cqe = ring
        .completion()
        .next()
        .ok_or(SysError::new("IORING_OP_POLL_ADD", Errno::EIO))?;
    if cqe.result() < 0 {
        return Err(SysError::new(
            "IORING_OP_POLL_ADD",
            Errno::from_raw(-cqe.result()),
        ));
    }
    if !cqueue::more(cqe.flags()) {
        return Err(SysError::new(
            "IORING_OP_POLL_ADD (multishot)",
            Errno::EOPNOTSUPP,
        ));
    }
    Ok(())
}

pub(crate) struct MultishotWaiter {
    eventfd: EventFd,
    decoder: CountDecoder,
}

impl Waiter for MultishotWaiter {
    fn attribution(&self) -> Attribution {
        self.decoder.attribution()
    }

    fn wake_fd(&self, _ring: Option<&IoUring>) -> i32 {
        self.eventfd.as_fd().as_raw_fd()
    }

    fn arm(&mut self, ring: &mut IoUring) -> Result<(), SysError> {
        let poll = Sqe::poll_add(self.eventfd.as_fd().as_raw_fd(), libc::POLLIN as u32, true);
        push(ring, &poll.user_data(ARM_USER_DATA))
    }

    fn complete(&mut self, cqe: &cqueue::Entry) -> Completion {
        let result = cqe.result();
        if result < 0 {
            return Completion::Error(-result);
        }
        // Drain the count so the next write makes the eventfd readable again; EAGAIN means an
        // earlier completion already drained it (and counted its wakes).
        let mut count = [0u8; 8];
        let own = match nix::unistd::read(self.eventfd.as_fd(), &mut count) {
            Ok(8) => self.decoder.own(u64::from_ne_bytes(count)),
            _ => Own::No,
        };
        Completion::Woken {
            rearm: !cqueue::more(cqe.flags()),
            own,
        }
    }
}
