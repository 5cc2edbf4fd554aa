//! Process file descriptors: reach another worker's ring or eventfd (`pidfd_getfd`, since the
//! kernel refuses an io_uring fd in SCM_RIGHTS) and signal it without a pid-reuse race
//! (`pidfd_send_signal`). nix has none of these calls, so they are made raw here.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use super::SysError;

/// `pidfd_open(pid, 0)`.
pub fn open(pid: i32) -> Result<OwnedFd, SysError> {
    if pid <= 0 {
        return Err(SysError::new("pidfd_open", nix::errno::Errno::EINVAL));
    }
    // SAFETY: pidfd_open takes a pid and flags and returns a new fd or -1; nothing of ours is
    // read or written.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    owned_fd("pidfd_open", fd)
}

/// The fd a call returned, owned, or the call's error.
fn owned_fd(call: &'static str, fd: libc::c_long) -> Result<OwnedFd, SysError> {
    if fd < 0 {
        return Err(SysError::last(call));
    }
    // SAFETY: the kernel just returned `fd` as a new descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// `pidfd_getfd(pidfd, remote_fd, 0)`: a duplicate of another process's fd. Needs ptrace
/// access to that process (root, or the same user with Yama's `ptrace_scope` 0, or a
/// `PR_SET_PTRACER` grant from the target).
pub fn getfd(pidfd: &OwnedFd, remote_fd: RawFd) -> Result<OwnedFd, SysError> {
    // SAFETY: pidfd_getfd takes two fds and flags and returns a new fd or -1; nothing of ours
    // is read or written.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), remote_fd, 0) };
    owned_fd("pidfd_getfd", fd)
}

/// The `siginfo_t` a `SI_QUEUE` signal carries (the layout `rt_sigqueueinfo(2)` and
/// `pidfd_send_signal(2)` read: signo, errno, code, then the `_rt` member holding the sender's
/// pid and uid and the `sigval` payload), padded to the kernel's 128 bytes.
#[repr(C)]
struct QueuedSigInfo {
    signo: i32,
    errno: i32,
    code: i32,
    /// On 64-bit targets the union after `si_code` is 8-byte aligned.
    #[cfg(target_pointer_width = "64")]
    _pad: i32,
    pid: i32,
    uid: u32,
    value: u64,
    _rest: [u8; 128 - 32],
}

/// `pidfd_send_signal(pidfd, 0)`: whether this process may signal that one (the call exists
/// and is permitted); delivers nothing.
pub fn may_signal(pidfd: &OwnedFd) -> Result<(), SysError> {
    // SAFETY: integer and null-pointer arguments only; signal 0 only checks permission.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
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

/// A prepared `pidfd_send_signal` of one real-time signal with a 64-bit payload.
pub struct SignalSender {
    info: QueuedSigInfo,
}

impl SignalSender {
    /// Prepare sends of `signal` as this process (`si_code = SI_QUEUE`, as `sigqueue(3)` does:
    /// the kernel refuses other codes from one process to another).
    pub fn new(signal: i32) -> Self {
        SignalSender {
            info: QueuedSigInfo {
                signo: signal,
                errno: 0,
                code: libc::SI_QUEUE,
                #[cfg(target_pointer_width = "64")]
                _pad: 0,
                pid: std::process::id() as i32,
                uid: nix::unistd::getuid().as_raw(),
                value: 0,
                _rest: [0; 128 - 32],
            },
        }
    }

    /// Send the signal with `payload` to the process behind `pidfd`.
    #[inline]
    pub fn send(&mut self, pidfd: RawFd, payload: u64) -> Result<(), nix::errno::Errno> {
        self.info.value = payload;
        // SAFETY: `info` is a fully initialised 128-byte siginfo that lives across the call;
        // the kernel copies it before returning.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                pidfd,
                self.info.signo,
                &self.info as *const QueuedSigInfo,
                0u32,
            )
        };
        if rc < 0 {
            Err(nix::errno::Errno::last())
        } else {
            Ok(())
        }
    }

    /// Queue the signal with `payload` to the calling thread, as if process `sender_pid` had
    /// sent it (`rt_tgsigqueueinfo`; a process may name any sender in a signal to itself). For
    /// tests: a thread-directed signal stays with the one thread that blocks it, where a
    /// process-directed one could reach another thread of the test binary and end it.
    #[doc(hidden)]
    pub fn queue_to_this_thread(
        &mut self,
        sender_pid: i32,
        payload: u64,
    ) -> Result<(), nix::errno::Errno> {
        self.info.pid = sender_pid;
        self.info.value = payload;
        // SAFETY: integer arguments and a fully initialised 128-byte siginfo that lives across
        // the call; the kernel copies it before returning.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_rt_tgsigqueueinfo,
                nix::unistd::getpid().as_raw(),
                nix::unistd::gettid().as_raw(),
                self.info.signo,
                &self.info as *const QueuedSigInfo,
            )
        };
        if rc < 0 {
            Err(nix::errno::Errno::last())
        } else {
            Ok(())
        }
    }
}

const _: () = assert!(std::mem::size_of::<QueuedSigInfo>() == 128);
