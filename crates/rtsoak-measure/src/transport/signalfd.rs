//! `signalfd`: the publisher queues a real-time signal carrying the sequence number to each
//! subscriber process (`pidfd_send_signal`, so a subscriber that exited can never be mistaken
//! for a recycled pid); the subscriber's ring keeps a read on a signalfd for that signal. Each
//! signal read says who sent it and for which message, so the RT subscriber knows its own wakes
//! exactly.
//!
//! The signalfd is non-blocking, and the ring either keeps a read on it or, where io_uring
//! cannot hold a signalfd read without an io-wq worker thread (before about Linux 6.10), a poll
//! followed by a non-blocking `read(2)`: found by a trial read (`fd_wait`), recorded as
//! `setup.wait`. Either way the same siginfos land in the same buffer and mean the same.
//!
//! Needs: `IORING_OP_READ` and `IORING_OP_POLL_ADD` (Linux 5.6) and `pidfd_send_signal` (Linux
//! 5.1). Probed by opcode probe and a trial signal to ourselves. The signal is blocked before
//! the signalfd exists and before any publisher learns the subscriber's pid: a real-time signal
//! that arrives unblocked runs its default action, which ends the process.

use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::sync::atomic::Ordering;

use io_uring::{IoUring, cqueue};
use nix::errno::Errno;
use nix::sys::signal::{SigSet, SigmaskHow, sigprocmask};
use nix::sys::signalfd::{SfdFlags, SignalFd};

use super::fd_wait::{READ_WAIT_OPCODES, ReadWait};
use super::{
    Completion, Env, Mechanism, Own, Reach, Targets, Transport, Waiter, Waker, attribution_if,
    require_opcodes, trial,
};
use rtsoak_record::Attribution;
use rtsoak_record::FdWait;
use rtsoak_record::Role;
use rtsoak_record::Support;
use rtsoak_sys::SysError;
use rtsoak_sys::pidfd::{self, SignalSender};
use rtsoak_sys::queue::Message;
use rtsoak_sys::region::{RT_PUBLISHER_SLOT, Region};

/// The `signalfd` transport.
pub(super) struct Signalfd;

/// The signal used: the second real-time signal past glibc's reserved ones.
pub(super) fn wake_signal() -> i32 {
    libc::SIGRTMIN() + 1
}

/// Signals read per completion.
const BATCH: usize = 16;

impl Transport for Signalfd {
    fn about(&self) -> &'static str {
        "pidfd_send_signal of a real-time signal to each subscriber; its ring reads a signalfd"
    }

    fn wake_side(&self) -> &'static str {
        "`pidfd_send_signal` of a real-time signal carrying the sequence number"
    }

    fn wait_side(&self) -> &'static str {
        "as `eventfd`, on a non-blocking signalfd"
    }

    fn requires(&self) -> &'static str {
        "Linux 5.6"
    }

    fn needs(&self) -> &'static str {
        "Linux 5.6: IORING_OP_READ, IORING_OP_POLL_ADD; Linux 5.1: pidfd_send_signal"
    }

    fn probe(&self, _abi: &rtsoak_record::abi::PatchedAbi) -> Support {
        Support::from_steps(|| {
            require_opcodes(&READ_WAIT_OPCODES)?;
            trial("pidfd_send_signal", signal_trial())
        })
    }
}

impl Mechanism for Signalfd {
    type Settings = super::NoSettings;
    type Waker = SignalWaker;
    type Waiter = SignalWaiter;

    fn waker(&self, env: &Env<'_, Self::Settings>) -> anyhow::Result<Self::Waker> {
        Ok(SignalWaker {
            targets: Targets::new(Reach::of(env)),
            sender: SignalSender::new(wake_signal()),
        })
    }

    fn waiter(&self, env: &Env<'_, Self::Settings>) -> anyhow::Result<Self::Waiter> {
        let signalfd = blocked_signalfd().map_err(|e| SysError::new("signalfd", e))?;
        let wait = super::fd_wait::find_fd_wait(trial_signalfd()?.as_fd())?;
        Ok(SignalWaiter {
            signalfd,
            read: ReadWait::new(wait),
            region: env.region,
            rt_subscriber: env.role == Role::Subscriber,
        })
    }
}

/// The set holding just the wake signal.
fn wake_sigset() -> SigSet {
    rtsoak_sys::signals::set_of(wake_signal())
}

