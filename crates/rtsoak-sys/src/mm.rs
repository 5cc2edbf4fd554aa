//! Memory churn for the `mm` load generator.

use std::num::NonZeroUsize;

use nix::sys::mman::{MapFlags, ProtFlags, mmap_anonymous, munmap};

/// Map `bytes` of private anonymous memory, write one byte to every `page_bytes` (a page fault
/// each), unmap it (TLB-shootdown IPIs to the CPUs that ran this thread's process). False if
/// the mapping failed.
pub fn map_touch_unmap(bytes: NonZeroUsize, page_bytes: usize) -> bool {
    // SAFETY: a fresh private anonymous mapping, touched only through the pointer it returned,
    // within its length, and unmapped before the pointer goes out of scope.
    unsafe {
        let Ok(memory) = mmap_anonymous(
            None,
            bytes,
            ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
            MapFlags::MAP_PRIVATE,
        ) else {
            return false;
        };
        let base = memory.as_ptr().cast::<u8>();
        for offset in (0..bytes.get()).step_by(page_bytes.max(1)) {
            base.add(offset).write_volatile(1);
        }
        let _ = munmap(memory, bytes.get());
    }
    true
}
