//! The `trace` action: a snapshot of the kernel's trace buffer at the top of tracefs (the user's
//! own tracing setup: the tracer and events they enabled, as `--break-on` marks it): a marker
//! line naming the sample, tracing switched off so the buffer holds the moments around the
//! sample, a copy of the buffer saved in the result directory, and tracing switched back on if
//! it was on. rtsoak switches tracing on before the first run (an empty setup records only the
//! markers) and, at the end, off again if it found it off.
//!
//! Owns: the tracefs files it opened and the saved copies. Never changes which tracers or events
//! are enabled, and never touches rtsoak's own explainer instance.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use rtsoak_sys::safe_dir::SafeDir;
use rtsoak_sys::trace::{self, Mount, Trace};

/// The largest copy saved: the text of a large per-CPU buffer on a many-CPU machine can run to
/// gigabytes, which a result directory must not fill up with.
const MAX_COPY_BYTES: u64 = 256 << 20;

/// The tracefs directory and its open files.
pub(super) struct Snapshot {
    dir: PathBuf,
    trace: Trace,
    /// Whether tracing was on before rtsoak switched it on.
    was_on: bool,
}

/// A copy saved.
pub(super) struct Saved {
    /// Its file name in the result directory.
    pub(crate) file: String,
    /// It stops at [`MAX_COPY_BYTES`].
    pub(crate) truncated: bool,
}

impl Snapshot {
    /// Find tracefs (mounting it where nothing is, as trace-cmd does), open its files and
    /// switch tracing on; why not, in words.
    pub(super) fn open() -> Result<Self, String> {
        if let Mount::Failed(reason) = trace::mount_if_missing() {
            return Err(reason);
        }
        let dir = trace::find_tracefs(Path::new("/")).map_err(|e| e.to_string())?;
        let trace = Trace::open(&dir).map_err(|e| e.to_string())?;
        let was_on = trace::tracing_is_on(&dir).unwrap_or(false);
        trace.start().map_err(|e| {
            format!(
                "switching tracing on in {}: {e}; run as root",
                dir.display()
            )
        })?;
        Ok(Snapshot { dir, trace, was_on })
    }

    /// Mark the buffer with `marker`, stop tracing, save a copy as `name` in `out_dir`, and
    /// switch tracing back on if it was on; why it failed, in words.
    pub(super) fn take(&self, marker: &[u8], out_dir: &Path, name: &str) -> Result<Saved, String> {
        let was_on = trace::tracing_is_on(&self.dir).unwrap_or(false);
        let (_, stopped) = self.trace.mark_and_stop(marker);
        if !stopped {
            return Err(format!(
                "could not switch tracing off in {}",
                self.dir.display()
            ));
        }
        let saved = self.save(out_dir, name);
        if was_on && let Err(error) = self.trace.start() {
            return Err(format!(
                "the copy was saved, but tracing stays off: {error}"
            ));
        }
        saved
    }

    fn save(&self, out_dir: &Path, name: &str) -> Result<Saved, String> {
        let file = SafeDir::open(out_dir)
            .and_then(|dir| Ok(dir.create_file(name.as_ref(), 0o644)?))
            .map_err(|e| format!("creating {name} in the result directory: {e:#}"))?;
        let mut out = BufWriter::new(file);
        let copied = trace::copy_buffer(&self.dir, &mut out, MAX_COPY_BYTES)
            .and_then(|copied| out.flush().map(|()| copied))
            .map_err(|e| format!("copying {}/trace: {e}", self.dir.display()))?;
        Ok(Saved {
            file: name.to_string(),
            truncated: copied.truncated,
        })
    }
}

impl Drop for Snapshot {
    /// Tracing as rtsoak found it: off again if it was off (a `--break-on` that stopped it
    /// leaves it off either way).
    fn drop(&mut self) {
        if !self.was_on {
            let _ = self.trace.stop();
        }
    }
}
