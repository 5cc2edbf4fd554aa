//! `eventfd`: each subscriber owns an eventfd and keeps an io_uring read on it; the publisher
//! `write(2)`s to every subscriber's eventfd (one send call per subscriber: a shared eventfd
//! would let only one reader consume the count). The RT publisher adds 2^32 per wake and noise
//! publishers 1, so the count a read returns says how many of its wakes were the RT publisher's
//! own (exact attribution).
//!
//! The eventfd is non-blocking, and the ring either keeps a read on it or, where io_uring
//! cannot hold an eventfd read without an io-wq worker thread (before about Linux 5.8), a poll
//! followed by a non-blocking `read(2)`: found by a trial read (`fd_wait`), recorded as
//! `setup.wait`. Either way the same count is read and means the same.
//!
//! Needs: any io_uring kernel (`IORING_OP_READ` and `IORING_OP_POLL_ADD`, Linux 5.6) and
//! `pidfd_getfd` (Linux 5.6) to reach the subscriber's eventfd. Probed by opcode probe and
//! trial calls.

use std::os::fd::{AsFd, AsRawFd};

use io_uring::{IoUring, cqueue};
use nix::errno::Errno;
use nix::sys::eventfd::{EfdFlags, EventFd};

use super::fd_wait::{READ_WAIT_OPCODES, ReadWait};
use super::targets::RemoteFd;
use super::{
    Completion, Env, Mechanism, Own, Reach, Targets, Transport, Waiter, Waker, attribution_if,
    require_opcodes, trial,
};
use rtsoak_record::Attribution;
use rtsoak_record::FdWait;
use rtsoak_record::Role;
use rtsoak_record::Support;
use rtsoak_sys::SysError;
use rtsoak_sys::queue::Message;
use rtsoak_sys::region::Region;

/// The `eventfd` transport.
pub(super) struct Eventfd;

impl Transport for Eventfd {
    fn about(&self) -> &'static str {
        "write(2) to each subscriber's eventfd; the subscriber's ring keeps a read on it"
    }

    fn wake_side(&self) -> &'static str {
        "`write(2)` on each subscriber's eventfd"
    }

    fn wait_side(&self) -> &'static str {
        "io_uring read on the (non-blocking) eventfd, or, where io_uring cannot hold that read without an io-wq thread, a one-shot `IORING_OP_POLL_ADD` and a non-blocking `read(2)`: chosen by a trial read"
    }

    fn requires(&self) -> &'static str {
        "Linux 5.6, `pidfd_getfd`"
    }

    fn needs(&self) -> &'static str {
        "Linux 5.6: IORING_OP_READ, IORING_OP_POLL_ADD and pidfd_getfd"
    }

    fn probe(&self, _abi: &rtsoak_record::abi::PatchedAbi) -> Support {
        Support::from_steps(|| {
            require_opcodes(&READ_WAIT_OPCODES)?;
            trial("eventfd", nonblocking_eventfd().map(drop))?;
            trial("pidfd_getfd", RemoteFd::trial())
        })
    }
}

impl Mechanism for Eventfd {
    type Settings = super::NoSettings;
    type Waker = EventfdWaker;
    type Waiter = EventfdWaiter;

    fn waker(&self, env: &Env<'_, Self::Settings>) -> anyhow::Result<Self::Waker> {
        Ok(EventfdWaker::new(env))
    }

    fn waiter(&self, env: &Env<'_, Self::Settings>) -> anyhow::Result<Self::Waiter> {
        let eventfd = nonblocking_eventfd()?;
        // The trial's own eventfd: nobody can write to it, so the trial never takes a wake.
        let wait = super::fd_wait::find_fd_wait(nonblocking_eventfd()?.as_fd())?;
        Ok(EventfdWaiter {
            eventfd,
            read: ReadWait::new(wait),
            decoder: CountDecoder::new(env),
        })
    }
}

/// An empty eventfd whose reads never block (shared with `eventfd-multishot`).
pub(super) fn nonblocking_eventfd() -> Result<EventFd, SysError> {
    EventFd::from_flags(EfdFlags::EFD_CLOEXEC | EfdFlags::EFD_NONBLOCK)
        .map_err(|e| SysError::new("eventfd2", e))
}

/// What the RT publisher adds to an eventfd per wake: the count's high 32 bits are its wakes.
const RT_WAKE: u64 = 1 << 32;
/// What a noise publisher adds: the count's low 32 bits.
const NOISE_WAKE: u64 = 1;

