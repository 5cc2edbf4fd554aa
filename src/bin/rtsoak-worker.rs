//! `rtsoak-worker`: the worker processes of a run (the RT publisher and subscriber, the noise),
//! a binary of its own that the coordinator (`rtsoak`) starts from beside itself with the fds
//! of its spec, the shared region, its report and its frame ring mapped (`launch::spawn`,
//! `launch::worker_binary`). Started by hand, without those fds, it says so and exits 1.
//!
//! Why a binary of its own: an RT worker locks all its memory (`mlockall(MCL_CURRENT |
//! MCL_FUTURE)`), so every mapped page of its binary becomes resident. When the workers were
//! `rtsoak` re-executed as a hidden `rtsoak worker`, they carried the command line, the profile
//! parser, the exporters, the result rendering and the statistics of the whole program: measured
//! on x86_64 (release build), a 5.2 MB text segment, of which 4.3 MB r-xp and 0.9 MB r--p were
//! resident, for a peak RSS of 9.6 MiB per RT worker. This binary reaches only `worker::main`,
//! so the linker leaves the rest out: about 1 MB of text, and an RT worker's peak RSS under
//! 8 MiB (tests/worker_rss.rs prints it).

#![forbid(unsafe_code)]

use rtsoak_sys::alloc::CountingAllocator;

/// Every allocation is counted, so workers can show their measured loops allocated nothing.
#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

fn main() {
    std::process::exit(rtsoak_measure::worker::main());
}
