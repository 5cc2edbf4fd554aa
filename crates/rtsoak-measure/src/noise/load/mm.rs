//! Memory churn: map 2 MiB anonymous, write every page (a page fault each), unmap. With the
//! load worker's other threads running on other CPUs, every unmap sends TLB-shootdown IPIs.

use std::num::NonZeroUsize;
use std::path::Path;

use rtsoak_sys::region::Region;

const SIZE: usize = 2 << 20;
const PAGE: usize = 4096;

/// One thread; returns map-touch-unmap cycles.
pub(super) fn run(region: &Region, _scratch: &Path, _index: usize) -> u64 {
    let size = NonZeroUsize::new(SIZE).expect("non-zero");
    let mut cycles = 0;
    while !region.stopping() && rtsoak_sys::mm::map_touch_unmap(size, PAGE) {
        cycles += 1;
    }
    cycles
}
