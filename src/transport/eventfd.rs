//! `eventfd`: each subscriber owns an eventfd and keeps an io_uring read on it; the publisher
//! `write(2)`s to every subscriber's eventfd (one send call per subscriber: a shared eventfd
//! would let only one reader consume the count).
//!
//! Needs: any io_uring kernel (`IORING_OP_READ`, Linux 5.6) and `pidfd_getfd` (Linux 5.6) to
//! reach the subscriber's eventfd. Probed by opcode probe and trial calls.

use std::os::fd::{AsFd, AsRawFd};

use io_uring::{IoUring, cqueue, opcode, types};
use nix::errno::Errno;
use nix::sys::eventfd::{EfdFlags, EventFd};

use super::targets::RemoteFd;
use super::{
    ARM_USER_DATA, Completion, Support, Targets, Transport, Waiter, Waker, push, require_opcodes,
    trial,
};
use crate::queue::Message;
use crate::region::Region;
use crate::sys::SysError;
use crate::worker::{WorkerContext, publisher, subscriber};

/// The `eventfd` transport.
pub struct Eventfd;

impl Transport for Eventfd {
    fn name(&self) -> &'static str {
        "eventfd"
    }

    fn about(&self) -> &'static str {
        "write(2) to each subscriber's eventfd; the subscriber's ring keeps a read on it"
    }

    fn needs(&self) -> &'static str {
        "Linux 5.6: IORING_OP_READ and pidfd_getfd"
    }

    fn probe(&self, _abi: &crate::abi::PatchedAbi) -> Support {
        Support::from_steps(|| {
            require_opcodes(&[(opcode::Read::CODE, "IORING_OP_READ")])?;
            trial(
                "eventfd",
                EventFd::from_flags(EfdFlags::EFD_CLOEXEC)
                    .map(drop)
                    .map_err(|e| SysError::new("eventfd2", e)),
            )?;
            trial("pidfd_getfd", super::msg_ring::pidfd_trial())
        })
    }

    fn publish(&self, context: &mut WorkerContext) -> anyhow::Result<()> {
        let waker = EventfdWaker::default();
        publisher::run(context, waker)
    }

    fn subscribe(&self, context: &mut WorkerContext) -> anyhow::Result<()> {
        let eventfd =
            EventFd::from_flags(EfdFlags::EFD_CLOEXEC).map_err(|e| SysError::new("eventfd2", e))?;
        let waiter = EventfdWaiter {
            eventfd,
            count: Box::new(0),
        };
        subscriber::run(context, waiter)
    }
}

/// Writes 1 to each subscriber's eventfd (shared with `eventfd-multishot`).
#[derive(Default)]
pub(super) struct EventfdWaker {
    targets: Targets<RemoteFd>,
}

impl Waker for EventfdWaker {
    fn refresh(&mut self, region: &Region) -> Result<(), SysError> {
        self.targets.refresh(region, RemoteFd::open)
    }

    fn targets(&self) -> usize {
        self.targets.len()
    }

    fn departed(&self, region: &Region, index: usize) -> bool {
        self.targets.departed(region, index)
    }

    #[inline]
    fn wake(&mut self, index: usize, _message: &Message) -> Result<(), Errno> {
        let target = self.targets.get_mut(index);
        nix::unistd::write(target.fd.as_fd(), &1u64.to_ne_bytes()).map(drop)
    }
}

struct EventfdWaiter {
    eventfd: EventFd,
    /// Where the read lands; boxed so its address is stable while the read is in flight.
    count: Box<u64>,
}

impl Waiter for EventfdWaiter {
    fn wake_fd(&self, _ring: Option<&IoUring>) -> i32 {
        self.eventfd.as_fd().as_raw_fd()
    }

    fn arm(&mut self, ring: &mut IoUring) -> Result<(), SysError> {
        let read = opcode::Read::new(
            types::Fd(self.eventfd.as_fd().as_raw_fd()),
            (&mut *self.count as *mut u64).cast(),
            8,
        )
        .build()
        .user_data(ARM_USER_DATA);
        push(ring, &read)
    }

    fn complete(&mut self, cqe: &cqueue::Entry) -> Completion {
        match cqe.result() {
            8 => Completion::Woken { rearm: true },
            r if r < 0 => Completion::Error(-r),
            _ => Completion::Error(libc::EIO),
        }
    }
}
