//! A campaign's state between boots, kept by a kexec campaign in `state.json` of its state
//! directory (`/var/lib/rtsoak/campaign`), saved atomically after every change, so a crash or a
//! reboot at any moment finds the last whole state. The record's shape is `rtsoak-analysis`'s
//! (`campaign::state`), re-exported here.
//!
//! Owns: reading and writing it in a checked, locked directory. Never decides what comes next
//! (that is `advance`).

use std::ffi::OsStr;
use std::path::Path;

use anyhow::Context;
use rtsoak_sys::safe_dir::SafeDir;

pub(crate) use rtsoak_analysis::campaign::state::{
    Attempt, BootTarget, Driver, EndReason, Fact, LeftIn, LoadFailure, Measurement, Mismatch,
    Outcome, Phase, Reached, STATE_SCHEMA_VERSION, Settled, SlotState, StartBoot, State,
};

/// The state file in the state directory.
pub(crate) const STATE_FILE: &str = "state.json";
/// The plan as the campaign read it when it started (what every later boot uses).
pub(crate) const PLAN_FILE: &str = "plan.toml";
/// Larger than any state a campaign of 180 boots with 4 tries each writes.
const MAX_STATE_BYTES: u64 = 16 << 20;

/// The clock a campaign records across reboots: seconds since the epoch.
pub(crate) fn now_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The state directory, opened checked (as root: root's own, reached without a symlink another
/// user owns, writable by no one else) and locked, so one `resume` runs at a time.
pub(crate) struct StateDir {
    dir: SafeDir,
    _lock: nix::fcntl::Flock<std::os::fd::OwnedFd>,
}

impl StateDir {
    /// Open (`create`: make) `path` and take its lock; refuse while another rtsoak holds it.
    pub(crate) fn open(path: &Path, create: bool) -> anyhow::Result<StateDir> {
        let dir = if create {
            SafeDir::create(path)?
        } else {
            SafeDir::open(path)?
        };
        let fd = nix::fcntl::openat(
            dir.fd(),
            ".",
            nix::fcntl::OFlag::O_RDONLY
                | nix::fcntl::OFlag::O_DIRECTORY
                | nix::fcntl::OFlag::O_CLOEXEC,
            nix::sys::stat::Mode::empty(),
        )
        .with_context(|| format!("opening {}", path.display()))?;
        let lock = nix::fcntl::Flock::lock(fd, nix::fcntl::FlockArg::LockExclusiveNonblock)
            .map_err(|(_, errno)| {
                anyhow::anyhow!(
                    "{} is locked by another rtsoak campaign command ({errno}): wait for it to \
                     end (`rtsoak campaign status` says where the campaign is)",
                    path.display()
                )
            })?;
        Ok(StateDir { dir, _lock: lock })
    }

    /// The directory.
    pub(crate) fn dir(&self) -> &SafeDir {
        &self.dir
    }

    /// Whether a state file is there.
    pub(crate) fn has_state(&self) -> bool {
        self.dir.entry(OsStr::new(STATE_FILE)).is_some()
    }

    /// Read the state.
    pub(crate) fn load(&self) -> anyhow::Result<State> {
        let bytes = self
            .dir
            .read_own_file(OsStr::new(STATE_FILE), MAX_STATE_BYTES)
            .with_context(|| {
                format!(
                    "reading {}: it must be a regular file of this user's of at most \
                     {MAX_STATE_BYTES} bytes",
                    self.dir.path().join(STATE_FILE).display()
                )
            })?;
        let state: State = serde_json::from_slice(&bytes).with_context(|| {
            format!(
                "{} is not a campaign state this rtsoak reads",
                self.dir.path().join(STATE_FILE).display()
            )
        })?;
        anyhow::ensure!(
            state.schema_version == STATE_SCHEMA_VERSION,
            "{} has state schema version {}; this rtsoak reads version {STATE_SCHEMA_VERSION}: \
             finish it with the rtsoak that started it",
            self.dir.path().join(STATE_FILE).display(),
            state.schema_version
        );
        Ok(state)
    }

    /// Save the state atomically.
    pub(crate) fn save(&self, state: &State) -> anyhow::Result<()> {
        let mut bytes = serde_json::to_vec_pretty(state)?;
        bytes.push(b'\n');
        self.dir
            .write(OsStr::new(STATE_FILE), &bytes, 0o644)
            .with_context(|| format!("saving {}", self.dir.path().join(STATE_FILE).display()))
    }

    /// The plan text the campaign runs.
    pub(crate) fn plan_text(&self) -> anyhow::Result<String> {
        let bytes = self
            .dir
            .read_own_file(OsStr::new(PLAN_FILE), 1 << 20)
            .with_context(|| format!("reading {}", self.dir.path().join(PLAN_FILE).display()))?;
        String::from_utf8(bytes).context("the saved plan is not UTF-8 text")
    }
}
