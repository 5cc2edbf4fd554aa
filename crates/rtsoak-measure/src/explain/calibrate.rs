//! The explainer's calibration: a priority inversion with a known answer, staged with the roles
//! of a real run, traced and explained by the same code as a run's spikes.
//!
//! On CPU A a noise publisher (FIFO 10) takes a PI futex; a burst thread (FIFO 50) then keeps
//! it off CPU A for [`BURST_US`]; meanwhile the RT publisher (FIFO 40) on CPU B needs the futex.
//! Priority inheritance boosts the holder to FIFO 40, which is still below the burst, so the RT
//! publisher waits until the burst ends. The right explanation of each round's wait names the
//! PI futex's rt_mutex, the holder's pid and role, its boost to FIFO 40 and the burst thread as
//! its preemptor.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, Ordering};
use std::time::Duration;

use super::Tracer;
use rtsoak_analysis::explain::blame::{self, Target};
use rtsoak_record::Outlier;
use rtsoak_record::result::explain::{ExplainedOutlier, LockKind, TaskRole, Wait, Why};
use rtsoak_record::{Role, Series};
use rtsoak_sys::clock::now_ns;
use rtsoak_sys::futex;
use rtsoak_sys::sched::{self, SchedPolicy};

/// How long the burst keeps the holder off its CPU, us.
/// Long enough that the RT publisher, asking 0.5 ms in, waits mostly while it runs even where
/// its own wakeup takes milliseconds (an emulated machine).
pub const BURST_US: u64 = 10_000;
/// How long after the burst starts the RT publisher asks for the lock, us.
const ASK_AFTER_US: u64 = 500;
/// Attempts per round before the calibration gives up staging it.
const MAX_ATTEMPTS_PER_ROUND: u32 = 4;
pub const HOLDER_FIFO: u8 = 10;
pub const RT_FIFO: u8 = 40;
pub const BURST_FIFO: u8 = 50;

/// What the RT publisher thread is told: wait, stage the rounds, or give up.
const WAIT: u8 = 0;
const GO: u8 = 1;
const CANCEL: u8 = 2;

/// One round as it happened and as it was explained.
pub struct Round {
    pub holder_tid: i32,
    pub burst_tid: i32,
    pub waited_us: u64,
    pub explained: ExplainedOutlier,
    /// What the explanation got wrong; empty when it named everything.
    pub wrong: Vec<String>,
}

/// The staged rounds, and how many attempts staged no inversion and were staged again.
pub struct Calibration {
    pub rounds: Vec<Round>,
    pub restaged: u32,
}

/// Stage `rounds` inversions on CPUs `holder_cpu` and `waiter_cpu` and explain each.
pub fn run(
    rounds: u32,
    holder_cpu: usize,
    waiter_cpu: usize,
    keep: Option<std::path::PathBuf>,
) -> anyhow::Result<Calibration> {
    check_privilege()?;
    let (waiter, tid) = RtPublisher::spawn(rounds, holder_cpu, waiter_cpu).ready()?;
    let options = super::Options {
        // The staged waits last milliseconds.
        min_wait_us: 50,
        keep,
    };
    let tracer = match Tracer::start(&[tid], options) {
        Ok(tracer) => tracer,
        Err(reason) => {
            waiter.go.store(CANCEL, Ordering::Release);
            let _ = waiter.thread.join();
            anyhow::bail!("the explainer cannot trace here: {reason}");
        }
    };
    waiter.go.store(GO, Ordering::Release);
    let staged: Vec<Staged> = waiter.rounds.iter().collect();
    let outcome = waiter
        .thread
        .join()
        .map_err(|_| anyhow::anyhow!("the RT publisher thread panicked"))?;
    // Let the reader take the last events before tracing stops.
    std::thread::sleep(Duration::from_millis(50));
    let trace = tracer.finish();
    let unstaged = outcome?;
    if staged.len() < rounds as usize {
        anyhow::bail!(
            "only {} of {rounds} rounds staged the inversion in {} attempts: the others' RT \
             publisher asked for the futex after the burst, or waited mostly after it (is this \
             machine heavily loaded or emulated?)",
            staged.len(),
            staged.len() as u32 + unstaged
        );
    }
    if let Some(reason) = trace.tracing.unavailable {
        anyhow::bail!("the trace could not be read: {reason}");
    }
    Ok(Calibration {
        rounds: explain_rounds(staged, &trace.episodes, tid),
        restaged: unstaged,
    })
}

/// The RT publisher's thread: it stages the rounds once told GO, and sends each staged one.
struct RtPublisher {
    thread: std::thread::JoinHandle<anyhow::Result<u32>>,
    tid: Arc<AtomicU32>,
    ready: Arc<AtomicBool>,
    go: Arc<AtomicU8>,
    rounds: std::sync::mpsc::Receiver<Staged>,
}

