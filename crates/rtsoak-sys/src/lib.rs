//! rtsoak's kernel layer: raw system calls, shared memory and its layout (the region and the
//! message queue), scheduling, memory locking, io_uring setup. Of rtsoak it depends only on the
//! records (the policies and ring setups it turns into kernel values, the text escaping).
//!
//! This crate holds every `unsafe` block of rtsoak; every other crate forbids `unsafe`. What
//! the transports and benches submit to io_uring is an `uring::Sqe`, which only names memory
//! that outlives the request or that the kernel merely reads, so pushing one is safe.
//!
//! Rules: every `unsafe` block carries a `// SAFETY:` note saying why it is sound; one way to
//! make each system call: `nix` where it wraps the call, else a raw `libc` call here (pidfds,
//! `sched_setscheduler`, io_uring registrations), with `libc` giving the kernel's constants and
//! C types to every crate; a failed call becomes a [`SysError`] naming the call and the errno,
//! never a panic. Never formats a result or words a sentence for the user.

// A function a reader can hold in their head: at most 100 lines (clippy.toml), product code
// only (`tests/architecture.rs` refuses an `allow` that would let one through).
#![cfg_attr(not(test), deny(clippy::too_many_lines))]

pub mod alloc;
pub mod checked_input;
pub mod clock;
pub mod confine;
pub mod cpu_dma_latency;
pub mod cpu_lock;
pub mod crossing;
pub mod futex;
pub mod inherited;
pub mod input;
pub mod io_wq;
pub mod kexec;
pub mod memlock;
pub mod mm;
pub mod pidfd;
pub mod queue;
pub mod random;
pub mod read_buffer;
pub mod region;
pub mod safe_dir;
pub mod sched;
pub mod shm;
pub mod signals;
pub mod spawn;
pub mod trace;
pub mod tty;
pub mod uring;

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
    pub(crate) fn last(call: &'static str) -> Self {
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
            errno: errno_of(error),
        }
    }
}

/// The errno an `io::Error` carries (`EIO` for one that carries none: it did not come from a
/// system call).
pub fn errno_of(error: &std::io::Error) -> Errno {
    Errno::from_raw(error.raw_os_error().unwrap_or(libc::EIO))
}
