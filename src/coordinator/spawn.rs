//! Starting a worker: re-execute this binary as the hidden `worker` sub-command with three fds
//! mapped to fixed numbers (spec, shared region, report stream). Safe with threads: nothing is
//! forked without an exec.

use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::os::fd::OwnedFd;
use std::process::{Child, Command, Stdio};

use anyhow::Context;
use command_fds::{CommandFdExt, FdMapping};
use nix::sys::memfd::{MFdFlags, memfd_create};

use crate::protocol::{REGION_FD, REPORT_FD, SPEC_FD, WorkerSpec};
use crate::region::SharedRegion;

/// A started worker and the end of its report stream we keep.
pub struct Spawned {
    /// The process.
    pub child: Child,
    /// Its report stream (same open file as the worker's [`REPORT_FD`]).
    pub report: File,
    /// What it was asked to do.
    pub spec: WorkerSpec,
}

/// Start one worker for `spec` on `region`.
pub fn spawn(spec: WorkerSpec, region: &SharedRegion) -> anyhow::Result<Spawned> {
    let spec_fd = memfd(&format!("rtsoak-spec-{}", spec.slot))?;
    let mut spec_file = File::from(spec_fd);
    serde_json::to_writer(&mut spec_file, &spec)?;
    spec_file.flush()?;
    spec_file.seek(SeekFrom::Start(0))?;
    let report = File::from(memfd(&format!("rtsoak-report-{}", spec.slot))?);

    let exe = std::env::current_exe().context("finding the rtsoak binary to start workers")?;
    let mut command = Command::new(exe);
    command
        .arg("worker")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .fd_mappings(vec![
            FdMapping {
                parent_fd: OwnedFd::from(spec_file),
                child_fd: SPEC_FD,
            },
            FdMapping {
                parent_fd: region.memory().fd().try_clone()?,
                child_fd: REGION_FD,
            },
            FdMapping {
                parent_fd: OwnedFd::from(report.try_clone()?),
                child_fd: REPORT_FD,
            },
        ])
        .context("mapping fds into a worker")?;
    let child = command
        .spawn()
        .with_context(|| format!("starting the {:?} worker", spec.role))?;
    Ok(Spawned {
        child,
        report,
        spec,
    })
}

fn memfd(name: &str) -> anyhow::Result<OwnedFd> {
    memfd_create(name, MFdFlags::MFD_CLOEXEC).with_context(|| format!("memfd_create({name})"))
}
