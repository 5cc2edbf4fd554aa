//! Counting this process's io-wq worker threads: the kernel threads (`iou-wrk-<pid>`) io_uring
//! starts when it cannot carry a request without blocking and hands it to a worker instead.
//! A wait that went through one includes a thread hop nobody chose, so an RT worker counts them
//! after its setup and again right after its measuring loop, while its last wait is still armed
//! (a worker blocked on that wait is alive then; an idle one lingers for seconds).
//!
//! Reading `/proc/self/task` allocates (a directory listing, a path per thread): never call
//! this inside a measuring loop.

use std::fs;

/// The name prefix of io-wq workers (`iou-wrk-<pid of the ring's task>`). SQPOLL threads are
/// `iou-sqp-` and are not counted: rtsoak never asks for SQPOLL.
const WORKER_PREFIX: &str = "iou-wrk-";

/// io-wq worker threads of this process right now, from `/proc/self/task/*/comm`. `None` if
/// `/proc` cannot be read (not mounted, or a sandbox hides it): nothing was checked.
pub fn workers() -> Option<u64> {
    let tasks = fs::read_dir("/proc/self/task").ok()?;
    let mut workers = 0;
    for task in tasks {
        let comm = fs::read_to_string(task.ok()?.path().join("comm"));
        // A thread that ended since the listing has no comm left: it is not running anything.
        if comm.is_ok_and(|comm| comm.starts_with(WORKER_PREFIX)) {
            workers += 1;
        }
    }
    Some(workers)
}

/// The io-wq workers a worker had over its measured phase: the most of its two readings, or
/// `None` unless both could be taken.
pub fn most(after_setup: Option<u64>, after_loop: Option<u64>) -> Option<u64> {
    Some(after_setup?.max(after_loop?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_io_uring_hands_to_a_worker_thread_is_seen_as_one() {
        let mut ring = io_uring::IoUring::new(4).unwrap();
        // IOSQE_ASYNC makes io_uring run the request on an io-wq worker, whatever it is; the
        // worker then idles for seconds before it exits.
        let nop = io_uring::opcode::Nop::new()
            .build()
            .flags(io_uring::squeue::Flags::ASYNC);
        // SAFETY: a NOP points at no memory.
        unsafe { ring.submission().push(&nop) }.unwrap();
        ring.submit_and_wait(1).unwrap();
        assert!(
            workers().unwrap() >= 1,
            "the worker that ran the NOP is alive"
        );
    }

    #[test]
    fn the_count_over_a_phase_is_the_larger_reading_and_needs_both() {
        assert_eq!(most(Some(0), Some(2)), Some(2));
        assert_eq!(most(Some(1), Some(0)), Some(1));
        assert_eq!(most(None, Some(3)), None);
        assert_eq!(most(Some(3), None), None);
    }
}