impl RtPublisher {
    /// The RT publisher runs in its own thread so that the tracer can watch its tid from the
    /// start; it waits for `go` to say GO (or CANCEL, when tracing cannot start). It returns how
    /// many attempts staged no inversion.
    fn spawn(rounds: u32, holder_cpu: usize, waiter_cpu: usize) -> Self {
        let tid = Arc::new(AtomicU32::new(0));
        let ready = Arc::new(AtomicBool::new(false));
        let go = Arc::new(AtomicU8::new(WAIT));
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = {
            let (tid, ready, go) = (tid.clone(), ready.clone(), go.clone());
            std::thread::spawn(move || -> anyhow::Result<u32> {
                sched::set_thread_name(Role::Publisher.comm())?;
                sched::pin_to(&[waiter_cpu])?;
                tid.store(nix::unistd::gettid().as_raw() as u32, Ordering::Release);
                ready.store(true, Ordering::Release);
                let start = loop {
                    match go.load(Ordering::Acquire) {
                        WAIT => std::thread::sleep(Duration::from_millis(1)),
                        state => break state,
                    }
                };
                if start == CANCEL {
                    return Ok(0);
                }
                sched::set_policy(SchedPolicy::Fifo, RT_FIFO)?;
                // One inversion first, neither checked nor counted: it runs the PI futex and
                // tracepoint paths for the first time, and an emulated CPU (QEMU TCG translates
                // each code block the first time it runs) spent 7 ms of a 12.6 ms wait there on
                // aarch64, on the RT publisher's CPU, which is not the inversion under test.
                one_round(holder_cpu)?;
                std::thread::sleep(Duration::from_millis(20));
                // A round whose burst ended before the RT publisher asked, or whose wait lay
                // mostly after the burst (a slow or emulated machine), did not stage the
                // inversion it checks: it is staged again, a few times at most. The threads'
                // own clocks decide, never the trace.
                let (mut staged, mut attempts) = (0, 0);
                while staged < rounds && attempts < rounds * MAX_ATTEMPTS_PER_ROUND {
                    attempts += 1;
                    let round = one_round(holder_cpu)?;
                    if round.staged() {
                        staged += 1;
                        tx.send(round).ok();
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                Ok(attempts - staged)
            })
        };
        RtPublisher {
            thread,
            tid,
            ready,
            go,
            rounds: rx,
        }
    }

    /// The thread's tid once it is set up, or why its setup failed.
    fn ready(self) -> anyhow::Result<(Self, i32)> {
        while !self.ready.load(Ordering::Acquire) {
            if self.thread.is_finished() {
                return match self.thread.join() {
                    Ok(Err(error)) => Err(error.context("setting up the RT publisher thread")),
                    _ => Err(anyhow::anyhow!(
                        "the RT publisher thread ended during its setup"
                    )),
                };
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let tid = self.tid.load(Ordering::Acquire) as i32;
        Ok((self, tid))
    }
}

/// Explain each staged round's wait from the trace and check what it named.
fn explain_rounds(
    staged: Vec<Staged>,
    episodes: &rtsoak_analysis::explain::episodes::Episodes,
    tid: i32,
) -> Vec<Round> {
    let outliers: Vec<Outlier> = staged
        .iter()
        .map(|s| Outlier {
            at_ns: s.asked_ns,
            value_ns: s.waited_ns,
        })
        .collect();
    let target = Target {
        series: Series::SendCall,
        outliers: &outliers,
        over_threshold: outliers.len() as u64,
        tasks: &[tid],
    };
    let (_, explained) = blame::explain(&target, episodes, 0);
    staged
        .into_iter()
        .zip(explained)
        .map(|(staged, explained)| Round {
            wrong: check(&explained, &staged),
            holder_tid: staged.holder_tid,
            burst_tid: staged.burst_tid,
            waited_us: staged.waited_ns / 1_000,
            explained,
        })
        .collect()
}

/// What one round did, as its threads saw it.
struct Staged {
    holder_tid: i32,
    burst_tid: i32,
    asked_ns: u64,
    waited_ns: u64,
    /// When the burst stopped spinning: the RT publisher must have asked before.
    burst_end_ns: u64,
}

impl Staged {
    /// The RT publisher asked while the burst ran, and waited mostly while it did.
    fn staged(&self) -> bool {
        self.asked_ns < self.burst_end_ns
            && 2 * (self.burst_end_ns - self.asked_ns) >= self.waited_ns
    }
}

/// One inversion: start the holder and the burst on `holder_cpu`, then take the lock.
fn one_round(holder_cpu: usize) -> anyhow::Result<Staged> {
    let word = Arc::new(AtomicU32::new(0));
    let held = Arc::new(AtomicBool::new(false));
    let burst_on = Arc::new(AtomicBool::new(false));
    let asked = Arc::new(AtomicBool::new(false));
    let holder = {
        let (word, held, asked) = (word.clone(), held.clone(), asked.clone());
        std::thread::spawn(move || -> anyhow::Result<i32> {
            sched::set_thread_name(Role::NoisePublisher.comm())?;
            sched::pin_to(&[holder_cpu])?;
            sched::set_policy(SchedPolicy::Fifo, HOLDER_FIFO)?;
            let tid = nix::unistd::gettid().as_raw();
            futex::lock_pi_private(&word, tid as u32)?;
            held.store(true, Ordering::Release);
            // Hold the lock until the RT publisher has asked for it (the burst keeps this
            // thread off its CPU meanwhile), then a moment more.
            while !asked.load(Ordering::Acquire) {
                std::hint::spin_loop();
            }
            spin_us(50);
            futex::unlock_pi_private(&word, tid as u32)?;
            Ok(tid)
        })
    };
    while !held.load(Ordering::Acquire) {
        std::thread::sleep(Duration::from_micros(100));
    }
    let burst = {
        let burst_on = burst_on.clone();
        std::thread::spawn(move || -> anyhow::Result<(i32, u64)> {
            sched::set_thread_name(Role::Burst.comm())?;
            sched::pin_to(&[holder_cpu])?;
            sched::set_policy(SchedPolicy::Fifo, BURST_FIFO)?;
            burst_on.store(true, Ordering::Release);
            spin_us(BURST_US);
            Ok((nix::unistd::gettid().as_raw(), now_ns()))
        })
    };
    // Sleep, not spin: the burst thread starts on this CPU at this thread's priority and must
    // run to move itself.
    while !burst_on.load(Ordering::Acquire) {
        std::thread::sleep(Duration::from_micros(50));
    }
    spin_us(ASK_AFTER_US);
    let tid = nix::unistd::gettid().as_raw() as u32;
    asked.store(true, Ordering::Release);
    let asked_ns = now_ns();
    futex::lock_pi_private(&word, tid)?;
    let waited_ns = now_ns() - asked_ns;
    futex::unlock_pi_private(&word, tid)?;
    let holder_tid = holder
        .join()
        .map_err(|_| anyhow::anyhow!("the holder panicked"))??;
    let (burst_tid, burst_end_ns) = burst
        .join()
        .map_err(|_| anyhow::anyhow!("the burst panicked"))??;
    Ok(Staged {
        holder_tid,
        burst_tid,
        asked_ns,
        waited_ns,
        burst_end_ns,
    })
}

fn spin_us(us: u64) {
    let end = now_ns() + us * 1_000;
    while now_ns() < end {
        std::hint::spin_loop();
    }
}

/// Whether this process may run the staged threads: found out by trying, before anything
/// real-time starts.
pub fn check_privilege() -> anyhow::Result<()> {
    sched::try_policy(SchedPolicy::Fifo, BURST_FIFO).map_err(|error| {
        anyhow::anyhow!(
            "cannot use SCHED_FIFO {BURST_FIFO}: {}",
            sched::policy_error(&error)
        )
    })
}

/// What `explained` says wrong about `staged`.
fn check(explained: &ExplainedOutlier, staged: &Staged) -> Vec<String> {
    let mut wrong = Vec::new();
    let Why::Explained(chain) = &explained.why else {
        return vec!["unexplained".to_string()];
    };
    let Wait::Lock { lock, holder } = &chain.wait else {
        return vec!["not a lock wait".to_string()];
    };
    if lock.kind != LockKind::PiFutex {
        wrong.push(format!("lock kind {:?}", lock.kind));
    }
    let Some(holder) = holder else {
        wrong.push("no holder".to_string());
        return wrong;
    };
    if holder.task.pid != staged.holder_tid || holder.task.role != TaskRole::NoisePublisher {
        wrong.push(format!(
            "holder {} ({:?}), staged {} (noise publisher)",
            holder.task.pid, holder.task.role, staged.holder_tid
        ));
    }
    let boost = format!("FIFO {RT_FIFO}");
    if holder.boosted_to.as_deref() != Some(boost.as_str()) {
        wrong.push(format!("boost {:?}, staged {boost}", holder.boosted_to));
    }
    match &holder.preempted_by {
        Some(by) if by.pid == staged.burst_tid && by.role == TaskRole::Burst => {}
        other => wrong.push(format!(
            "preemptor {:?}, staged the burst thread {}",
            other.as_ref().map(|t| (t.pid, t.role)),
            staged.burst_tid
        )),
    }
    wrong
}
