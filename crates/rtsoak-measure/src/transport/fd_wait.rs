//! Waiting on a readable fd (a signalfd or an eventfd) from the subscriber's ring with no io-wq
//! worker thread in the path, shared by the `signalfd` and `eventfd` transports.
//!
//! io_uring holds an `IORING_OP_READ` itself only where it may try the read without blocking:
//! a read of an empty fd then arms an internal poll and completes, in the ring's own task, once
//! the fd is written. For a file without "nowait" reads (signalfd before about Linux 6.10,
//! eventfd before 5.8) it hands a blocking fd's read to an io-wq worker thread (`iou-wrk-<pid>`),
//! which sleeps in `read(2)` and adds a thread hop to every wakeup: on Debian 12's 6.1 RT kernel
//! every signalfd wakeup went through one. A non-blocking fd's read it may still poll (that
//! kernel does, for a signalfd) or, on older kernels, fail with `EAGAIN` at once. So the
//! subscriber's fd is always non-blocking, and which wait it gets is found by trying
//! ([`find_fd_wait`]), never from the kernel's version:
//! - [`FdWait::Read`]: a trial read on an empty non-blocking fd of the same kind stayed pending.
//!   A non-blocking read never sleeps, so io_uring is polling the fd itself: keep the read.
//! - [`FdWait::PollRead`]: the trial read completed at once. Arm a one-shot
//!   `IORING_OP_POLL_ADD` instead and, when it completes, `read(2)` the fd without blocking into
//!   the same buffer: what io_uring's internal poll would have done for the read.
//!
//! Both fill the same buffer with the same bytes and report the same count, so a waiter reads a
//! completion the same way whichever wait was used ([`ReadWait::take`]). Once built, a
//! [`ReadWait`] never allocates and never blocks.

use std::os::fd::{AsRawFd, BorrowedFd, RawFd};

use io_uring::types::{SubmitArgs, Timespec};
use io_uring::{IoUring, cqueue, opcode};
use nix::errno::Errno;

use super::{ARM_USER_DATA, Completion};
use rtsoak_record::FdWait;
use rtsoak_sys::SysError;
use rtsoak_sys::read_buffer::{AnyBytes, ReadBuffer};
use rtsoak_sys::uring::{self, Sqe, push};

/// The opcodes a [`ReadWait`] may arm (what a probe requires, whichever wait the trial picks).
pub(super) const READ_WAIT_OPCODES: [(u8, &str); 2] = [
    (opcode::Read::CODE, "IORING_OP_READ"),
    (opcode::PollAdd::CODE, "IORING_OP_POLL_ADD"),
];

/// The trial read's buffer: room for one `signalfd_siginfo` (a signalfd refuses a read of
/// less with `EINVAL`), which is more than an eventfd's 8 bytes.
type TrialBuffer = ReadBuffer<libc::signalfd_siginfo, 1>;
/// How long the trial read is given to complete: one that io_uring cannot hold fails inside the
/// submitting `io_uring_enter`, so this only guards against a completion posted a little later.
const TRIAL_SETTLE_NS: u64 = 1_000_000;
/// How long a cancelled trial read may take to report back.
const TRIAL_CANCEL_NS: u64 = 1_000_000_000;
const TRIAL_READ: u64 = 1;
const TRIAL_CANCEL: u64 = 2;

/// Find out how to wait on fds like `trial_fd`: an empty, non-blocking fd of the kind the
/// subscriber waits on, made for the trial so that the trial can never take a wake. Its read
/// is taken back before this returns.
pub(crate) fn find_fd_wait(trial_fd: BorrowedFd<'_>) -> Result<FdWait, SysError> {
    let (mut ring, _) = uring::build(uring::SetupFlags::None)?;
    // Once per subscriber process; should a step below fail, the read could still be in flight,
    // and its buffer outlives it.
    let buffer = TrialBuffer::zeroed();
    push(
        &mut ring,
        &Sqe::read(trial_fd.as_raw_fd(), &buffer).user_data(TRIAL_READ),
    )?;
    if next_completion(&mut ring, TRIAL_SETTLE_NS)?.is_some() {
        // Completed at once (EAGAIN, where io_uring cannot poll this file for a read).
        return Ok(FdWait::PollRead);
    }
    push(
        &mut ring,
        &Sqe::async_cancel(TRIAL_READ).user_data(TRIAL_CANCEL),
    )?;
    let deadline_ns = rtsoak_sys::clock::now_ns() + TRIAL_CANCEL_NS;
    loop {
        let left_ns = deadline_ns.saturating_sub(rtsoak_sys::clock::now_ns());
        match next_completion(&mut ring, left_ns.max(1))? {
            Some(TRIAL_READ) => return Ok(FdWait::Read),
            Some(_) => {}
            None => {
                return Err(SysError::new(
                    "IORING_OP_ASYNC_CANCEL of the trial read",
                    Errno::ETIME,
                ));
            }
        }
    }
}

