//! A memfd mapped shared: the coordinator creates it, sizes it and seals its size; workers
//! inherit the fd and map it. Mapped with `MAP_POPULATE` so no access ever page-faults.
//!
//! Views of the mapping are made of atomics only (any bytes another process writes are valid
//! atomics), so the code that uses them needs no `unsafe`.

use std::num::NonZeroUsize;
use std::os::fd::{AsFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64};

use nix::fcntl::{FcntlArg, SealFlag, fcntl};
use nix::sys::memfd::{MFdFlags, memfd_create};
use nix::sys::mman::{MapFlags, ProtFlags, mmap, munmap};

use super::SysError;

/// A shared, populated mapping of a whole memfd.
pub struct SharedMemory {
    fd: OwnedFd,
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain shared memory; every type placed in it is made of atomics, so
// concurrent access from several threads is as sound as from several processes.
unsafe impl Send for SharedMemory {}
// SAFETY: as above.
unsafe impl Sync for SharedMemory {}

impl SharedMemory {
    /// Create a zero-filled memfd of `len` bytes named `name`, seal its size (nobody can shrink
    /// it under a reader or grow it), and map it.
    pub fn create(name: &str, len: usize) -> Result<Self, SysError> {
        let fd = memfd_create(name, MFdFlags::MFD_CLOEXEC | MFdFlags::MFD_ALLOW_SEALING)
            .map_err(|e| SysError::new("memfd_create", e))?;
        nix::unistd::ftruncate(&fd, len as libc::off_t)
            .map_err(|e| SysError::new("ftruncate", e))?;
        fcntl(
            &fd,
            FcntlArg::F_ADD_SEALS(
                SealFlag::F_SEAL_SHRINK | SealFlag::F_SEAL_GROW | SealFlag::F_SEAL_SEAL,
            ),
        )
        .map_err(|e| SysError::new("fcntl(F_ADD_SEALS)", e))?;
        Self::map(fd)
    }

    /// Map an inherited memfd in full.
    pub fn map(fd: OwnedFd) -> Result<Self, SysError> {
        let len = nix::sys::stat::fstat(&fd)
            .map_err(|e| SysError::new("fstat", e))?
            .st_size as usize;
        let size =
            NonZeroUsize::new(len).ok_or(SysError::new("mmap", nix::errno::Errno::EINVAL))?;
        // SAFETY: a fresh shared mapping of a file we hold; no existing memory is affected.
        let ptr = unsafe {
            mmap(
                None,
                size,
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                MapFlags::MAP_SHARED | MapFlags::MAP_POPULATE,
                fd.as_fd(),
                0,
            )
        }
        .map_err(|e| SysError::new("mmap", e))?;
        Ok(SharedMemory {
            fd,
            ptr: ptr.cast(),
            len,
        })
    }

    /// Start of the mapping (page aligned).
    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The 32-bit word at byte `offset`, as an atomic: `None` past the end or unaligned.
    pub fn atomic_u32(&self, offset: usize) -> Option<&AtomicU32> {
        if !offset.is_multiple_of(4) || offset.checked_add(4)? > self.len() {
            return None;
        }
        // SAFETY: in bounds and 4-byte aligned (checked above; the mapping is page aligned);
        // AtomicU32 has the layout of u32, any bit pattern is valid, and the mapping lives as
        // long as `self`, which the reference borrows.
        Some(unsafe { &*self.as_ptr().add(offset).cast::<AtomicU32>() })
    }

    /// The mapping as `header_words` 64-bit atomics followed by the rest as byte atomics: a
    /// header of positions and counters, then a data area. `None` if the mapping is shorter than
    /// the header.
    pub fn split_atomic(&self, header_words: usize) -> Option<(&[AtomicU64], &[AtomicU8])> {
        let header_bytes = header_words.checked_mul(8)?;
        let data_bytes = self.len.checked_sub(header_bytes)?;
        let base = self.ptr.as_ptr();
        // SAFETY: both slices lie inside the mapping (`header_bytes + data_bytes == len`) and do
        // not overlap; the mapping is page aligned, so the header is aligned for `AtomicU64`;
        // atomics have no invalid bit patterns, so bytes written by another process are valid;
        // every access through the views is atomic, so concurrent access from other processes
        // is no data race; and the views borrow `self`, which unmaps only when dropped.
        unsafe {
            Some((
                std::slice::from_raw_parts(base as *const AtomicU64, header_words),
                std::slice::from_raw_parts(base.add(header_bytes) as *const AtomicU8, data_bytes),
            ))
        }
    }

    /// The memfd, to hand to a worker.
    pub fn fd(&self) -> &OwnedFd {
        &self.fd
    }
}

impl Drop for SharedMemory {
    fn drop(&mut self) {
        // SAFETY: we mapped exactly this range and nothing borrows it past our lifetime (views
        // into it borrow `self`).
        let _ = unsafe { munmap(self.ptr.cast(), self.len) };
    }
}