/// Block the wake signal for this (single-threaded) process and open a non-blocking signalfd
/// for it.
fn blocked_signalfd() -> Result<SignalFd, Errno> {
    let set = wake_sigset();
    sigprocmask(SigmaskHow::SIG_BLOCK, Some(&set), None)?;
    SignalFd::with_flags(&set, SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK)
}

/// A signalfd like the subscriber's for the trial read, watching no signal: the trial can never
/// take a wake.
fn trial_signalfd() -> Result<SignalFd, SysError> {
    SignalFd::with_flags(
        &SigSet::empty(),
        SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK,
    )
    .map_err(|e| SysError::new("signalfd", e))
}

/// `pidfd_send_signal(self, 0)`: proves the call exists and is permitted, delivering nothing.
fn signal_trial() -> Result<(), SysError> {
    pidfd::may_signal(&pidfd::open(std::process::id() as i32)?)
}

pub(crate) struct SignalWaker {
    targets: Targets<OwnedFd>,
    sender: SignalSender,
}

impl Waker for SignalWaker {
    fn refresh(&mut self, region: &Region) -> Result<(), SysError> {
        self.targets.refresh(region, |pid, _| pidfd::open(pid))
    }

    fn targets(&self) -> usize {
        self.targets.len()
    }

    fn departed(&self, region: &Region, index: usize) -> bool {
        self.targets.departed(region, index)
    }

    #[inline]
    fn wake(&mut self, index: usize, message: &Message) -> Result<(), Errno> {
        let pidfd = self.targets.get_mut(index).as_raw_fd();
        self.sender.send(pidfd, message.seq)
    }
}

pub(crate) struct SignalWaiter {
    signalfd: SignalFd,
    /// The wait and the buffer the siginfos land in.
    read: ReadWait<libc::signalfd_siginfo, BATCH>,
    /// To check that a signal came from one of the run's workers.
    region: &'static Region,
    /// The RT subscriber: signals from the RT publisher are its own wakes.
    rt_subscriber: bool,
}

impl SignalWaiter {
    fn sent_by_run(&self, pid: u32) -> bool {
        self.region
            .workers
            .iter()
            .any(|w| w.pid.load(Ordering::Relaxed) == pid as i32 && pid != 0)
    }

    /// What `bytes` of siginfos read into the buffer meant.
    fn judge(&self, bytes: usize) -> Completion {
        let count = bytes / std::mem::size_of::<libc::signalfd_siginfo>();
        let rt_publisher = self.region.workers[RT_PUBLISHER_SLOT]
            .pid
            .load(Ordering::Relaxed) as u32;
        let (mut ours, mut own_wakes, mut own_through) = (false, 0, 0);
        for info in (0..count.min(BATCH)).map(|index| self.read.get(index)) {
            if info.ssi_signo == wake_signal() as u32
                && info.ssi_code == libc::SI_QUEUE
                && self.sent_by_run(info.ssi_pid)
            {
                ours = true;
                if self.rt_subscriber && info.ssi_pid == rt_publisher {
                    // The payload is the sequence number (`SignalSender::send`).
                    own_wakes += 1;
                    own_through = own_through.max(info.ssi_ptr);
                }
            }
        }
        let own = if own_wakes > 0 {
            Own::Through {
                seq: own_through,
                wakes: own_wakes,
            }
        } else {
            Own::No
        };
        if ours {
            Completion::Woken { rearm: true, own }
        } else {
            Completion::Foreign { rearm: true }
        }
    }
}

impl Waiter for SignalWaiter {
    fn fd_wait(&self) -> Option<FdWait> {
        Some(self.read.how())
    }

    fn attribution(&self) -> Attribution {
        attribution_if(self.rt_subscriber, Attribution::Exact)
    }

    fn wake_fd(&self, _ring: Option<&IoUring>) -> i32 {
        self.signalfd.as_fd().as_raw_fd()
    }

    fn arm(&mut self, ring: &mut IoUring) -> Result<(), SysError> {
        self.read.arm(ring, self.signalfd.as_fd().as_raw_fd())
    }

    fn complete(&mut self, cqe: &cqueue::Entry) -> Completion {
        match self.read.take(self.signalfd.as_fd(), cqe) {
            Ok(bytes) => self.judge(bytes),
            Err(completion) => completion,
        }
    }
}

