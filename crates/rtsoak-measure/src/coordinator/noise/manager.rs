//! The noise of one run, as the coordinator manages it: the burst and load workers that last the
//! whole run, the queue-noise publishers and subscribers that each live a random 50–500 ms and
//! are replaced when they exit (so membership keeps changing), and the external load command.
//! Every noise process is pinned to the noise CPUs, and none outlives [`NoiseManager::finish`].
//!
//! What each noise process reports is folded into one [`NoiseOutcome`] as it is reaped
//! (`coordinator::noise::fold`), including the policy, priority and CPUs it really got: its interval frames
//! are decoded straight into the run's noise histograms (no histogram per frame), and its seat's
//! frame ring is handed to its replacement.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::Context;

use super::fold;
use crate::launch::external::External;
use crate::launch::{Spawned, burst_spec, load_spec, queue_noise_spec, ring_for, spawn};
use crate::protocol::read_report;
use crate::protocol::ring::RingReader;
use crate::result::{NoiseOutcome, worker_series};
use rtsoak_record::Role;
use rtsoak_record::plan::RunPlan;
use rtsoak_record::result::{ExternalActivity, NoiseDeath};
use rtsoak_record::transport::Name;
use rtsoak_sys::region::{RT_MEMBER, SharedRegion, member_state, worker_state};
use rtsoak_sys::spawn::Process;

/// Worker slot of the burst worker.
const BURST_SLOT: usize = 2;
/// Worker slot of the load worker.
const LOAD_SLOT: usize = 3;
/// First worker slot of queue noise.
const FIRST_QUEUE_SLOT: usize = 4;
/// How long noise gets to finish on its own after the run stops. Noise workers end within
/// milliseconds of the stop; the limit only guards against one that hangs. Under emulation
/// (an aarch64 kernel on an x86 host, every noise worker competing with FIFO bursts for the
/// noise CPUs) a burst worker has needed more than 2 s to write its report, and a worker killed
/// before it reports loses what it did.
const GRACE: Duration = Duration::from_secs(10);
/// How long the burst and load workers get to be ready before the first period. They are
/// ready within milliseconds; under emulation, with the noise CPUs already busy, a worker
/// started seconds late.
const READY_TIMEOUT: Duration = Duration::from_secs(10);

/// One queue-noise position: a publisher or subscriber that is replaced when it exits.
struct Seat {
    role: Role,
    worker_slot: usize,
    member: usize,
    worker: Option<Spawned>,
    /// The seat's frame ring between workers (drained: its last worker has been folded).
    ring: Option<RingReader>,
}

/// The noise of one run.
pub(crate) struct NoiseManager<'a> {
    plan: &'a RunPlan,
    transport: Name,
    region: &'a SharedRegion,
    scratch_dir: PathBuf,
    seats: Vec<Seat>,
    fixed: Vec<Spawned>,
    external: Option<External>,
    next_publisher_id: u32,
    spawning: bool,
    rng: fastrand::Rng,
    outcome: NoiseOutcome,
}

impl<'a> NoiseManager<'a> {
    /// Noise for `plan` (nothing happens until [`NoiseManager::start`]).
    pub(crate) fn new(
        plan: &'a RunPlan,
        transport: Name,
        region: &'a SharedRegion,
        scratch_dir: &Path,
    ) -> Self {
        let queue = &plan.noise.queue;
        let mut seats = Vec::new();
        let roles = std::iter::repeat_n(Role::NoisePublisher, queue.publishers as usize).chain(
            std::iter::repeat_n(Role::NoiseSubscriber, queue.subscribers as usize),
        );
        let mut member = RT_MEMBER;
        for (i, role) in roles.enumerate() {
            if role == Role::NoiseSubscriber {
                member += 1;
            }
            seats.push(Seat {
                role,
                worker_slot: FIRST_QUEUE_SLOT + i,
                member,
                worker: None,
                ring: None,
            });
        }
        let mut outcome = NoiseOutcome::default();
        outcome.activity.enabled = plan.noise.enabled;
        outcome.activity.cpus = plan.noise_cpus.clone();
        NoiseManager {
            plan,
            transport,
            region,
            scratch_dir: scratch_dir.to_path_buf(),
            seats: if plan.noise.enabled {
                seats
            } else {
                Vec::new()
            },
            fixed: Vec::new(),
            external: None,
            next_publisher_id: 1,
            spawning: false,
            rng: fastrand::Rng::new(),
            outcome,
        }
    }

    /// Start every noise source.
    pub(crate) fn start(&mut self) -> anyhow::Result<()> {
        let noise = &self.plan.noise;
        if !noise.enabled {
            return Ok(());
        }
        if noise.bursts.enabled && !noise.bursts.cpus.is_empty() {
            let spec = burst_spec(self.plan, BURST_SLOT);
            let ring = ring_for(Role::Burst, BURST_SLOT)?;
            self.fixed.push(spawn(spec, self.region, ring)?);
        }
        let load = &noise.load;
        if load.sched_pairs + load.net_streams + load.mm_threads + load.timers + load.file_writers
            > 0
        {
            let spec = load_spec(self.plan, LOAD_SLOT, &self.scratch_dir);
            let ring = ring_for(Role::Load, LOAD_SLOT)?;
            self.fixed.push(spawn(spec, self.region, ring)?);
        }
        self.await_fixed();
        if !noise.external.is_empty() {
            self.external = Some(self.start_external()?);
        }
        if !self.seats.is_empty() {
            self.region
                .get()
                .control
                .queue_noise_live
                .store(1, Ordering::Release);
        }
        self.spawning = true;
        self.tick(true);
        Ok(())
    }

