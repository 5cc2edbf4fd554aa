//! `eventfd`: each subscriber owns an eventfd and keeps an io_uring read on it; the publisher
//! `write(2)`s to every subscriber's eventfd (one send call per subscriber: a shared eventfd
//! would let only one reader consume the count).
//!
//! Needs: any io_uring kernel (`IORING_OP_READ`, Linux 5.6) and `pidfd_getfd` (Linux 5.6) to
//! reach the subscriber's eventfd. Probed by opcode probe and trial calls.

use std::os::fd::{AsFd, AsRawFd, OwnedFd};

use io_uring::{IoUring, cqueue, opcode, types};
use nix::errno::Errno;
use nix::sys::eventfd::{EfdFlags, EventFd};

use super::{ARM_USER_DATA, Completion, Support, Targets, Transport, Waiter, Waker, push};
use crate::queue::Message;
use crate::region::Region;
use crate::sys::uring::OpcodeSupport;
use crate::sys::{SysError, pidfd};
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

    fn probe(&self) -> Support {
        match OpcodeSupport::query() {
            Ok(ops) if ops.has(opcode::Read::CODE) => {}
            Ok(_) => return Support::missing("IORING_OP_READ", "io_uring opcode probe", None),
            Err(e) => return Support::missing("io_uring", "io_uring_setup", Some(e.errno)),
        }
        if let Err(e) = EventFd::from_flags(EfdFlags::EFD_CLOEXEC) {
            return Support::missing("eventfd", "eventfd2", Some(e));
        }
        match super::msg_ring::pidfd_trial() {
            Ok(()) => Support::Supported,
            Err(e) => Support::missing("pidfd_getfd", e.call, Some(e.errno)),
        }
    }

    fn publish(&self, context: &mut WorkerContext) -> anyhow::Result<()> {
        let waker = EventfdWaker {
            targets: Targets::default(),
        };
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

/// A subscriber's eventfd, duplicated into the publisher.
struct EventTarget {
    _pidfd: OwnedFd,
    eventfd: OwnedFd,
}

struct EventfdWaker {
    targets: Targets<EventTarget>,
}

impl Waker for EventfdWaker {
    fn refresh(&mut self, region: &Region) -> Result<(), SysError> {
        self.targets.refresh(region, |pid, eventfd| {
            let process = pidfd::open(pid)?;
            let eventfd = pidfd::getfd(&process, eventfd)?;
            Ok(EventTarget {
                _pidfd: process,
                eventfd,
            })
        })
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
        nix::unistd::write(target.eventfd.as_fd(), &1u64.to_ne_bytes()).map(drop)
    }
}

struct EventfdWaiter {
    eventfd: EventFd,
    /// Where the read lands; boxed so its address is stable while the read is in flight.
    count: Box<u64>,
}

impl Waiter for EventfdWaiter {
    fn wake_fd(&self, _ring: &IoUring) -> i32 {
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
