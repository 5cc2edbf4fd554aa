//! A worker process: the `rtsoak-worker` binary (src/bin/rtsoak-worker.rs), which the
//! coordinator starts beside itself. It reads its [`WorkerSpec`] from an inherited fd, becomes
//! real-time (pin, policy, mlock, pre-fault, die with the coordinator), then runs its role's loop with its part of the spec (a queue worker's with the transport that
//! part names), ships its interval frames into its frame ring, and leaves its final report in
//! its report memfd.
//!
//! The transport is named once, here ([`transport::visit`]), which hands back its concrete
//! waker or waiter type, and the generic loop is run with it: no dynamic dispatch inside a loop.

mod break_on;
mod context;
pub mod floor;
mod intervals;
mod on_threshold;
mod own_wake;
mod publisher;
pub mod realtime;
mod subscriber;

use std::fs::File;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::sync::atomic::Ordering;

use anyhow::Context;
use nix::sys::signal::Signal;

use crate::noise;
use crate::protocol::ring::{FrameRing, RingWriter};
use crate::protocol::{
    BELL_FD, FRAMES_FD, QueueSpec, REGION_FD, REPORT_FD, ReportWriter, SPEC_FD, Work, WorkerReport,
    WorkerSpec, write_report,
};
use crate::transport::{self, Env, Mechanism, Visit, Waiter};
use rtsoak_sys::region::{Region, SharedRegion, worker_state};
use rtsoak_sys::shm::SharedMemory;
use rtsoak_sys::{inherited, signals};

pub(crate) use context::WorkerContext;

/// Entry point of `rtsoak-worker`. Returns the process exit code.
pub fn main() -> i32 {
    // The same binary runs the external noise command's init (before anything below ignores
    // the signals the init waits for).
    if let Some(args) = noise::external_init::invoked() {
        return noise::external_init::main(&args);
    }
    // The coordinator decides when workers stop: a Ctrl-C reaching the whole process group
    // must not kill a worker before it has reported.
    signals::ignore(&[
        Signal::SIGINT,
        Signal::SIGTERM,
        Signal::SIGHUP,
        Signal::SIGPIPE,
    ]);
    let Some(fds) = InheritedFds::take() else {
        return 1;
    };
    // Only an RT worker watching `--on-threshold` is given the coordinator's bell.
    let bell = inherited::take(BELL_FD);
    let (spec_file, report_file) = (File::from(fds.spec), File::from(fds.report));
    let mut report = WorkerReport {
        pid: std::process::id() as i32,
        ..Default::default()
    };
    let Some(mut stream) = open_stream(fds.frames, report_file, &mut report) else {
        return 1;
    };
    match start(spec_file, fds.region) {
        Ok((spec, region)) => run_and_report(WorkerContext {
            spec,
            region,
            stream,
            report,
            bell,
        }),
        Err(error) => {
            report.error = Some(format!("{error:#}"));
            let _ = stream.report(&report);
            eprintln!("rtsoak-worker {}: {error:#}", std::process::id());
            1
        }
    }
}

/// The fds a worker is started with, besides the bell.
struct InheritedFds {
    spec: OwnedFd,
    region: OwnedFd,
    report: OwnedFd,
    frames: OwnedFd,
}

impl InheritedFds {
    /// Take them into ownership; `None` (said on stderr) if one is not open.
    fn take() -> Option<Self> {
        // The coordinator maps exactly these fds into every worker (protocol::*_FD).
        let fds = [SPEC_FD, REGION_FD, REPORT_FD, FRAMES_FD].map(inherited::take);
        let [Some(spec), Some(region), Some(report), Some(frames)] = fds else {
            eprintln!(
                "rtsoak-worker: fds {SPEC_FD}-{FRAMES_FD} (spec, region, report, frame ring) are not \
                 open: `rtsoak-worker` is started by the coordinator (`rtsoak`), never by hand"
            );
            return None;
        };
        Some(InheritedFds {
            spec,
            region,
            report,
            frames,
        })
    }
}

/// Where the worker's interval frames and final report go: the frame ring `frames_fd` and
/// `report_file`. `None` if the ring cannot be mapped; the report then says why.
fn open_stream(
    frames_fd: OwnedFd,
    report_file: File,
    report: &mut WorkerReport,
) -> Option<ReportWriter> {
    // The ring is mapped (and populated) now, so it is locked with the rest at the end of setup.
    match SharedMemory::map(frames_fd)
        .map_err(anyhow::Error::from)
        .and_then(FrameRing::attach)
    {
        Ok(ring) => Some(ReportWriter::new(report_file, RingWriter::new(ring))),
        Err(error) => {
            report.error = Some(format!("mapping the frame ring: {error:#}"));
            let _ = write_report(&mut { report_file }, report);
            eprintln!(
                "rtsoak-worker {}: mapping the frame ring: {error:#}",
                std::process::id()
            );
            None
        }
    }
}

