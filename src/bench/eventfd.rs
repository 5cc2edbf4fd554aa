//! `eventfd`: the per-message cost of the eventfd transport's send and receive on one CPU. A
//! cycle arms K io_uring reads on K eventfds (user data 0..K), `write(2)`s 1 to each, and reaps
//! the K reads: each must return 8 bytes holding 1. One operation is one message written and
//! read.

use std::os::fd::AsRawFd;

use io_uring::{IoUring, opcode, squeue, types};
use nix::sys::eventfd::{EfdFlags, EventFd};

use super::checks::Tally;
use super::ring::{completion_timeout, drain_leftovers, push_all, submit_and_drain};
use super::{BenchConfig, Workload};
use crate::record::RingSetup;
use crate::sys::SysError;

/// The bench's state.
pub struct Eventfd {
    ring: IoUring,
    eventfds: Vec<EventFd>,
    /// One 8-byte read buffer per eventfd; the reads point into it.
    buffers: Box<[u64]>,
    entries: Vec<squeue::Entry>,
    k: u64,
    timeout: types::Timespec,
}

impl Eventfd {
    /// K eventfds, their buffers and the K prepared reads.
    pub fn new(config: &BenchConfig) -> anyhow::Result<(Self, RingSetup)> {
        let k = config.k as usize;
        let (ring, setup) = super::ring::build(config.ring_setup, k)?;
        let eventfds = (0..k)
            .map(|_| EventFd::from_flags(EfdFlags::EFD_CLOEXEC))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| SysError::new("eventfd2", e))?;
        let mut buffers: Box<[u64]> = vec![0u64; k].into_boxed_slice();
        let entries = (0..k)
            .map(|i| {
                let buffer = (&mut buffers[i] as *mut u64).cast::<u8>();
                opcode::Read::new(types::Fd(eventfds[i].as_raw_fd()), buffer, 8)
                    .build()
                    .user_data(i as u64)
            })
            .collect();
        let bench = Eventfd {
            ring,
            eventfds,
            buffers,
            entries,
            k: k as u64,
            timeout: completion_timeout(),
        };
        Ok((bench, setup))
    }
}

impl Workload for Eventfd {
    fn ops_per_cycle(&self) -> u64 {
        self.k
    }

    /// The read's length and the value read, per message.
    fn checks_per_cycle(&self) -> u64 {
        2 * self.k
    }

    #[inline(always)]
    fn cycle(&mut self, tally: &mut Tally) -> bool {
        for buffer in self.buffers.iter_mut() {
            *buffer = 0;
        }
        // SAFETY: the reads point into `self.buffers`, which lives as long as the ring and is
        // not touched until their completions are reaped (or drained after a broken round).
        if !unsafe { push_all(&mut self.ring, &self.entries, tally) } {
            return false;
        }
        if let Err(error) = self.ring.submit() {
            tally.call_failed(error.raw_os_error().unwrap_or(libc::EIO));
            return false;
        }
        let one = 1u64.to_ne_bytes();
        for eventfd in &self.eventfds {
            // SAFETY: writes 8 bytes from a live stack buffer to an eventfd we own.
            let written = unsafe { libc::write(eventfd.as_raw_fd(), one.as_ptr().cast(), 8) };
            if written != 8 {
                tally.call_failed(nix::errno::Errno::last_raw());
                return false;
            }
        }
        let buffers = self.buffers.as_ptr();
        let k = self.k;
        submit_and_drain(&mut self.ring, k, &self.timeout, tally, |t, ud, res| {
            t.expect(ud, i64::from(res), 8);
            let value = if ud < k {
                // SAFETY: ud < k indexes a live buffer; the kernel finished writing it before
                // posting this completion, and volatile keeps the read after the reap.
                unsafe { std::ptr::read_volatile(buffers.add(ud as usize)) as i64 }
            } else {
                -1
            };
            t.expect(ud, value, 1);
        })
    }

    fn after_round(&mut self, tally: &mut Tally) {
        if tally.timeouts > 0 || tally.call_errors > 0 {
            let one = 1u64.to_ne_bytes();
            for eventfd in &self.eventfds {
                // SAFETY: as in `cycle`; satisfies any read left armed.
                unsafe { libc::write(eventfd.as_raw_fd(), one.as_ptr().cast(), 8) };
            }
            drain_leftovers(&mut self.ring);
        }
    }
}