/// Submit what is queued and wait up to `timeout_ns` for one completion; its user data, or
/// `None` if none came.
fn next_completion(ring: &mut IoUring, timeout_ns: u64) -> Result<Option<u64>, SysError> {
    let timeout = Timespec::new()
        .sec(timeout_ns / 1_000_000_000)
        .nsec((timeout_ns % 1_000_000_000) as u32);
    match ring
        .submitter()
        .submit_with_args(1, &SubmitArgs::new().timespec(&timeout))
    {
        Ok(_) => {}
        Err(e) if matches!(e.raw_os_error(), Some(libc::ETIME) | Some(libc::EINTR)) => {}
        Err(e) => return Err(SysError::from_io("io_uring_enter", &e)),
    }
    Ok(ring.completion().next().map(|cqe| cqe.user_data()))
}

/// A subscriber's wait on one non-blocking fd, reading `N` values of `T` into a buffer of its
/// own.
pub(crate) struct ReadWait<T: AnyBytes, const N: usize> {
    how: FdWait,
    /// Where the read lands (it outlives any read still in flight).
    buffer: ReadBuffer<T, N>,
}

impl<T: AnyBytes, const N: usize> ReadWait<T, N> {
    /// A wait of kind `how` reading into a buffer of zeroes.
    pub(super) fn new(how: FdWait) -> Self {
        ReadWait {
            how,
            buffer: ReadBuffer::zeroed(),
        }
    }

    /// How it waits.
    pub(super) fn how(&self) -> FdWait {
        self.how
    }

    /// Value `index` of what the last completion read ([`ReadWait::take`] says how much of it is
    /// new).
    pub(super) fn get(&self, index: usize) -> T {
        self.buffer.get(index)
    }

    /// Push the wait's SQE for `fd` (non-blocking).
    pub(crate) fn arm(&mut self, ring: &mut IoUring, fd: RawFd) -> Result<(), SysError> {
        let sqe = match self.how {
            FdWait::Read => Sqe::read(fd, &self.buffer),
            FdWait::PollRead => Sqe::poll_add(fd, libc::POLLIN as u32, false),
        };
        push(ring, &sqe.user_data(ARM_USER_DATA))
    }