    /// Wait until the burst and load workers are ready (the burst threads at their priority),
    /// so that the warm-up already runs under them: until a worker has exited, or for at most
    /// [`READY_TIMEOUT`]. One that is not ready by then runs late, and its record shows it.
    fn await_fixed(&mut self) {
        let deadline = Instant::now() + READY_TIMEOUT;
        for worker in &mut self.fixed {
            let state = &self.region.get().workers[worker.spec.slot].state;
            while state.load(Ordering::Acquire) == worker_state::EMPTY
                && matches!(worker.child.try_wait(), Ok(None))
                && Instant::now() < deadline
            {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }

    /// Reap queue noise that has lived its life, fold what it did, and replace it. `ended`:
    /// a child may have ended since the last tick (else no running worker is asked after).
    pub(crate) fn tick(&mut self, ended: bool) {
        for i in 0..self.seats.len() {
            let exited = match &mut self.seats[i].worker {
                Some(worker) => ended && matches!(worker.child.try_wait(), Ok(Some(_))),
                None => true,
            };
            if !exited {
                continue;
            }
            let (role, member) = (self.seats[i].role, self.seats[i].member);
            if let Some(worker) = self.seats[i].worker.take() {
                self.seats[i].ring = Some(self.retire(role, member, worker, false));
            }
            // Replacements only while the run runs: once it stops, a newcomer would find the
            // RT pair gone.
            if self.spawning && self.region.get().phase() != rtsoak_sys::region::phase::STOP {
                self.seat(i);
            }
        }
    }

    /// Stop everything, reap everything, and return what the noise did.
    pub(crate) fn finish(mut self) -> NoiseOutcome {
        self.spawning = false;
        let deadline = Instant::now() + GRACE;
        let mut seats = std::mem::take(&mut self.seats);
        for seat in &mut seats {
            if let Some(mut worker) = seat.worker.take() {
                let hung = wait_until(&mut worker.child, deadline).is_none();
                drop(self.retire(seat.role, seat.member, worker, hung));
            }
        }
        // Every noise publisher has exited: nothing more reaches the queue, so the RT
        // subscriber can take the last noise messages and leave.
        self.region
            .get()
            .control
            .queue_noise_live
            .store(0, Ordering::Release);
        for mut worker in std::mem::take(&mut self.fixed) {
            let hung = wait_until(&mut worker.child, deadline).is_none();
            drop(self.fold(worker, hung));
        }
        if let Some(child) = self.external.take() {
            self.stop_external(child);
        }
        self.outcome.activity.cpus_observed.sort_unstable();
        if self.plan.noise.enabled {
            self.outcome.activity.idle = fold::idle(self.plan, &self.outcome.activity);
        }
        self.outcome
    }

    /// Start the queue-noise process for seat `i`.
    fn seat(&mut self, i: usize) {
        let (role, worker_slot, member) = {
            let seat = &self.seats[i];
            (seat.role, seat.worker_slot, seat.member)
        };
        let queue = &self.plan.noise.queue;
        let lifetime_ns = self.rng.u64(queue.lifetime_min_ns..=queue.lifetime_max_ns);
        let publisher_id = match role {
            Role::NoisePublisher => {
                self.next_publisher_id += 1;
                self.next_publisher_id
            }
            // Track no single publisher: every message is "other" to a noise subscriber.
            _ => u32::MAX,
        };
        let spec = queue_noise_spec(
            self.plan,
            self.transport,
            role,
            worker_slot,
            member,
            publisher_id,
            lifetime_ns,
        );
        self.region.get().workers[worker_slot]
            .state
            .store(worker_state::EMPTY, Ordering::Release);
        let ring = match self.seats[i].ring.take() {
            Some(ring) => ring,
            None => match ring_for(role, worker_slot) {
                Ok(ring) => ring,
                Err(error) => return self.failed(format!("starting a {}: {error:#}", role.name())),
            },
        };
        match spawn(spec, self.region, ring) {
            Ok(worker) => {
                let activity = &mut self.outcome.activity.queue;
                match role {
                    Role::NoisePublisher => activity.publishers_started += 1,
                    _ => activity.subscribers_started += 1,
                }
                self.seats[i].worker = Some(worker);
            }
            Err(error) => self.failed(format!("starting a {}: {error:#}", role.name())),
        }
    }

    /// A queue-noise process ended (`hung`: killed by rtsoak after the grace time): make sure
    /// it left the queue, then fold its report. Returns its frame ring, drained, for the seat's
    /// next worker.
    fn retire(&mut self, role: Role, member: usize, worker: Spawned, hung: bool) -> RingReader {
        if role == Role::NoiseSubscriber {
            let slot = &self.region.get().members[member];
            if slot.state.load(Ordering::Acquire) == member_state::ACTIVE {
                // It died without leaving: take it out so publishers stop waking it.
                self.region.get().leave(member);
            }
            self.outcome.activity.queue.subscribers_stopped += 1;
        } else {
            self.outcome.activity.queue.publishers_stopped += 1;
        }
        self.fold(worker, hung)
    }

    /// Fold what one noise worker left into the outcome (`hung`: rtsoak killed it after the
    /// grace time); returns its frame ring, drained. A worker that did not end by itself with
    /// exit status 0 died, and its death fails the run.
    fn fold(&mut self, mut worker: Spawned, hung: bool) -> RingReader {
        let role = worker.spec.role;
        let status = worker.child.try_wait().ok().flatten();
        if hung || status.is_some_and(|status| !status.success()) {
            let exit = match status {
                Some(status) if !hung => status.to_string(),
                _ => format!(
                    "it had not ended {} s after the run stopped, so rtsoak killed it",
                    GRACE.as_secs()
                ),
            };
            self.outcome.activity.deaths.push(NoiseDeath {
                role,
                pid: worker.child.id() as i32,
                exit,
            });
        }
        let keys = worker_series(role);
        let series = &mut self.outcome.series;
        let mut damaged = Vec::new();
        worker.frames.drain_each(|payload| {
            if let Err(error) = fold::fold_frame(payload, keys, series) {
                damaged.push(error);
            }
        });
        for error in damaged {
            worker
                .frames
                .problem(format!("an interval frame: {error:#}"));
        }
        if let Some(problems) = worker.frames.take_problems() {
            self.failed(format!("a {}: {problems}", role.name()));
        }
        let report = read_report(&mut worker.report);
        let ring = worker.frames.into_ring();
        fold::fold_report(&mut self.outcome, &worker.spec, worker.child.id(), report);
        ring
    }

    fn failed(&mut self, message: String) {
        fold::failed(&mut self.outcome.activity, message);
    }

    /// Start the external command through its init (`launch::external`): its own process
    /// group, pinned to the noise CPUs, its whole tree dying with the coordinator, output to a
    /// log in the result directory. Never through a shell, never found by a search of `PATH`
    /// as root (`launch::program`).
    fn start_external(&self) -> anyhow::Result<External> {
        let argv = &self.plan.noise.external;
        let program = crate::launch::program::external_program(&argv[0])
            .map_err(|why| anyhow::anyhow!("the external noise command {argv:?}: {why}"))?;
        // Created by the result directory's fd under a fresh name, so a link planted as
        // external-noise.log is replaced, never written through; 0644 whatever the umask.
        let log = rtsoak_sys::safe_dir::SafeDir::open(&self.scratch_dir)
            .and_then(|dir| Ok(dir.create_file("external-noise.log".as_ref(), 0o644)?))
            .context("creating external-noise.log in the result directory")?;
        crate::launch::external::start(&program, argv, &log, &self.plan.noise_cpus)
            .context("starting the external noise command")
    }

    /// Stop the external command's process group: SIGTERM (its init passes it on to the
    /// command's whole tree and ends it after its own grace time), then SIGKILL after ours.
    fn stop_external(&mut self, mut external: External) {
        let pgid = nix::unistd::Pid::from_raw(external.init.id() as i32);
        let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGTERM);
        let init_ended = wait_until(&mut external.init, Instant::now() + GRACE).is_some();
        let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
        let status = external.command_status().filter(|_| init_ended);
        let exit = match status {
            Some(status) => match status.signal() {
                Some(signal) => {
                    format!("stopped by rtsoak at the end of the run (signal {signal})")
                }
                None => status.to_string(),
            },
            None => "killed by rtsoak after ignoring SIGTERM".to_string(),
        };
        self.outcome.activity.external = Some(ExternalActivity {
            argv: self.plan.noise.external.clone(),
            pid: external.pid,
            exit,
        });
    }
}

/// A child process as [`wait_until`] sees it (the workers' and the external command's init's
/// `sys::spawn::Process`).
trait Ending {
    /// Its status if it has ended; `Err` if it cannot be asked.
    fn ended(&mut self) -> Result<Option<ExitStatus>, ()>;
    /// Kill it and reap it.
    fn kill_and_reap(&mut self);
}

impl Ending for Process {
    fn ended(&mut self) -> Result<Option<ExitStatus>, ()> {
        self.try_wait().map_err(drop)
    }

    fn kill_and_reap(&mut self) {
        let _ = self.kill();
        let _ = self.wait();
    }
}

/// Wait for `child` until `deadline`, then kill it; always reaps. Returns its status if it ended
/// on its own.
fn wait_until(child: &mut impl Ending, deadline: Instant) -> Option<ExitStatus> {
    loop {
        match child.ended() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                child.kill_and_reap();
                return None;
            }
        }
    }
}