/// Run the worker's loop in `context`, then leave its report and its final state in its slot.
/// Returns the process exit code.
fn run_and_report(mut context: WorkerContext) -> i32 {
    let slot = context.slot();
    let outcome = run(&mut context);
    if context.report.hygiene.peak_rss_bytes > 0 {
        // The loop's figure is ru_maxrss, which also holds the coordinator's peak: this
        // worker was started with CLONE_VM (sys::spawn), and Linux keeps it across exec.
        if let Some(peak) = rtsoak_sys::sched::peak_rss_bytes() {
            context.report.hygiene.peak_rss_bytes = peak;
        }
    }
    if let Err(error) = &outcome {
        context.report.error = Some(format!("{error:#}"));
    }
    let written = context.stream.report(&context.report);
    let state = if outcome.is_ok() && written.is_ok() {
        worker_state::DONE
    } else {
        worker_state::FAILED
    };
    slot.state.store(state, Ordering::Release);
    i32::from(state != worker_state::DONE)
}

fn start(mut spec_file: File, region_fd: OwnedFd) -> anyhow::Result<(WorkerSpec, &'static Region)> {
    let mut text = String::new();
    spec_file
        .read_to_string(&mut text)
        .context("reading the worker spec")?;
    let spec: WorkerSpec = serde_json::from_str(&text).context("decoding the worker spec")?;
    rtsoak_sys::sched::die_with_parent(spec.coordinator_pid)
        .context("the coordinator exited before this worker started")?;
    let region = SharedRegion::attach(SharedMemory::map(region_fd)?)?;
    // The region stays mapped until the process exits.
    // Named by role, so that a kernel trace (the spike explainer's) tells the tasks apart.
    rtsoak_sys::sched::set_thread_name(spec.role.comm()).context("naming the worker")?;
    let region: &'static SharedRegion = Box::leak(Box::new(region));
    let region = region.get();
    region.workers[spec.slot]
        .pid
        .store(std::process::id() as i32, Ordering::Release);
    Ok((spec, region))
}

fn run(context: &mut WorkerContext) -> anyhow::Result<()> {
    context.report.setup = realtime::become_realtime(&context.spec);
    // The one look at what kind of work this is; each loop gets its own part. Owned: the loops
    // borrow the whole context.
    match context.spec.work.clone() {
        Work::Queue(queue) => {
            let visit = Loop {
                context,
                spec: &queue,
            };
            transport::visit(queue.transport, &queue.transport_settings, visit)
        }
        Work::Floor(queue) => {
            let visit = Floor {
                context,
                spec: &queue,
            };
            transport::visit(queue.transport, &queue.transport_settings, visit)
        }
        Work::Burst(plan) => noise::burst::run(
            &plan,
            &context.spec.cpus,
            context.slot(),
            context.region,
            &mut context.report,
        ),
        Work::Load { plan, scratch_dir } => noise::load::run(
            &plan,
            &scratch_dir,
            context.slot(),
            context.region,
            &mut context.report,
        ),
    }
}

/// The one dispatch from a transport's name into the measuring loops: the loops are
/// monomorphised for the transport's concrete waker or waiter.
struct Loop<'a> {
    context: &'a mut WorkerContext,
    spec: &'a QueueSpec,
}

impl Visit for Loop<'_> {
    type Output = anyhow::Result<()>;

    fn visit<M: Mechanism>(self, mechanism: &'static M, settings: &M::Settings) -> Self::Output {
        let Loop { context, spec } = self;
        let env = env(context, spec, settings);
        if context.spec.role.is_publisher() {
            let waker = mechanism.waker(&env)?;
            publisher::run(context, spec, waker)
        } else {
            let waiter = mechanism.waiter(&env)?;
            context.report.setup.wait = waiter.fd_wait();
            subscriber::run(context, spec, waiter)
        }
    }
}

/// The floor pair's dispatch: the same transport halves as [`Loop`]'s, built from the same
/// [`Env`], driven by the floor's loops ([`floor`]).
struct Floor<'a> {
    context: &'a mut WorkerContext,
    spec: &'a QueueSpec,
}

impl Visit for Floor<'_> {
    type Output = anyhow::Result<()>;

    fn visit<M: Mechanism>(self, mechanism: &'static M, settings: &M::Settings) -> Self::Output {
        let Floor { context, spec } = self;
        let env = env(context, spec, settings);
        if context.spec.role.is_publisher() {
            let waker = mechanism.waker(&env)?;
            floor::publisher::run(context, spec, waker)
        } else {
            let waiter = mechanism.waiter(&env)?;
            context.report.setup.wait = waiter.fd_wait();
            floor::subscriber::run(context, spec, waiter)
        }
    }
}

/// What a transport builds its halves from, for this worker.
fn env<'a, S>(context: &WorkerContext, spec: &'a QueueSpec, settings: &'a S) -> Env<'a, S> {
    Env {
        region: context.region,
        role: context.spec.role,
        publisher_id: spec.publisher_id,
        coordinator_pid: context.spec.coordinator_pid,
        ring_setup: spec.ring_setup,
        noise_wakes_rt_subscriber: spec.noise_wakes_rt_subscriber,
        abi: &spec.abi,
        settings,
    }
}
