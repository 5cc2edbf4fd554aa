//! rtsoak's kernel layer: raw system calls, shared memory and its layout (the region and the
//! message queue), scheduling, memory locking, io_uring setup. It depends on nothing of
//! rtsoak's; the main crate reaches it as `rtsoak::sys` (and `rtsoak::region`, `rtsoak::queue`).
//!
//! This crate holds every `unsafe` block of rtsoak except the transports' SQE handling; the main
//! crate forbids `unsafe` everywhere else. Rules: every `unsafe` block carries a `// SAFETY:`
//! note saying why it is sound; syscall numbers come from `libc`; a failed call becomes a
//! [`SysError`] naming the call and the errno, never a panic.

pub mod alloc;
pub mod clock;
pub mod confine;
pub mod cpu_dma_latency;
pub mod cpu_lock;
pub mod futex;
pub mod inherited;
pub mod input;
pub mod io_wq;
pub mod memlock;
pub mod mm;
pub mod pidfd;
pub mod queue;
pub mod random;
pub mod region;
pub mod safe_dir;
pub mod sched;
pub mod shm;
pub mod signals;
pub mod spawn;
pub mod text;
pub mod trace;
pub mod uring;

#[doc(hidden)]
pub mod testing;

use nix::errno::Errno;

/// A system call that failed: which one and with what errno.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{call} failed: {errno}")]
pub struct SysError {
    /// The call as a user would search for it (`"pidfd_getfd"`, `"io_uring_setup"`).
    pub call: &'static str,
    /// What the kernel said.
    pub errno: Errno,
}

impl SysError {
    /// The error of `call` from the thread's current errno.
    pub fn last(call: &'static str) -> Self {
        SysError {
            call,
            errno: Errno::last(),
        }
    }

    /// The error of `call` with a known errno.
    pub fn new(call: &'static str, errno: Errno) -> Self {
        SysError { call, errno }
    }

    /// From an `io::Error` that carries an OS error code.
    pub fn from_io(call: &'static str, error: &std::io::Error) -> Self {
        SysError {
            call,
            errno: Errno::from_raw(error.raw_os_error().unwrap_or(libc::EIO)),
        }
    }
}
