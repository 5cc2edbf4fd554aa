//! Buffers the kernel fills by reading an fd, for a subscriber's wait on an eventfd or a
//! signalfd: an io_uring read may still be in flight when the waiter that armed it is gone, so a
//! buffer lives for the rest of the process (one per waiter, made before the measuring loop),
//! and what a completion read is copied out of it value by value.

use std::cell::UnsafeCell;
use std::os::fd::{AsRawFd, BorrowedFd};

use nix::errno::Errno;

/// A type the kernel may fill with any bytes.
///
/// # Safety
///
/// Every bit pattern of `size_of::<Self>()` bytes is a valid value of the type (integers, and
/// C structs of them).
pub unsafe trait AnyBytes: Copy + 'static {}

// SAFETY: an integer.
unsafe impl AnyBytes for u64 {}
// SAFETY: `signalfd_siginfo` is a C struct of integers and padding.
unsafe impl AnyBytes for libc::signalfd_siginfo {}

/// `N` values of `T` that reads of an fd land in.
pub struct ReadBuffer<T: AnyBytes, const N: usize> {
    values: &'static UnsafeCell<[T; N]>,
}

impl<T: AnyBytes, const N: usize> ReadBuffer<T, N> {
    /// A buffer of zeroes (a valid `T`: any bytes are), leaked: it outlives every read.
    pub fn zeroed() -> Self {
        // SAFETY: zero bytes are a valid `[T; N]` (`AnyBytes`).
        let zeroes: [T; N] = unsafe { std::mem::zeroed() };
        ReadBuffer {
            values: Box::leak(Box::new(UnsafeCell::new(zeroes))),
        }
    }

    /// Value `index` as the last read left it (read only once its completion has arrived:
    /// earlier, it may be half written, though still a valid `T`).
    #[inline]
    pub fn get(&self, index: usize) -> T {
        assert!(index < N, "value {index} of a buffer of {N}");
        // SAFETY: `index` is in bounds of the live (leaked) array; any bytes are a valid `T`;
        // volatile, since the kernel writes the buffer outside what the compiler can see.
        unsafe { self.values.get().cast::<T>().add(index).read_volatile() }
    }

    /// `read(2)` from `fd` into the buffer: the bytes read.
    #[inline]
    pub fn read_from(&self, fd: BorrowedFd<'_>) -> Result<usize, Errno> {
        // SAFETY: the buffer is `Self::BYTES` writable bytes for the rest of the process, any
        // bytes in it are valid, and `fd` is open for the call.
        let read = unsafe { libc::read(fd.as_raw_fd(), self.as_mut_ptr().cast(), Self::BYTES) };
        if read < 0 {
            Err(Errno::last())
        } else {
            Ok(read as usize)
        }
    }

    /// Its size.
    pub(crate) const BYTES: usize = std::mem::size_of::<[T; N]>();

    /// Where the kernel writes.
    pub(crate) fn as_mut_ptr(&self) -> *mut u8 {
        self.values.get().cast()
    }
}