    /// The completion of the armed wait on `fd`: how many bytes it read into the buffer, or, if
    /// it read none, what the completion meant (a failure, or a wake of no one's). The wait is
    /// one-shot, so either way it must be re-armed.
    #[inline]
    pub(super) fn take(
        &mut self,
        fd: BorrowedFd<'_>,
        cqe: &cqueue::Entry,
    ) -> Result<usize, Completion> {
        let result = cqe.result();
        if result < 0 {
            return Err(Completion::Error(-result));
        }
        match self.how {
            FdWait::Read => Ok(result as usize),
            FdWait::PollRead => match self.buffer.read_from(fd) {
                Ok(bytes) => Ok(bytes),
                // Readable, yet nothing to read (a spurious readiness; it cannot happen with
                // `FdWait::Read`): no wake of the run's.
                Err(Errno::EAGAIN) => Err(Completion::Foreign { rearm: true }),
                Err(errno) => Err(Completion::Error(errno as i32)),
            },
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use std::os::fd::AsFd;

    use nix::sys::eventfd::{EfdFlags, EventFd};

    use super::*;

    fn empty_eventfd() -> EventFd {
        EventFd::from_flags(EfdFlags::EFD_CLOEXEC | EfdFlags::EFD_NONBLOCK).unwrap()
    }

    #[test]
    fn the_trial_takes_its_read_back_so_a_later_count_stays_for_the_owner() {
        let eventfd = empty_eventfd();
        find_fd_wait(eventfd.as_fd()).unwrap();
        eventfd.write(5).unwrap();
        assert_eq!(eventfd.read().unwrap(), 5, "no trial read took the count");
    }

    #[test]
    fn a_trial_read_that_stays_pending_keeps_the_read() {
        // An eventfd's reads are "nowait" since Linux 5.8: io_uring polls it for the read.
        assert_eq!(find_fd_wait(empty_eventfd().as_fd()), Ok(FdWait::Read));
    }

    #[test]
    fn a_trial_read_that_completes_at_once_chooses_the_poll_and_read() {
        // A count already there completes the read at once, as an EAGAIN would where io_uring
        // cannot poll the file for a read.
        let eventfd = EventFd::from_value_and_flags(1, EfdFlags::EFD_NONBLOCK).unwrap();
        assert_eq!(find_fd_wait(eventfd.as_fd()), Ok(FdWait::PollRead));
    }

    #[test]
    fn the_waits_are_named_as_in_results() {
        for wait in [FdWait::Read, FdWait::PollRead] {
            let json = serde_json::to_string(&wait).unwrap();
            assert_eq!(json, format!("\"{}\"", wait.name()));
        }
    }

    /// Arm `wait` on `fd` in a fresh ring, then run `after_arming`; the first completion.
    pub(crate) fn first_completion<T: AnyBytes, const N: usize>(
        wait: &mut ReadWait<T, N>,
        fd: BorrowedFd<'_>,
        after_arming: impl FnOnce(),
    ) -> cqueue::Entry {
        let (mut ring, _) = uring::build(uring::SetupFlags::None).unwrap();
        wait.arm(&mut ring, fd.as_raw_fd()).unwrap();
        ring.submit().unwrap();
        after_arming();
        let timeout = Timespec::new().sec(5);
        ring.submitter()
            .submit_with_args(1, &SubmitArgs::new().timespec(&timeout))
            .unwrap();
        ring.completion().next().expect("a completion within 5 s")
    }

    #[test]
    fn both_waits_read_what_was_written_after_arming_into_the_buffer() {
        for how in [FdWait::Read, FdWait::PollRead] {
            let eventfd = empty_eventfd();
            let mut wait = ReadWait::<u64, 1>::new(how);
            let cqe = first_completion(&mut wait, eventfd.as_fd(), || {
                eventfd.write(3).unwrap();
            });
            let taken = wait.take(eventfd.as_fd(), &cqe);
            assert_eq!((taken, wait.get(0)), (Ok(8), 3), "{how:?}");
            assert_eq!(eventfd.read(), Err(Errno::EAGAIN), "{how:?}: drained");
        }
    }

    #[test]
    fn a_poll_whose_fd_was_drained_before_the_read_takes_nothing() {
        let eventfd = empty_eventfd();
        let mut wait = ReadWait::<u64, 1>::new(FdWait::PollRead);
        let cqe = first_completion(&mut wait, eventfd.as_fd(), || {
            eventfd.write(1).unwrap();
        });
        eventfd.read().unwrap();
        assert_eq!(
            wait.take(eventfd.as_fd(), &cqe),
            Err(Completion::Foreign { rearm: true })
        );
    }

    #[test]
    fn a_failed_wait_gives_its_errno() {
        for how in [FdWait::Read, FdWait::PollRead] {
            let mut wait = ReadWait::<u64, 1>::new(how);
            let (mut ring, _) = uring::build(uring::SetupFlags::None).unwrap();
            wait.arm(&mut ring, -1).unwrap();
            ring.submit_and_wait(1).unwrap();
            let cqe = ring.completion().next().unwrap();
            let eventfd = empty_eventfd();
            assert_eq!(
                wait.take(eventfd.as_fd(), &cqe),
                Err(Completion::Error(libc::EBADF)),
                "{how:?}"
            );
        }
    }
}
