//! UNMERGED KERNEL ABI: `IORING_MSG_DOORBELL`, the allocation-free MSG_RING prototype of seed
//! 002 (not posted upstream).
//!
//! What rtsoak assumes, field by field (override each in `[abi.doorbell]`):
//! - **Registration** (target ring's task, once): `io_uring_register(ring_fd, register_opcode,
//!   &reg, 1)` with `reg` = [`DoorbellReg`] `{ __u64 user_data; __u32 flags; __u32 resv; }`;
//!   returns 0. The CQEs it posts carry that `user_data`.
//! - **Ring** (sender): `IORING_OP_MSG_RING` with `addr` = `msg_command` (mainline has
//!   `IORING_MSG_DATA` = 0 and `IORING_MSG_SEND_FD` = 1), `fd` = the target ring, `off` = the
//!   bits to OR into the target's doorbell word; the sender's CQE `res` is 0 or -errno.
//! - **Drain** (target): one CQE per drain of the doorbell, `user_data` as registered, `res` =
//!   the low 32 bits that were set.

use rtsoak_sys::uring::{Sqe, register_one};

pub(crate) use rtsoak_record::abi::doorbell::Abi;

/// `struct io_uring_doorbell_reg` (assumed).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct DoorbellReg {
    /// Carried by every drain CQE.
    pub(crate) user_data: u64,
    /// Must be 0.
    pub(crate) flags: u32,
    /// Must be 0.
    pub(crate) resv: u32,
}

/// Give `ring_fd` a doorbell whose CQEs carry `user_data`.
pub(crate) fn register_doorbell(
    abi: &Abi,
    ring_fd: i32,
    user_data: u64,
) -> Result<(), nix::errno::Errno> {
    let reg = DoorbellReg {
        user_data,
        flags: 0,
        resv: 0,
    };
    register_one(ring_fd, abi.register_opcode, &reg).map(drop)
}

/// The SQE that ORs `bits` into the doorbell of `target_ring_fd`.
pub(crate) fn ring_sqe(abi: &Abi, target_ring_fd: i32, bits: u64, user_data: u64) -> Sqe {
    Sqe::msg_ring_command(target_ring_fd, abi.msg_command, bits).user_data(user_data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::sqe::{self, field_u32, field_u64};

    /// The command word of an SQE.
    fn command_of(sqe: &Sqe) -> u64 {
        field_u64(&sqe.bytes(), sqe::ADDR)
    }

    #[test]
    fn a_doorbell_ring_is_a_msg_ring_with_the_doorbell_command_and_the_bits() {
        let bytes = ring_sqe(&Abi::default(), 9, 0b1010, 77).bytes();
        assert_eq!(bytes[sqe::OPCODE], io_uring::opcode::MsgRingData::CODE);
        assert_eq!(field_u32(&bytes, sqe::FD), 9, "fd = the target ring");
        assert_eq!(
            field_u64(&bytes, sqe::ADDR),
            2,
            "addr = IORING_MSG_DOORBELL (assumed 2)"
        );
        assert_eq!(field_u64(&bytes, sqe::OFF), 0b1010, "off = the bits");
        assert_eq!(field_u64(&bytes, sqe::USER_DATA), 77);
        assert_eq!(field_u32(&bytes, sqe::LEN), 0);
    }

    #[test]
    fn an_overridden_command_is_used() {
        let abi = Abi {
            msg_command: 5,
            ..Abi::default()
        };
        assert_eq!(command_of(&ring_sqe(&abi, 3, 1, 0)), 5);
    }

    #[test]
    fn a_kernel_without_the_prototype_refuses_the_registration() {
        let (ring, _) = rtsoak_sys::uring::build(rtsoak_sys::uring::SetupFlags::None).unwrap();
        use std::os::fd::AsRawFd;
        assert_eq!(
            register_doorbell(&Abi::default(), ring.as_raw_fd(), 1),
            Err(nix::errno::Errno::EINVAL)
        );
    }
}
