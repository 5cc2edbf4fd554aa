//! `doorbell`: the allocation-free MSG_RING prototype the same RFC describes (a
//! doorbell bit per publisher instead of a slab-allocated message). Each subscriber's ring
//! registers a doorbell; a publisher ORs bits into it with `IORING_OP_MSG_RING` and the target
//! posts one completion per drain. One send call per subscriber, like `msg-ring`.
//!
//! Needs: a kernel with the unmerged `IORING_MSG_DOORBELL` prototype. Everything assumed about
//! its ABI is in `crate::abi::doorbell` and overridable in the profile's `[abi.doorbell]`.
//! Probed by a trial doorbell registration; on mainline it fails with `EINVAL` and the transport
//! is reported unsupported with that call and errno.

use std::os::fd::AsRawFd;

use io_uring::{IoUring, cqueue, opcode};
use nix::errno::Errno;

use super::sender::RingSender;
use super::targets::RemoteFd;
use super::{
    Completion, Env, Mechanism, Own, Reach, Targets, Transport, Waiter, Waker, attribution_if,
    missing, require_opcodes, trial,
};
use crate::abi::doorbell::{Abi, register_doorbell, ring_sqe};
use rtsoak_record::Attribution;
use rtsoak_record::Role;
use rtsoak_record::Support;
use rtsoak_record::abi::PatchedAbi;
use rtsoak_sys::SysError;
use rtsoak_sys::queue::Message;
use rtsoak_sys::region::Region;
use rtsoak_sys::uring::{SetupFlags, build};

/// The `doorbell` transport.
pub(super) struct Doorbell;

/// user_data of the subscriber's doorbell completions.
const DOORBELL_USER_DATA: u64 = 0x0d00_be11;

impl Transport for Doorbell {
    fn about(&self) -> &'static str {
        "IORING_MSG_DOORBELL: OR bits into the subscriber ring's doorbell, one CQE per drain (prototype)"
    }

    fn wake_side(&self) -> &'static str {
        "`IORING_OP_MSG_RING` ORing bits into the subscriber ring's doorbell"
    }

    fn wait_side(&self) -> &'static str {
        "one completion per drain"
    }

    fn requires(&self) -> &'static str {
        "the unmerged `IORING_MSG_DOORBELL` prototype"
    }

    fn needs(&self) -> &'static str {
        "a kernel with the IORING_MSG_DOORBELL prototype (not in mainline); ABI in src/abi/doorbell.rs"
    }

    fn probe(&self, abi: &PatchedAbi) -> Support {
        Support::from_steps(|| {
            require_opcodes(&[(opcode::MsgRingData::CODE, "IORING_OP_MSG_RING")])?;
            let (ring, _) = trial("io_uring", build(SetupFlags::None))?;
            register_doorbell(&abi.doorbell, ring.as_raw_fd(), DOORBELL_USER_DATA).map_err(
                |errno| {
                    missing(
                        "IORING_MSG_DOORBELL (unmerged prototype)",
                        &registration_call(&abi.doorbell),
                        Some(errno),
                    )
                },
            )
        })
    }
}

impl Mechanism for Doorbell {
    type Settings = super::NoSettings;
    type Waker = DoorbellWaker;
    type Waiter = DoorbellWaiter;

    fn waker(&self, env: &Env<'_, Self::Settings>) -> anyhow::Result<Self::Waker> {
        Ok(DoorbellWaker {
            sender: RingSender::new(env.ring_setup)?,
            targets: Targets::new(Reach::of(env)),
            abi: env.abi.doorbell,
            bits: doorbell_bit(env.publisher_id),
        })
    }

    fn waiter(&self, env: &Env<'_, Self::Settings>) -> anyhow::Result<Self::Waiter> {
        Ok(DoorbellWaiter {
            abi: env.abi.doorbell,
            registered: false,
            rt_subscriber: env.role == Role::Subscriber,
        })
    }
}

fn registration_call(abi: &Abi) -> String {
    format!(
        "io_uring_register(IORING_REGISTER_DOORBELL = {}, assumed; set abi.doorbell.register_opcode)",
        abi.register_opcode
    )
}

pub(crate) struct DoorbellWaker {
    sender: RingSender,
    targets: Targets<RemoteFd>,
    abi: Abi,
    /// This publisher's bit.
    bits: u64,
}

impl Waker for DoorbellWaker {
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
        let target = self.targets.get_mut(index).fd.as_raw_fd();
        let ring = ring_sqe(&self.abi, target, self.bits, index as u64);
        self.sender.send(&ring)
    }

    fn settle(&mut self) -> Result<(), Errno> {
        self.sender.settle()
    }
}

/// The doorbell bit of a publisher: bit 0 is the RT publisher's alone, noise publishers share
/// bits 1 to 31 (a drain reports the low 32 bits that were set).
fn doorbell_bit(publisher_id: u32) -> u64 {
    if publisher_id == 0 {
        1
    } else {
        1 << (1 + (publisher_id - 1) % 31)
    }
}

/// Registers the doorbell on the first arm (the ring exists only then), then waits for drains.
pub(crate) struct DoorbellWaiter {
    abi: Abi,
    registered: bool,
    /// The RT subscriber: a drain with bit 0 set holds the RT publisher's own wake.
    rt_subscriber: bool,
}

impl Waiter for DoorbellWaiter {
    fn attribution(&self) -> Attribution {
        attribution_if(self.rt_subscriber, Attribution::Covering)
    }

    fn wake_fd(&self, ring: Option<&IoUring>) -> i32 {
        ring.map_or(-1, |ring| ring.as_raw_fd())
    }

    fn arm(&mut self, ring: &mut IoUring) -> Result<(), SysError> {
        if !self.registered {
            register_doorbell(&self.abi, ring.as_raw_fd(), DOORBELL_USER_DATA)
                .map_err(|errno| SysError::new("io_uring_register(doorbell)", errno))?;
            self.registered = true;
        }
        Ok(())
    }

    fn complete(&mut self, cqe: &cqueue::Entry) -> Completion {
        if cqe.user_data() != DOORBELL_USER_DATA {
            Completion::Foreign { rearm: false }
        } else if cqe.result() < 0 {
            Completion::Error(-cqe.result())
        } else {
            let own = if self.rt_subscriber && cqe.result() & 1 != 0 {
                Own::Covering
            } else {
                Own::No
            };
            Completion::Woken { rearm: false, own }
        }
    }
}
