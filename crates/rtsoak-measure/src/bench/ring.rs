//! The one ring a bench submits through: sized for a whole cycle, waited on with a timeout, and
//! drained with every completion handed to the bench's validation.

use io_uring::{IoUring, types};

use super::COMPLETION_TIMEOUT_NS;
use super::checks::Tally;
use rtsoak_record::RingSetup;
use rtsoak_sys::SysError;
use rtsoak_sys::uring::{Sqe, build_sized};

/// A ring with room for `requests` submissions and their completions at once.
pub(super) fn build(setup: RingSetup, requests: usize) -> Result<(IoUring, RingSetup), SysError> {
    let entries = (requests as u32).next_power_of_two().max(8);
    let (ring, got) = build_sized(setup.into(), entries, entries * 2)?;
    Ok((ring, got.into()))
}

/// The wait timeout of [`submit_and_drain`].
const COMPLETION_TIMEOUT: types::Timespec = types::Timespec::new()
    .sec(COMPLETION_TIMEOUT_NS / 1_000_000_000)
    .nsec((COMPLETION_TIMEOUT_NS % 1_000_000_000) as u32);

/// Queue `entries` on `ring`. False (and a call error) if the SQ is full, which a ring built by
/// [`build`] for the cycle never is.
#[inline(always)]
pub(super) fn push_all(ring: &mut IoUring, entries: &[Sqe], tally: &mut Tally) -> bool {
    match rtsoak_sys::uring::push_all(ring, entries) {
        Ok(()) => true,
        Err(errno) => {
            tally.call_failed(errno as i32);
            false
        }
    }
}

/// Submit whatever is queued and reap exactly `want` completions, handing each to `validate`
/// as (user data, result). False if a wait timed out or failed: the round must stop.
#[inline(always)]
pub(crate) fn submit_and_drain(
    ring: &mut IoUring,
    want: u64,
    tally: &mut Tally,
    mut validate: impl FnMut(&mut Tally, u64, i32),
) -> bool {
    let args = types::SubmitArgs::new().timespec(&COMPLETION_TIMEOUT);
    let overflow_before = ring.completion().overflow();
    let mut seen = 0;
    let mut ok = true;
    while seen < want {
        if let Err(error) = ring
            .submitter()
            .submit_with_args((want - seen) as usize, &args)
        {
            let errno = rtsoak_sys::errno_of(&error) as i32;
            if errno == libc::EINTR {
                continue;
            }
            tally.call_failed(errno);
            ok = false;
        }
        for cqe in ring.completion() {
            validate(tally, cqe.user_data(), cqe.result());
            seen += 1;
        }
        if !ok {
            break;
        }
    }
    let overflow = ring.completion().overflow().wrapping_sub(overflow_before);
    tally.cq_overflow += u64::from(overflow);
    ok
}

/// After a broken round: reap whatever completions still arrive within a short wait, so the
/// next round starts with an empty ring. Returns how many were reaped.
pub(crate) fn drain_leftovers(ring: &mut IoUring) -> u64 {
    let short = types::Timespec::new().nsec(10_000_000);
    let args = types::SubmitArgs::new().timespec(&short);
    let mut reaped = 0;
    loop {
        let got = ring.completion().count() as u64;
        reaped += got;
        if got == 0 && ring.submitter().submit_with_args(1, &args).is_err() {
            return reaped;
        }
    }
}
