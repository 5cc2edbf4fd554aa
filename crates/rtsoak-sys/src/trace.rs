//! ftrace through tracefs, for `--break-on`, the `trace` action and the spike explainer: find the tracefs mount
//! (mounting it at `/sys/kernel/tracing` where nothing is mounted, as trace-cmd and perf do when
//! they run as root), write a line into the trace buffer (`trace_marker`) and switch tracing off
//! (`tracing_on` = 0), as cyclictest's `-b` does, so the kernel trace around a latency spike is
//! kept for the user to read.
//!
//! Opening happens before a measuring loop; [`Trace::mark_and_stop`] is two `write(2)` calls on
//! open fds and never allocates. [`copy_buffer`] saves what the buffer holds (the coordinator's,
//! never a loop's). Never changes which tracers are enabled: that is the user's setup. A mount
//! it made is left in place (other tools find it there), never unmounted.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where tracefs is mounted, in the order looked at: its own mount, then under debugfs.
pub(crate) const TRACEFS_DIRS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// tracefs is not there or not usable. The caller says which option needed it.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// Neither directory has a `trace_marker`.
    #[error(
        "neither {} nor {} has a trace_marker; mount tracefs with \
         `mount -t tracefs nodev /sys/kernel/tracing` (kernel built with CONFIG_FTRACE)",
        TRACEFS_DIRS[0], TRACEFS_DIRS[1]
    )]
    NotMounted,
    /// A file is there but cannot be opened for writing.
    #[error("cannot open {}: {source}; run as root", .path.display())]
    Open {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// What [`mount_if_missing`] found or did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mount {
    /// tracefs was already mounted here.
    Found(PathBuf),
    /// Nothing was mounted, and rtsoak mounted tracefs here.
    Mounted(PathBuf),
    /// Nothing was mounted, and mounting failed: why, with what to do.
    Failed(String),
}

/// Make sure tracefs is mounted on the live machine: where neither of [`TRACEFS_DIRS`] has it,
/// mount it at `/sys/kernel/tracing` (the kernel creates that directory whenever it has
/// tracefs). Needs `CAP_SYS_ADMIN`; without it the error says to run as root.
pub fn mount_if_missing() -> Mount {
    if let Ok(dir) = find_tracefs(Path::new("/")) {
        return Mount::Found(dir);
    }
    let target = Path::new(TRACEFS_DIRS[0]);
    if !target.is_dir() {
        return Mount::Failed(format!(
            "{} does not exist: this kernel has no tracefs (built without CONFIG_FTRACE)",
            target.display()
        ));
    }
    use nix::mount::{MsFlags, mount};
    let flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC;
    match mount(Some("nodev"), target, Some("tracefs"), flags, None::<&str>) {
        Ok(()) if target.join("trace_marker").exists() => Mount::Mounted(target.to_path_buf()),
        Ok(()) => Mount::Failed(format!(
            "tracefs mounted at {} has no trace_marker",
            target.display()
        )),
        Err(errno) => Mount::Failed(format!(
            "tracefs is not mounted, and mounting it at {} failed: {errno} (run as root, or \
             mount it: `mount -t tracefs nodev {}`)",
            target.display(),
            target.display()
        )),
    }
}

/// The tracefs directory under `root` (`/` on the live machine).
pub fn find_tracefs(root: &Path) -> Result<PathBuf, TraceError> {
    TRACEFS_DIRS
        .iter()
        .map(|dir| root.join(dir.trim_start_matches('/')))
        .find(|dir| dir.join("trace_marker").exists())
        .ok_or(TraceError::NotMounted)
}

/// Open fds on `trace_marker` and `tracing_on`.
#[derive(Debug)]
pub struct Trace {
    marker: File,
    tracing_on: File,
}

fn open(path: PathBuf) -> Result<File, TraceError> {
    OpenOptions::new()
        .write(true)
        .open(&path)
        .map_err(|source| TraceError::Open { path, source })
}

impl Trace {
    /// Open the two files of the tracefs directory `dir`.
    pub fn open(dir: &Path) -> Result<Self, TraceError> {
        Ok(Trace {
            marker: open(dir.join("trace_marker"))?,
            tracing_on: open(dir.join("tracing_on"))?,
        })
    }

    /// Switch tracing on (before a run, so the marker and the events before it are recorded).
    pub fn start(&self) -> std::io::Result<()> {
        (&self.tracing_on).write_all(b"1")
    }