#[cfg(test)]
mod tests {
    use nix::sys::signal::pthread_sigmask;

    use super::*;
    use crate::transport::fd_wait::tests::first_completion;
    use rtsoak_sys::region::SharedRegion;

    /// Pids the run's workers seem to have, and one from outside the run.
    const RT_PUBLISHER: i32 = 4001;
    const NOISE_PUBLISHER: i32 = 4002;
    const OUTSIDER: i32 = 4003;

    /// The RT subscriber's waiter, waiting as `how`, on a signalfd of this thread (which blocks
    /// the wake signal) in a region where the RT publisher and one noise publisher run.
    fn rt_waiter(how: FdWait) -> SignalWaiter {
        pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&wake_sigset()), None).unwrap();
        let shared: &'static SharedRegion = Box::leak(Box::new(SharedRegion::create().unwrap()));
        let region = shared.get();
        region.workers[RT_PUBLISHER_SLOT]
            .pid
            .store(RT_PUBLISHER, Ordering::Relaxed);
        region.workers[RT_PUBLISHER_SLOT + 2]
            .pid
            .store(NOISE_PUBLISHER, Ordering::Relaxed);
        let signalfd = SignalFd::with_flags(
            &wake_sigset(),
            SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK,
        )
        .unwrap();
        SignalWaiter {
            signalfd,
            read: ReadWait::new(how),
            region,
            rt_subscriber: true,
        }
    }

    /// One completion of `waiter` on signals queued to this thread, `(sender, sequence number)`
    /// each: `before` arming, then `after`.
    fn complete(
        waiter: &mut SignalWaiter,
        before: &[(i32, u64)],
        after: &[(i32, u64)],
    ) -> Completion {
        let mut sender = SignalSender::new(wake_signal());
        let mut queue = |signals: &[(i32, u64)]| {
            for &(pid, seq) in signals {
                sender.queue_to_this_thread(pid, seq).unwrap();
            }
        };
        queue(before);
        let fd = waiter.signalfd.as_fd().try_clone_to_owned().unwrap();
        let cqe = first_completion(&mut waiter.read, fd.as_fd(), || queue(after));
        waiter.complete(&cqe)
    }

    #[test]
    fn the_poll_and_read_wait_attributes_signals_exactly_as_the_read_does() {
        for how in [FdWait::Read, FdWait::PollRead] {
            let mut waiter = rt_waiter(how);
            // Queued before the wait was armed: one read takes all four.
            let queued = [
                (RT_PUBLISHER, 5),
                (NOISE_PUBLISHER, 9),
                (RT_PUBLISHER, 6),
                (OUTSIDER, 7),
            ];
            assert_eq!(
                complete(&mut waiter, &queued, &[]),
                Completion::Woken {
                    rearm: true,
                    own: Own::Through { seq: 6, wakes: 2 }
                },
                "{how:?}"
            );
            // Sent while the wait was armed.
            assert_eq!(
                complete(&mut waiter, &[], &[(RT_PUBLISHER, 7)]),
                Completion::Woken {
                    rearm: true,
                    own: Own::Through { seq: 7, wakes: 1 }
                },
                "{how:?}"
            );
            assert_eq!(
                complete(&mut waiter, &[], &[(NOISE_PUBLISHER, 3)]),
                Completion::Woken {
                    rearm: true,
                    own: Own::No
                },
                "{how:?}: a noise publisher's wake"
            );
            assert_eq!(
                complete(&mut waiter, &[], &[(OUTSIDER, 8)]),
                Completion::Foreign { rearm: true },
                "{how:?}: a signal from outside the run"
            );
        }
    }

    #[test]
    fn the_trial_finds_a_wait_for_a_signalfd_and_leaves_the_signal_queued() {
        pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&wake_sigset()), None).unwrap();
        let mut sender = SignalSender::new(wake_signal());
        sender.queue_to_this_thread(RT_PUBLISHER, 1).unwrap();
        let trial = trial_signalfd().unwrap();
        crate::transport::fd_wait::find_fd_wait(trial.as_fd()).unwrap();
        let signalfd = SignalFd::with_flags(&wake_sigset(), SfdFlags::SFD_NONBLOCK).unwrap();
        let info = signalfd.read_signal().unwrap().expect("still queued");
        assert_eq!((info.ssi_pid as i32, info.ssi_ptr), (RT_PUBLISHER, 1));
    }
}
