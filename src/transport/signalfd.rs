//! `signalfd`: the publisher queues a real-time signal carrying the sequence number to each
//! subscriber process (`pidfd_send_signal`, so a subscriber that exited can never be mistaken
//! for a recycled pid); the subscriber's ring keeps a read on a signalfd for that signal. Each
//! signal read says who sent it and for which message, so the RT subscriber knows its own wakes
//! exactly.
//!
//! Needs: `IORING_OP_READ` (Linux 5.6) and `pidfd_send_signal` (Linux 5.1). Probed by opcode
//! probe and a trial signal to ourselves. The signal is blocked before the signalfd exists and
//! before any publisher learns the subscriber's pid: a real-time signal that arrives unblocked
//! runs its default action, which ends the process.

use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::sync::atomic::Ordering;

use io_uring::{IoUring, cqueue, opcode, types};
use nix::errno::Errno;
use nix::sys::signal::{SigSet, SigmaskHow, sigprocmask};
use nix::sys::signalfd::{SfdFlags, SignalFd};

use super::{
    ARM_USER_DATA, Completion, Own, Reach, Support, Targets, Transport, Waiter, Waker, push,
    require_opcodes, trial,
};
use crate::protocol::Role;
use crate::queue::Message;
use crate::region::{RT_PUBLISHER_SLOT, Region};
use crate::stats::Attribution;
use crate::sys::SysError;
use crate::sys::pidfd::{self, SignalSender};
use crate::worker::{WorkerContext, publisher, subscriber};

/// The `signalfd` transport.
pub struct Signalfd;

/// The signal used: the second real-time signal past glibc's reserved ones.
pub fn wake_signal() -> i32 {
    libc::SIGRTMIN() + 1
}

/// Signals read per completion.
const BATCH: usize = 16;

impl Transport for Signalfd {
    fn name(&self) -> &'static str {
        "signalfd"
    }

    fn about(&self) -> &'static str {
        "pidfd_send_signal of a real-time signal to each subscriber; its ring reads a signalfd"
    }

    fn needs(&self) -> &'static str {
        "Linux 5.6: IORING_OP_READ; Linux 5.1: pidfd_send_signal"
    }

    fn probe(&self, _abi: &crate::abi::PatchedAbi) -> Support {
        Support::from_steps(|| {
            require_opcodes(&[(opcode::Read::CODE, "IORING_OP_READ")])?;
            trial("pidfd_send_signal", signal_trial())
        })
    }

    fn publish(&self, context: &mut WorkerContext) -> anyhow::Result<()> {
        let waker = SignalWaker {
            targets: Targets::new(Reach::of(&context.spec)),
            sender: SignalSender::new(wake_signal()),
        };
        publisher::run(context, waker)
    }

    fn subscribe(&self, context: &mut WorkerContext) -> anyhow::Result<()> {
        let signalfd = blocked_signalfd().map_err(|e| SysError::new("signalfd", e))?;
        let waiter = SignalWaiter {
            signalfd,
            buffer: Box::new([zeroed_siginfo(); BATCH]),
            region: context.region(),
            rt_subscriber: context.spec.role == Role::Subscriber,
        };
        subscriber::run(context, waiter)
    }
}

/// The set holding just the wake signal. nix's `Signal` has no real-time signals, so the set
/// is built with libc and handed to nix.
fn wake_sigset() -> SigSet {
    // SAFETY: sigemptyset/sigaddset initialise and fill a local sigset_t with a valid signal.
    unsafe {
        let mut raw: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut raw);
        libc::sigaddset(&mut raw, wake_signal());
        SigSet::from_sigset_t_unchecked(raw)
    }
}

/// Block the wake signal for this (single-threaded) process and open a signalfd for it.
fn blocked_signalfd() -> Result<SignalFd, Errno> {
    let set = wake_sigset();
    sigprocmask(SigmaskHow::SIG_BLOCK, Some(&set), None)?;
    SignalFd::with_flags(&set, SfdFlags::SFD_CLOEXEC)
}

/// `pidfd_send_signal(self, 0)`: proves the call exists and is permitted, delivering nothing.
fn signal_trial() -> Result<(), SysError> {
    let me = pidfd::open(std::process::id() as i32)?;
    // SAFETY: integer and null-pointer arguments only; signal 0 only checks permission.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            me.as_raw_fd(),
            0,
            std::ptr::null::<libc::siginfo_t>(),
            0u32,
        )
    };
    if rc < 0 {
        return Err(SysError::last("pidfd_send_signal"));
    }
    Ok(())
}

fn zeroed_siginfo() -> libc::signalfd_siginfo {
    // SAFETY: signalfd_siginfo is plain integers, for which zero is valid.
    unsafe { std::mem::zeroed() }
}

struct SignalWaker {
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

struct SignalWaiter {
    signalfd: SignalFd,
    buffer: Box<[libc::signalfd_siginfo; BATCH]>,
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
}

impl Waiter for SignalWaiter {
    fn attribution(&self) -> Attribution {
        if self.rt_subscriber {
            Attribution::Exact
        } else {
            Attribution::None
        }
    }

    fn wake_fd(&self, _ring: Option<&IoUring>) -> i32 {
        self.signalfd.as_fd().as_raw_fd()
    }

    fn arm(&mut self, ring: &mut IoUring) -> Result<(), SysError> {
        let read = opcode::Read::new(
            types::Fd(self.signalfd.as_fd().as_raw_fd()),
            self.buffer.as_mut_ptr().cast(),
            std::mem::size_of_val(&*self.buffer) as u32,
        )
        .build()
        .user_data(ARM_USER_DATA);
        push(ring, &read)
    }

    fn complete(&mut self, cqe: &cqueue::Entry) -> Completion {
        let result = cqe.result();
        if result < 0 {
            return Completion::Error(-result);
        }
        let count = result as usize / std::mem::size_of::<libc::signalfd_siginfo>();
        let rt_publisher = self.region.workers[RT_PUBLISHER_SLOT]
            .pid
            .load(Ordering::Relaxed) as u32;
        let (mut ours, mut own_wakes, mut own_through) = (false, 0, 0);
        for info in &self.buffer[..count.min(BATCH)] {
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
