//! `/dev/cpu_dma_latency`: while a process keeps it open with a value written, the kernel's PM
//! QoS keeps every CPU out of idle states whose exit latency exceeds that value (0: none but
//! the shallowest). Closing the file drops the request, so a [`Hold`] lasts exactly as long as
//! it lives, and dies with the process whatever happens.
//!
//! Owns: opening, writing and keeping the file, and saying what was held (the result's record of
//! it is `record::CpuDmaLatency`). Never fails a
//! run: a missing file or a refused open is recorded and the run goes on.

use std::fs::File;
use std::io::Write;
use std::path::Path;

/// Where the kernel offers the request.
pub const PATH: &str = "/dev/cpu_dma_latency";

/// An open request; dropping it releases the request.
#[derive(Debug)]
pub struct Hold {
    _file: File,
}

/// Hold `path` at `value_us` if `requested`, and say what happened: the value held, or why
/// nothing was. The hold (if any) must be kept alive for as long as the request should last.
pub fn hold(path: &Path, requested: bool, value_us: i32) -> (Option<Hold>, Result<i32, String>) {
    if !requested {
        return (
            None,
            Err(
                "not requested (system.hold_cpu_dma_latency = false, or --no-cpu-dma-latency)"
                    .to_string(),
            ),
        );
    }
    match open_and_write(path, value_us) {
        Ok(file) => (Some(Hold { _file: file }), Ok(value_us)),
        Err(error) => (None, Err(why_not(path, &error))),
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
        let (held, outcome) = hold(&path, true, 0);
        assert!(held.is_some());
        assert_eq!(outcome, Ok(0));
        assert_eq!(std::fs::read(&path).unwrap(), 0i32.to_ne_bytes());
    }

    #[test]
    fn a_missing_file_is_recorded_as_missing_and_the_run_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let (held, outcome) = hold(&dir.path().join("absent"), true, 0);
        assert!(held.is_none());
        let reason = outcome.unwrap_err();
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
        let (held, outcome) = hold(&path, false, 0);
        assert!(held.is_none());
        assert!(outcome.unwrap_err().contains("not requested"));
        assert_eq!(std::fs::read(&path).unwrap(), b"untouched");
    }
}