    /// Switch tracing off.
    pub fn stop(&self) -> std::io::Result<()> {
        (&self.tracing_on).write_all(b"0")
    }

    /// Write `line` into the trace buffer, then switch tracing off. Returns whether each
    /// worked: (marked, stopped). The marker fails (EBADF) when tracing is already off.
    pub fn mark_and_stop(&self, line: &[u8]) -> (bool, bool) {
        let marked = (&self.marker).write_all(line).is_ok();
        let stopped = (&self.tracing_on).write_all(b"0").is_ok();
        (marked, stopped)
    }
}

/// What [`copy_buffer`] saved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Copied {
    /// Bytes written.
    pub(crate) bytes: u64,
    /// The buffer held more than the limit; the copy stops there.
    pub truncated: bool,
}

/// Whether tracing is on in the tracefs directory `dir` (`tracing_on` reads `1`).
pub fn tracing_is_on(dir: &Path) -> std::io::Result<bool> {
    Ok(std::fs::read_to_string(dir.join("tracing_on"))?.trim() == "1")
}

/// Copy the text of the trace buffer of the tracefs directory `dir` (its `trace` file) to `to`,
/// at most `max_bytes`. Reading `trace` consumes nothing, but while it is open the kernel
/// pauses recording (`options/pause-on-trace`): copy with tracing off, as after
/// [`Trace::mark_and_stop`].
pub fn copy_buffer(dir: &Path, to: &mut impl Write, max_bytes: u64) -> std::io::Result<Copied> {
    use std::io::Read;
    let mut limited = File::open(dir.join("trace"))?.take(max_bytes);
    let bytes = std::io::copy(&mut limited, to)?;
    let mut one_more = [0u8; 1];
    let truncated = limited.into_inner().read(&mut one_more)? > 0;
    Ok(Copied { bytes, truncated })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_tracefs(at: &str) -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join(at);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("trace_marker"), "").unwrap();
        std::fs::write(dir.join("tracing_on"), "1").unwrap();
        root
    }

    #[test]
    fn tracefs_is_found_at_its_own_mount_first_then_under_debugfs() {
        let root = fake_tracefs("sys/kernel/debug/tracing");
        assert_eq!(
            find_tracefs(root.path()).unwrap(),
            root.path().join("sys/kernel/debug/tracing")
        );
        std::fs::create_dir_all(root.path().join("sys/kernel/tracing")).unwrap();
        std::fs::write(root.path().join("sys/kernel/tracing/trace_marker"), "").unwrap();
        assert_eq!(
            find_tracefs(root.path()).unwrap(),
            root.path().join("sys/kernel/tracing")
        );
    }

    #[test]
    fn no_tracefs_is_an_error_saying_how_to_mount_it() {
        let root = tempfile::tempdir().unwrap();
        let text = find_tracefs(root.path()).unwrap_err().to_string();
        assert!(
            text.contains("mount -t tracefs nodev /sys/kernel/tracing"),
            "{text}"
        );
    }

    #[test]
    fn a_copy_of_the_buffer_stops_at_its_limit_and_says_so() {
        let root = fake_tracefs("sys/kernel/tracing");
        let dir = root.path().join("sys/kernel/tracing");
        std::fs::write(dir.join("trace"), "0123456789").unwrap();
        let mut out = Vec::new();
        let whole = copy_buffer(&dir, &mut out, 10).unwrap();
        assert_eq!(
            (whole.bytes, whole.truncated, &out[..]),
            (10, false, &b"0123456789"[..])
        );
        out.clear();
        let cut = copy_buffer(&dir, &mut out, 4).unwrap();
        assert_eq!(
            (cut.bytes, cut.truncated, &out[..]),
            (4, true, &b"0123"[..])
        );
        assert!(tracing_is_on(&dir).unwrap());
    }

    #[test]
    fn a_break_writes_the_marker_then_switches_tracing_off() {
        let root = fake_tracefs("sys/kernel/tracing");
        let dir = find_tracefs(root.path()).unwrap();
        let trace = Trace::open(&dir).unwrap();
        assert_eq!(trace.mark_and_stop(b"rtsoak break\n"), (true, true));
        assert_eq!(
            std::fs::read_to_string(dir.join("trace_marker")).unwrap(),
            "rtsoak break\n"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("tracing_on")).unwrap(),
            "0"
        );
    }
}
