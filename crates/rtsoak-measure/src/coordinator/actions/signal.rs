//! The `signal` action: a signal to a process given by pid, sent through a pidfd opened before
//! the first run, so that a process that ended and whose pid was reused meanwhile is never
//! signalled (the send fails with ESRCH instead). Sent as `sigqueue(3)` sends it (`SI_QUEUE`),
//! carrying the sample's latency in ns as its value (`si_value`; 0 at the end): a handler that
//! takes `SA_SIGINFO` can read which sample fired.
//!
//! Owns: the target's pidfd. Never signals a pid it did not open.

use std::os::fd::{AsRawFd, OwnedFd};

use nix::errno::Errno;

use rtsoak_sys::pidfd::{self, SignalSender};

/// One `signal` action's target.
pub(super) struct Target {
    pid: i32,
    pidfd: OwnedFd,
    sender: SignalSender,
}

impl Target {
    /// Open process `pid` to send it `signal`, checking now that it runs and that rtsoak may
    /// signal it; why not, in words, otherwise.
    pub(super) fn open(signal: i32, pid: i32) -> Result<Self, String> {
        let pidfd = pidfd::open(pid).map_err(|error| match error.errno {
            Errno::ESRCH => format!(
                "no process {pid} is running: give the pid of a running process (or pid=parent)"
            ),
            errno => format!("pidfd_open({pid}) failed: {errno}"),
        })?;
        pidfd::may_signal(&pidfd).map_err(|error| match error.errno {
            Errno::EPERM => {
                format!("rtsoak may not signal process {pid} (run as its user or root)")
            }
            errno => format!("cannot signal process {pid}: {errno}"),
        })?;
        Ok(Target {
            pid,
            pidfd,
            sender: SignalSender::new(signal),
        })
    }

    /// The process signalled.
    pub(super) fn pid(&self) -> i32 {
        self.pid
    }

    /// Send the signal carrying `value`; why it failed, in words.
    pub(super) fn send(&mut self, value: u64) -> Result<(), String> {
        self.sender
            .send(self.pidfd.as_raw_fd(), value)
            .map_err(|errno| match errno {
                Errno::ESRCH => format!("process {} has ended", self.pid),
                errno => format!("pidfd_send_signal to process {} failed: {errno}", self.pid),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_is_signalled_and_a_missing_process_is_refused_by_pid() {
        let _alone = crate::coordinator::bell::ringing_alone();
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let mut target = Target::open(libc::SIGTERM, child.id() as i32).unwrap();
        target.send(12_345).unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGTERM));
        let error = target.send(1).unwrap_err();
        assert!(error.contains("has ended"), "{error}");
        // A pid far above pid_max runs no process.
        let error = Target::open(libc::SIGTERM, i32::MAX).err().unwrap();
        assert!(error.contains(&i32::MAX.to_string()), "{error}");
    }
}
