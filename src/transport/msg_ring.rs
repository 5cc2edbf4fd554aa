//! `msg-ring`: the publisher submits `IORING_OP_MSG_RING` from its own ring into each
//! subscriber's ring; the completion appears in the subscriber's ring with the message's
//! sequence number as its data. One send call per subscriber.
//!
//! Needs: Linux 5.18 (`IORING_OP_MSG_RING`) and `pidfd_getfd` (Linux 5.6) to reach the
//! subscriber's ring fd, which cannot be sent over SCM_RIGHTS (kernel-notes, pitfall 1).
//! Probed by io_uring opcode probe and a trial `pidfd_getfd` on ourselves.

use std::os::fd::AsRawFd;

use io_uring::{IoUring, cqueue, opcode, types};
use nix::errno::Errno;

use super::sender::RingSender;
use super::targets::RemoteFd;
use super::{Completion, Support, Targets, Transport, Waiter, Waker, require_opcodes, trial};
use crate::queue::Message;
use crate::region::Region;
use crate::sys::{SysError, pidfd};
use crate::worker::{WorkerContext, publisher, subscriber};

/// The `msg-ring` transport.
pub struct MsgRing;

impl Transport for MsgRing {
    fn name(&self) -> &'static str {
        "msg-ring"
    }

    fn about(&self) -> &'static str {
        "IORING_OP_MSG_RING from the publisher's ring into each subscriber's ring"
    }

    fn needs(&self) -> &'static str {
        "Linux 5.18: IORING_OP_MSG_RING; Linux 5.6: pidfd_getfd"
    }

    fn probe(&self, _abi: &crate::abi::PatchedAbi) -> Support {
        Support::from_steps(|| {
            require_opcodes(&[(opcode::MsgRingData::CODE, "IORING_OP_MSG_RING")])?;
            trial("pidfd_getfd", pidfd_trial())
        })
    }

    fn publish(&self, context: &mut WorkerContext) -> anyhow::Result<()> {
        let waker = MsgRingWaker {
            sender: RingSender::new(context.spec.ring_setup)?,
            targets: Targets::default(),
            token: context.spec.coordinator_pid,
        };
        publisher::run(context, waker)
    }

    fn subscribe(&self, context: &mut WorkerContext) -> anyhow::Result<()> {
        let waiter = MsgRingWaiter {
            token: context.spec.coordinator_pid,
        };
        subscriber::run(context, waiter)
    }
}

/// Duplicate one of our own fds through a pidfd: proves both syscalls exist and are allowed.
pub(super) fn pidfd_trial() -> Result<(), SysError> {
    let me = pidfd::open(std::process::id() as i32)?;
    pidfd::getfd(&me, me.as_raw_fd()).map(drop)
}

pub(super) struct MsgRingWaker {
    sender: RingSender,
    targets: Targets<RemoteFd>,
    /// Carried as the CQE result, so a subscriber can tell the run's messages from strangers'.
    token: i32,
}

impl Waker for MsgRingWaker {
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
    fn wake(&mut self, index: usize, message: &Message) -> Result<(), Errno> {
        let target = self.targets.get_mut(index).fd.as_raw_fd();
        let send = opcode::MsgRingData::new(types::Fd(target), self.token, message.seq, None)
            .build()
            .user_data(index as u64);
        // SAFETY: MSG_RING with data reads nothing from our memory beyond the SQE itself.
        unsafe { self.sender.send(&send) }
    }

    fn settle(&mut self) -> Result<(), Errno> {
        self.sender.settle()
    }
}

/// Nothing to arm: MSG_RING completions simply appear in the ring.
struct MsgRingWaiter {
    token: i32,
}

impl Waiter for MsgRingWaiter {
    fn wake_fd(&self, ring: Option<&IoUring>) -> i32 {
        ring.map_or(-1, |ring| ring.as_raw_fd())
    }

    fn arm(&mut self, _ring: &mut IoUring) -> Result<(), SysError> {
        Ok(())
    }

    fn complete(&mut self, cqe: &cqueue::Entry) -> Completion {
        if cqe.result() == self.token {
            Completion::Woken { rearm: false }
        } else {
            Completion::Foreign { rearm: false }
        }
    }
}
