//! Pushing a waiter's SQEs onto its ring.

use io_uring::IoUring;
use nix::errno::Errno;

use rtsoak_sys::SysError;

/// user_data of the subscriber's own wait SQEs (MSG_RING completions carry the sender's data).
pub(crate) const ARM_USER_DATA: u64 = u64::MAX;

/// Push one SQE, reporting a full submission queue as `EBUSY`.
pub fn push(ring: &mut IoUring, entry: &io_uring::squeue::Entry) -> Result<(), SysError> {
    // SAFETY: every SQE rtsoak pushes points only at memory that outlives its completion: the
    // shared region (mapped for the worker's life) or buffers owned by the waiter, which lives
    // until the loop has reaped its completions.
    unsafe { ring.submission().push(entry) }
        .map_err(|_| SysError::new("io_uring push", Errno::EBUSY))
}
