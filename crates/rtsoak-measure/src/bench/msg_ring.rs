//! `msg-ring`: the per-message cost of the msg-ring transport's send and receive on one CPU. A
//! sending ring queues K `IORING_OP_MSG_RING` into a receiving ring (user data K..2K on the
//! sender, payload 0..K), reaps the K sender completions (each must return 0), then the
//! receiving ring reaps the K messages (each must carry result [`TAG`]). One operation is one
//! message sent and received.

use std::os::fd::AsRawFd;

use clap::Command;
use io_uring::{IoUring, opcode};

use super::checks::Tally;
use super::ring::{drain_leftovers, push_all, submit_and_drain};
use super::{About, Bench, KFlag, Opcode, RoundPlan, Workload, run_single};
use rtsoak_record::bench::{BenchConfig, BenchName, BenchSeries, Setup};
use rtsoak_record::{HostFacts, RingSetup};
use rtsoak_sys::uring::Sqe;

/// The result every message carries to the receiver.
pub(crate) const TAG: i32 = 0x5eed;

/// The bench, as the registry holds it.
pub(super) struct MsgRing;

impl Bench for MsgRing {
    fn about(&self) -> &'static About {
        &About {
            id: BenchName::MsgRing,
            help: "K IORING_OP_MSG_RING messages per cycle from one ring into another; ns per message",
            op: "message",
            needs: &[Opcode {
                code: opcode::MsgRingData::CODE,
                name: "IORING_OP_MSG_RING",
                since: "5.18",
            }],
        }
    }

    fn flags(&self, command: Command) -> Command {
        KFlag::add(command, "Messages per cycle")
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
    sender: IoUring,
    receiver: IoUring,
    entries: Vec<Sqe>,
    k: u64,
}

impl State {
    /// Two rings and K prepared messages from one to the other.
    fn new(config: &BenchConfig) -> anyhow::Result<(Self, RingSetup)> {
        let k = config.k as usize;
        let (receiver, setup) = super::ring::build(config.ring_setup, k)?;
        let (sender, _) = super::ring::build(config.ring_setup, k)?;
        let target = receiver.as_raw_fd();
        let entries = (0..k)
            .map(|i| Sqe::msg_ring_data(target, TAG, i as u64).user_data((k + i) as u64))
            .collect();
        let bench = State {
            sender,
            receiver,
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

    fn checks_per_cycle(&self) -> u64 {
        2 * self.k
    }

    #[inline(always)]
    fn cycle(&mut self, tally: &mut Tally) -> bool {
        if !push_all(&mut self.sender, &self.entries, tally) {
            return false;
        }
        let k = self.k;
        submit_and_drain(&mut self.sender, k, tally, |t, ud, res| {
            t.expect(ud, i64::from(res), 0)
        }) && submit_and_drain(&mut self.receiver, k, tally, |t, ud, res| {
            t.expect(ud, i64::from(res), i64::from(TAG))
        })
    }

    fn after_round(&mut self, tally: &mut Tally) {
        if tally.timeouts > 0 || tally.call_errors > 0 {
            drain_leftovers(&mut self.sender);
            drain_leftovers(&mut self.receiver);
        }
    }
}
