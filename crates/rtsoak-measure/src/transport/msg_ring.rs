//! `msg-ring`: the publisher submits `IORING_OP_MSG_RING` from its own ring into each
//! subscriber's ring; the completion appears in the subscriber's ring carrying the publisher's
//! id and the message's sequence number as its data, so the RT subscriber knows exactly which of
//! its completions are the RT publisher's own wakes. One send call per subscriber.
//!
//! Needs: Linux 5.18 (`IORING_OP_MSG_RING`) and `pidfd_getfd` (Linux 5.6) to reach the
//! subscriber's ring fd: an io_uring fd cannot be passed over SCM_RIGHTS (`EINVAL`).
//! Probed by io_uring opcode probe and a trial `pidfd_getfd` on ourselves.

use std::os::fd::AsRawFd;

use io_uring::{IoUring, cqueue, opcode};
use nix::errno::Errno;

use super::sender::RingSender;
use super::targets::RemoteFd;
use super::{
    Completion, Env, Mechanism, Own, Reach, Targets, Transport, Waiter, Waker, attribution_if,
    require_opcodes, trial,
};
use rtsoak_record::Attribution;
use rtsoak_record::Role;
use rtsoak_record::Support;
use rtsoak_sys::SysError;
use rtsoak_sys::queue::Message;
use rtsoak_sys::region::Region;
use rtsoak_sys::uring::Sqe;

/// The `msg-ring` transport.
pub(super) struct MsgRing;

impl Transport for MsgRing {
    fn about(&self) -> &'static str {
        "IORING_OP_MSG_RING from the publisher's ring into each subscriber's ring"
    }

    fn wake_side(&self) -> &'static str {
        "`IORING_OP_MSG_RING` from the publisher's ring to each subscriber's ring"
    }

    fn wait_side(&self) -> &'static str {
        "the completion posted into the subscriber's ring"
    }

    fn requires(&self) -> &'static str {
        "Linux 5.18, `pidfd_getfd`"
    }

    fn needs(&self) -> &'static str {
        "Linux 5.18: IORING_OP_MSG_RING; Linux 5.6: pidfd_getfd"
    }

    fn probe(&self, _abi: &rtsoak_record::abi::PatchedAbi) -> Support {
        Support::from_steps(|| {
            require_opcodes(&[(opcode::MsgRingData::CODE, "IORING_OP_MSG_RING")])?;
            trial("pidfd_getfd", RemoteFd::trial())
        })
    }
}

impl Mechanism for MsgRing {
    type Settings = super::NoSettings;
    type Waker = MsgRingWaker;
    type Waiter = MsgRingWaiter;

    fn waker(&self, env: &Env<'_, Self::Settings>) -> anyhow::Result<Self::Waker> {
        Ok(MsgRingWaker {
            sender: RingSender::new(env.ring_setup)?,
            targets: Targets::new(Reach::of(env)),
            token: env.coordinator_pid,
            publisher_id: env.publisher_id,
        })
    }

    fn waiter(&self, env: &Env<'_, Self::Settings>) -> anyhow::Result<Self::Waiter> {
        Ok(MsgRingWaiter {
            token: env.coordinator_pid,
            rt_publisher: (env.role == Role::Subscriber).then_some(env.publisher_id),
        })
    }
}

/// The completion data of a wake: the publisher's id above bit 48, the sequence number below.
const ID_SHIFT: u32 = 48;
const SEQ_MASK: u64 = (1 << ID_SHIFT) - 1;

pub(crate) struct MsgRingWaker {
    sender: RingSender,
    targets: Targets<RemoteFd>,
    /// Carried as the CQE result, so a subscriber can tell the run's messages from strangers'.
    token: i32,
    /// Carried in the CQE data with the sequence number.
    publisher_id: u32,
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
        let data = (u64::from(self.publisher_id) << ID_SHIFT) | (message.seq & SEQ_MASK);
        let send = Sqe::msg_ring_data(target, self.token, data).user_data(index as u64);
        self.sender.send(&send)
    }

    fn settle(&mut self) -> Result<(), Errno> {
        self.sender.settle()
    }
}

/// Nothing to arm: MSG_RING completions simply appear in the ring.
pub(crate) struct MsgRingWaiter {
    token: i32,
    /// The RT subscriber: the id whose completions are the RT publisher's own wakes.
    rt_publisher: Option<u32>,
}

impl Waiter for MsgRingWaiter {
    fn attribution(&self) -> Attribution {
        attribution_if(self.rt_publisher.is_some(), Attribution::Exact)
    }

    fn wake_fd(&self, ring: Option<&IoUring>) -> i32 {
        ring.map_or(-1, |ring| ring.as_raw_fd())
    }

    fn arm(&mut self, _ring: &mut IoUring) -> Result<(), SysError> {
        Ok(())
    }

    fn complete(&mut self, cqe: &cqueue::Entry) -> Completion {
        if cqe.result() == self.token {
            let data = cqe.user_data();
            let own = match self.rt_publisher {
                Some(id) if data >> ID_SHIFT == u64::from(id) => Own::Through {
                    seq: data & SEQ_MASK,
                    wakes: 1,
                },
                _ => Own::No,
            };
            Completion::Woken { rearm: false, own }
        } else {
            Completion::Foreign { rearm: false }
        }
    }
}
