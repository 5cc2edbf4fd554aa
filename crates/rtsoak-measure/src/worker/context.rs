//! What a running worker has once it is set up (its spec, the shared region, where its frames
//! and report go, the report it fills in), handed to whichever loop its spec names.

use std::sync::atomic::Ordering;

use super::realtime;
use crate::protocol::{ReportWriter, WorkerReport, WorkerSpec};
use rtsoak_sys::region::{Region, WorkerSlot, worker_state};

/// What a running worker has: its spec, the shared region, where its frames and report go, and
/// the report it is filling in.
pub(crate) struct WorkerContext {
    /// The spec it was started with.
    pub(crate) spec: WorkerSpec,
    pub(super) region: &'static Region,
    /// Where interval frames and the final report go.
    pub(crate) stream: ReportWriter,
    /// The report being filled in.
    pub(crate) report: WorkerReport,
    /// The coordinator's bell, where this worker was given it (`protocol::BELL_FD`).
    pub(crate) bell: Option<std::os::fd::OwnedFd>,
}

impl WorkerContext {
    /// The shared region (mapped for the life of the process).
    pub(crate) fn region(&self) -> &'static Region {
        self.region
    }

    /// This worker's progress slot.
    pub(crate) fn slot(&self) -> &'static WorkerSlot {
        &self.region.workers[self.spec.slot]
    }

    /// Setup is over: lock the memory the measuring loop touches (where the spec asks for it),
    /// then tell the coordinator this worker is ready.
    pub(crate) fn ready(&mut self) {
        if self.spec.lock_memory {
            realtime::lock_memory(&mut self.report.setup);
        }
        self.slot()
            .state
            .store(worker_state::READY, Ordering::Release);
    }
}
