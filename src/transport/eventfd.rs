//! `eventfd`: each subscriber owns an eventfd and keeps an io_uring read on it; the publisher
//! `write(2)`s to every subscriber's eventfd (one send call per subscriber: a shared eventfd
//! would let only one reader consume the count). The RT publisher adds 2^32 per wake and noise
//! publishers 1, so the count a read returns says how many of its wakes were the RT publisher's
//! own (exact attribution).
//!
//! Needs: any io_uring kernel (`IORING_OP_READ`, Linux 5.6) and `pidfd_getfd` (Linux 5.6) to
//! reach the subscriber's eventfd. Probed by opcode probe and trial calls.

use std::os::fd::{AsFd, AsRawFd};

use io_uring::{IoUring, cqueue, opcode, types};
use nix::errno::Errno;
use nix::sys::eventfd::{EfdFlags, EventFd};

use super::targets::RemoteFd;
use super::{
    ARM_USER_DATA, Completion, Own, Reach, Support, Targets, Transport, Waiter, Waker, push,
    require_opcodes, trial,
};
use crate::protocol::{Role, WorkerSpec};
use crate::queue::Message;
use crate::region::Region;
use crate::stats::Attribution;
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
        let waker = EventfdWaker::new(&context.spec);
        publisher::run(context, waker)
    }

    fn subscribe(&self, context: &mut WorkerContext) -> anyhow::Result<()> {
        let eventfd =
            EventFd::from_flags(EfdFlags::EFD_CLOEXEC).map_err(|e| SysError::new("eventfd2", e))?;
        let waiter = EventfdWaiter {
            eventfd,
            count: Box::new(0),
            decoder: CountDecoder::new(&context.spec),
        };
        subscriber::run(context, waiter)
    }
}

/// What the RT publisher adds to an eventfd per wake: the count's high 32 bits are its wakes.
const RT_WAKE: u64 = 1 << 32;
/// What a noise publisher adds: the count's low 32 bits.
const NOISE_WAKE: u64 = 1;

/// Writes to each subscriber's eventfd (shared with `eventfd-multishot`).
pub(super) struct EventfdWaker {
    targets: Targets<RemoteFd>,
    /// [`RT_WAKE`] or [`NOISE_WAKE`], as bytes.
    value: [u8; 8],
}

impl EventfdWaker {
    /// The waker of the publisher `spec` describes.
    pub(super) fn new(spec: &WorkerSpec) -> Self {
        let value = if spec.role == Role::Publisher {
            RT_WAKE
        } else {
            NOISE_WAKE
        };
        EventfdWaker {
            targets: Targets::new(Reach::of(spec)),
            value: value.to_ne_bytes(),
        }
    }
}

/// Reads the RT publisher's wakes out of eventfd counts (shared with `eventfd-multishot`): its
/// wakes are numbered from its first message, so the running total names the newest one.
pub(super) struct CountDecoder {
    rt_subscriber: bool,
    rt_wakes: u64,
}

impl CountDecoder {
    /// A decoder for the subscriber `spec` describes (only the RT subscriber attributes).
    pub(super) fn new(spec: &WorkerSpec) -> Self {
        CountDecoder {
            rt_subscriber: spec.role == Role::Subscriber,
            rt_wakes: 0,
        }
    }

    /// Exact for the RT subscriber.
    pub(super) fn attribution(&self) -> Attribution {
        if self.rt_subscriber {
            Attribution::Exact
        } else {
            Attribution::None
        }
    }

    /// The own wakes a read of `count` holds.
    pub(super) fn own(&mut self, count: u64) -> Own {
        let wakes = count / RT_WAKE;
        if !self.rt_subscriber || wakes == 0 {
            return Own::No;
        }
        self.rt_wakes += wakes;
        Own::Through {
            seq: self.rt_wakes - 1,
            wakes,
        }
    }
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
        nix::unistd::write(target.fd.as_fd(), &self.value).map(drop)
    }
}

struct EventfdWaiter {
    eventfd: EventFd,
    /// Where the read lands; boxed so its address is stable while the read is in flight.
    count: Box<u64>,
    decoder: CountDecoder,
}

impl Waiter for EventfdWaiter {
    fn attribution(&self) -> Attribution {
        self.decoder.attribution()
    }

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
            8 => Completion::Woken {
                rearm: true,
                own: self.decoder.own(*self.count),
            },
            r if r < 0 => Completion::Error(-r),
            _ => Completion::Error(libc::EIO),
        }
    }
}