/// Writes to each subscriber's eventfd (shared with `eventfd-multishot`).
pub(crate) struct EventfdWaker {
    targets: Targets<RemoteFd>,
    /// [`RT_WAKE`] or [`NOISE_WAKE`], as bytes.
    value: [u8; 8],
}

impl EventfdWaker {
    /// The waker of the publisher `env` describes.
    pub(super) fn new<S>(env: &Env<'_, S>) -> Self {
        let value = if env.role == Role::Publisher {
            RT_WAKE
        } else {
            NOISE_WAKE
        };
        EventfdWaker {
            targets: Targets::new(Reach::of(env)),
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
    /// A decoder for the subscriber `env` describes (only the RT subscriber attributes).
    pub(super) fn new<S>(env: &Env<'_, S>) -> Self {
        CountDecoder {
            rt_subscriber: env.role == Role::Subscriber,
            rt_wakes: 0,
        }
    }

    /// Exact for the RT subscriber.
    pub(super) fn attribution(&self) -> Attribution {
        attribution_if(self.rt_subscriber, Attribution::Exact)
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

pub(crate) struct EventfdWaiter {
    eventfd: EventFd,
    /// The wait and the count it reads.
    read: ReadWait<u64, 1>,
    decoder: CountDecoder,
}

impl Waiter for EventfdWaiter {
    fn fd_wait(&self) -> Option<FdWait> {
        Some(self.read.how())
    }

    fn attribution(&self) -> Attribution {
        self.decoder.attribution()
    }

    fn wake_fd(&self, _ring: Option<&IoUring>) -> i32 {
        self.eventfd.as_fd().as_raw_fd()
    }

    fn arm(&mut self, ring: &mut IoUring) -> Result<(), SysError> {
        self.read.arm(ring, self.eventfd.as_fd().as_raw_fd())
    }

    fn complete(&mut self, cqe: &cqueue::Entry) -> Completion {
        match self.read.take(self.eventfd.as_fd(), cqe) {
            Ok(8) => Completion::Woken {
                rearm: true,
                own: self.decoder.own(self.read.get(0)),
            },
            Ok(_) => Completion::Error(libc::EIO),
            Err(completion) => completion,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::fd_wait::tests::first_completion;

    /// The RT subscriber's waiter, waiting as `how` on a fresh eventfd.
    fn rt_waiter(how: FdWait) -> EventfdWaiter {
        EventfdWaiter {
            eventfd: nonblocking_eventfd().unwrap(),
            read: ReadWait::new(how),
            decoder: CountDecoder {
                rt_subscriber: true,
                rt_wakes: 0,
            },
        }
    }

    /// One completion of `waiter`: `before` written before arming, then `after`.
    fn complete(waiter: &mut EventfdWaiter, before: u64, after: u64) -> Completion {
        if before > 0 {
            waiter.eventfd.write(before).unwrap();
        }
        let fd = waiter.eventfd.as_fd().try_clone_to_owned().unwrap();
        let cqe = first_completion(&mut waiter.read, fd.as_fd(), || {
            if after > 0 {
                waiter.eventfd.write(after).unwrap();
            }
        });
        waiter.complete(&cqe)
    }

    #[test]
    fn the_poll_and_read_wait_splits_counts_exactly_as_the_read_does() {
        for how in [FdWait::Read, FdWait::PollRead] {
            let mut waiter = rt_waiter(how);
            // Two RT wakes and three noise wakes, summed in the count before the wait was armed.
            assert_eq!(
                complete(&mut waiter, 2 * RT_WAKE + 3 * NOISE_WAKE, 0),
                Completion::Woken {
                    rearm: true,
                    own: Own::Through { seq: 1, wakes: 2 }
                },
                "{how:?}"
            );
            // One RT wake written while the wait was armed: the RT publisher's third.
            assert_eq!(
                complete(&mut waiter, 0, RT_WAKE),
                Completion::Woken {
                    rearm: true,
                    own: Own::Through { seq: 2, wakes: 1 }
                },
                "{how:?}"
            );
            assert_eq!(
                complete(&mut waiter, 0, NOISE_WAKE),
                Completion::Woken {
                    rearm: true,
                    own: Own::No
                },
                "{how:?}: a noise publisher's wake"
            );
            assert_eq!(
                waiter.eventfd.read(),
                Err(Errno::EAGAIN),
                "{how:?}: drained"
            );
        }
    }
}
