//! Memory churn: map 2 MiB anonymous, write every page (a page fault each), unmap. With the
//! load worker's other threads running on other CPUs, every unmap sends TLB-shootdown IPIs.

use std::num::NonZeroUsize;
use std::path::Path;

use nix::sys::mman::{MapFlags, ProtFlags, mmap_anonymous, munmap};

use super::stopping;
use crate::region::Region;

const SIZE: usize = 2 << 20;
const PAGE: usize = 4096;

/// One thread; returns map-touch-unmap cycles.
pub fn run(region: &Region, _scratch: &Path, _index: usize) -> u64 {
    let size = NonZeroUsize::new(SIZE).expect("non-zero");
    let mut cycles = 0;
    while !stopping(region) {
        // SAFETY: a fresh private anonymous mapping, touched only through the pointer it
        // returned and unmapped before the pointer goes out of scope.
        unsafe {
            let Ok(memory) = mmap_anonymous(
                None,
                size,
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                MapFlags::MAP_PRIVATE,
            ) else {
                break;
            };
            let bytes = memory.as_ptr().cast::<u8>();
            for offset in (0..SIZE).step_by(PAGE) {
                bytes.add(offset).write_volatile(1);
            }
            let _ = munmap(memory, SIZE);
        }
        cycles += 1;
    }
    cycles
}
