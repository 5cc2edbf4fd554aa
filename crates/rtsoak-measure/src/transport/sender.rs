//! The publisher's own ring, for transports whose send call is an io_uring submission
//! (`msg-ring`, `doorbell`, `persistent-futex`, `futex` with `IORING_OP_FUTEX_WAKE`): submit one
//! SQE per timed call, then reap and check the completions after the timed section.

use io_uring::IoUring;
use nix::errno::Errno;

use rtsoak_record::RingSetup;
use rtsoak_sys::uring::{Sqe, build, push_all};
use rtsoak_sys::{SysError, errno_of};

/// A ring that sends and counts what is still to be reaped.
pub(crate) struct RingSender {
    ring: IoUring,
    in_flight: usize,
}

impl RingSender {
    /// A sending ring with `setup` flags (falling back as the subscriber's ring does).
    pub(super) fn new(setup: RingSetup) -> Result<Self, SysError> {
        Ok(RingSender {
            ring: build(setup.into())?.0,
            in_flight: 0,
        })
    }

    /// The ring, for registrations made before the first send.
    pub(super) fn ring(&self) -> &IoUring {
        &self.ring
    }

    /// The timed call: push `sqe` and submit it (`io_uring_enter`).
    #[inline]
    pub(super) fn send(&mut self, sqe: &Sqe) -> Result<(), Errno> {
        push_all(&mut self.ring, std::slice::from_ref(sqe))?;
        self.in_flight += 1;
        self.ring.submit().map(drop).map_err(|e| errno_of(&e))
    }

    /// After the timed section: wait for every completion of the sends (they complete inline;
    /// with `DEFER_TASKRUN` the CQEs are only flushed on entering the kernel, so this enters it
    /// without sleeping) and report the last failed one.
    pub(super) fn settle(&mut self) -> Result<(), Errno> {
        if self.in_flight == 0 {
            return Ok(());
        }
        self.ring
            .submit_and_wait(self.in_flight)
            .map_err(|e| errno_of(&e))?;
        let mut result = Ok(());
        for cqe in self.ring.completion() {
            self.in_flight = self.in_flight.saturating_sub(1);
            if cqe.result() < 0 {
                result = Err(Errno::from_raw(-cqe.result()));
            }
        }
        result
    }
}
