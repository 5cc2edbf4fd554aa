//! A timer storm: each thread sleeps 50 us relative, again and again, so the noise CPUs take an
//! hrtimer interrupt and a wakeup every time.

use std::path::Path;

use rtsoak_sys::clock::{now_ns, sleep_until_ns};
use rtsoak_sys::region::Region;

const PERIOD_NS: u64 = 50_000;

/// One timer; returns expirations.
pub(super) fn run(region: &Region, _scratch: &Path, _index: usize) -> u64 {
    let mut expirations = 0;
    while !region.stopping() {
        sleep_until_ns(now_ns() + PERIOD_NS);
        expirations += 1;
    }
    expirations
}
