//! `eventfd`: the per-message cost of the eventfd transport's send and receive on one CPU. A
//! cycle arms K io_uring reads on K eventfds (user data 0..K), `write(2)`s 1 to each, and reaps
//! the K reads: each must return 8 bytes holding 1. One operation is one message written and
//! read.

use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU64, Ordering};

use clap::Command;
use io_uring::{IoUring, opcode};
use nix::sys::eventfd::{EfdFlags, EventFd};

use super::checks::Tally;
use super::ring::{drain_leftovers, push_all, submit_and_drain};
use super::{About, Bench, KFlag, Opcode, RoundPlan, Workload, run_single};
use rtsoak_record::bench::{BenchConfig, BenchName, BenchSeries, Setup};
use rtsoak_record::{HostFacts, RingSetup};
use rtsoak_sys::SysError;
use rtsoak_sys::uring::Sqe;

/// The bench, as the registry holds it.
pub(super) struct Eventfd;

impl Bench for Eventfd {
    fn about(&self) -> &'static About {
        &About {
            id: BenchName::Eventfd,
            help: "K eventfd writes read back through io_uring per cycle; ns per message",
            op: "message",
            needs: &[Opcode {
                code: opcode::Read::CODE,
                name: "IORING_OP_READ",
                since: "5.6",
            }],
        }
    }

    fn flags(&self, command: Command) -> Command {
        KFlag::add(command, "Messages (eventfds) per cycle")
    }

    fn run(
        &self,
        config: &BenchConfig,
        plan: RoundPlan,
        _host: &HostFacts,
        setup: &mut Setup,
    ) -> anyhow::Result<Vec<BenchSeries>> {
        run_single(self, config, plan, setup, State::new)
    }
}

/// The bench's state.
struct State {
    ring: IoUring,
    eventfds: Vec<EventFd>,
    /// One 8-byte read buffer per eventfd; the reads point into it. Leaked (once per bench
    /// run): a read left armed by a broken round may still land in it at any time.
    buffers: &'static [AtomicU64],
    entries: Vec<Sqe>,
    k: u64,
}

impl State {
    /// K eventfds, their buffers and the K prepared reads.
    fn new(config: &BenchConfig) -> anyhow::Result<(Self, RingSetup)> {
        let k = config.k as usize;
        let (ring, setup) = super::ring::build(config.ring_setup, k)?;
        let eventfds = (0..k)
            .map(|_| EventFd::from_flags(EfdFlags::EFD_CLOEXEC))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| SysError::new("eventfd2", e))?;
        let buffers: &'static [AtomicU64] = Box::leak((0..k).map(|_| AtomicU64::new(0)).collect());
        let entries = (0..k)
            .map(|i| Sqe::read_u64(eventfds[i].as_raw_fd(), &buffers[i]).user_data(i as u64))
            .collect();
        let bench = State {
            ring,
            eventfds,
            buffers,
            entries,
            k: k as u64,
        };
        Ok((bench, setup))
    }
}

impl Workload for State {
    fn ops_per_cycle(&self) -> u64 {
        self.k
    }

    /// The read's length and the value read, per message.
    fn checks_per_cycle(&self) -> u64 {
        2 * self.k
    }

    #[inline(always)]
    fn cycle(&mut self, tally: &mut Tally) -> bool {
        for buffer in self.buffers {
            buffer.store(0, Ordering::Relaxed);
        }
        if !push_all(&mut self.ring, &self.entries, tally) {
            return false;
        }
        if let Err(error) = self.ring.submit() {
            tally.call_failed(rtsoak_sys::errno_of(&error) as i32);
            return false;
        }
        let one = 1u64.to_ne_bytes();
        for eventfd in &self.eventfds {
            match nix::unistd::write(eventfd, &one) {
                Ok(8) => {}
                Ok(_) => {
                    tally.call_failed(libc::EIO);
                    return false;
                }
                Err(errno) => {
                    tally.call_failed(errno as i32);
                    return false;
                }
            }
        }
        let buffers = self.buffers;
        let k = self.k;
        submit_and_drain(&mut self.ring, k, tally, |t, ud, res| {
            t.expect(ud, i64::from(res), 8);
            let value = if ud < k {
                // The kernel finished writing the buffer before posting this completion.
                buffers[ud as usize].load(Ordering::Acquire) as i64
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
                // Satisfies any read left armed.
                let _ = nix::unistd::write(eventfd, &one);
            }
            drain_leftovers(&mut self.ring);
        }
    }
}
