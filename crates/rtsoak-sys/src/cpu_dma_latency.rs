//! `/dev/cpu_dma_latency`: while a process keeps it open with a value written, the kernel's PM
//! QoS keeps every CPU out of idle states whose exit latency exceeds that value (0: none but
//! the shallowest). Closing the file drops the request, so a [`Hold`] lasts exactly as long as
//! it lives, and dies with the process whatever happens.
//!
//! Owns: opening, writing and keeping the file, and the record of what was held. Never fails a
//! run: a missing file or a refused open is recorded and the run goes on.

use std::fs::File;
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// Where the kernel offers the request.
pub const PATH: &str = "/dev/cpu_dma_latency";

/// An open request; dropping it releases the request.
#[derive(Debug)]
pub struct Hold {
    _file: File,
}

/// What a result records about the request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuDmaLatency {
    /// The file.
    pub path: String,
    /// True if the plan asked for the hold (`system.hold_cpu_dma_latency`).
    pub requested: bool,
    /// The value held for the whole invocation, in microseconds, if it was held.
    pub held_us: Option<i32>,
    /// Why it was not held: not requested, file missing, permission denied, or the error.
    pub not_held_because: Option<String>,
}

/// Hold `path` at `value_us` if `requested`, and say what happened. The hold (if any) must be
/// kept alive for as long as the request should last.
pub fn hold(path: &Path, requested: bool, value_us: i32) -> (Option<Hold>, CpuDmaLatency) {
    let mut record = CpuDmaLatency {
        path: path.display().to_string(),
        requested,
        held_us: None,
        not_held_because: None,
    };
    if !requested {
        record.not_held_because = Some(
            "not requested (system.hold_cpu_dma_latency = false, or --no-cpu-dma-latency)"
                .to_string(),
        );
        return (None, record);
    }
    match open_and_write(path, value_us) {
        Ok(file) => {
            record.held_us = Some(value_us);
            (Some(Hold { _file: file }), record)
        }
        Err(error) => {
            record.not_held_because = Some(why_not(path, &error));
            (None, record)
        }
    }
}

fn open_and_write(path: &Path, value_us: i32) -> std::io::Result<File> {
    let mut file = std::fs::OpenOptions::new().write(true).open(path)?;
    // The kernel takes a binary s32 (or a hex string); four bytes in native order.
    file.write_all(&value_us.to_ne_bytes())?;
    Ok(file)
}

/// A reason a user can act on.
fn why_not(path: &Path, error: &std::io::Error) -> String {
    let path = path.display();
    match error.kind() {
        std::io::ErrorKind::NotFound => {
            format!("file missing: {path} does not exist (a kernel without PM QoS, or no /dev)")
        }
        std::io::ErrorKind::PermissionDenied => {
            format!("permission denied opening {path}: run as root to hold it")
        }
        _ => format!("holding {path} failed: {error}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_request_writes_the_value_as_four_bytes_and_records_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cpu_dma_latency");
        std::fs::write(&path, b"").unwrap();
        let (held, record) = hold(&path, true, 0);
        assert!(held.is_some());
        assert_eq!(record.held_us, Some(0));
        assert_eq!(record.not_held_because, None);
        assert_eq!(std::fs::read(&path).unwrap(), 0i32.to_ne_bytes());
    }

    #[test]
    fn a_missing_file_is_recorded_as_missing_and_the_run_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let (held, record) = hold(&dir.path().join("absent"), true, 0);
        assert!(held.is_none());
        assert_eq!(record.held_us, None);
        let reason = record.not_held_because.unwrap();
        assert!(reason.starts_with("file missing"), "{reason}");
    }

    #[test]
    fn a_refused_open_is_recorded_as_a_permission_problem() {
        let error = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let reason = why_not(Path::new(PATH), &error);
        assert!(reason.starts_with("permission denied"), "{reason}");
        assert!(reason.contains("run as root"), "{reason}");
    }

    #[test]
    fn a_hold_that_was_not_requested_touches_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cpu_dma_latency");
        std::fs::write(&path, b"untouched").unwrap();
        let (held, record) = hold(&path, false, 0);
        assert!(held.is_none());
        assert!(!record.requested);
        assert!(record.not_held_because.unwrap().contains("not requested"));
        assert_eq!(std::fs::read(&path).unwrap(), b"untouched");
    }
}
