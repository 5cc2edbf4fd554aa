//! A campaign's state between boots: what it started from, what it will boot, every attempt at
//! every boot with what happened to it, and where it is now. A kexec campaign keeps it in
//! `state.json` of its state directory (`/var/lib/rtsoak/campaign`), saved atomically after
//! every change, so a crash or a reboot at any moment finds the last whole state; the qemu
//! driver keeps the same record in memory and in its document.
//!
//! Owns: the record's shape. Never reads or writes it (the binaries' crate does, in a checked
//! directory) and never decides what comes next (that is the binaries' `campaign::advance`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::fingerprint::Fingerprint;
use super::identity::BootFacts;
use super::image::ImageFacts;
use super::sequence::{Role, Slot};

/// Bumped on any incompatible change of `state.json`.
pub const STATE_SCHEMA_VERSION: u32 = 1;

/// How the campaign boots its points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Driver {
    /// kexec on the machine itself, resumed by a systemd unit after every boot.
    Kexec,
    /// A qemu guest per boot, from the host.
    Qemu,
}

impl Driver {
    /// The stable id.
    pub fn name(self) -> &'static str {
        match self {
            Driver::Kexec => "kexec",
            Driver::Qemu => "qemu",
        }
    }
}

/// A kernel to load: image, initramfs, command line, and their digests when the campaign
/// started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BootTarget {
    /// The kernel image.
    pub kernel: PathBuf,
    /// What was read of it when the campaign started.
    pub kernel_image: ImageFacts,
    /// The initramfs, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initrd: Option<PathBuf>,
    /// What was read of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initrd_image: Option<ImageFacts>,
    /// The command line, without rtsoak's token.
    pub cmdline: String,
    /// The release it must boot, where known before booting it (the plan's, or the image's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release: Option<String>,
}

/// The boot the campaign started in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartBoot {
    /// Its facts.
    pub facts: BootFacts,
    /// Where `end = "start"` returns to; none for the qemu driver or another `end`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub return_to: Option<BootTarget>,
}

/// A boot that came up as the one meant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reached {
    /// Its facts.
    pub facts: BootFacts,
    /// When the campaign first saw it, seconds since the epoch.
    pub at_s: u64,
}

/// A fact of a boot that was not what was meant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fact {
    /// rtsoak's token: the boot was loaded for another attempt or campaign.
    Token,
    /// `uname -r`.
    Release,
    /// The GNU build id.
    BuildId,
    /// Words of the command line (the expected ones that are missing).
    Cmdline,
}

/// One fact that differed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mismatch {
    /// Which.
    pub fact: Fact,
    /// What was meant.
    pub expected: String,
    /// What was found.
    pub found: String,
}

/// Why loading a kernel failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadFailure {
    /// The image or initramfs is no longer the file the campaign started with.
    ImageChanged,
    /// It could not be opened, or was refused as untrusted.
    ImageUnreadable,
    /// The kernel refused to load it (see the message).
    Refused,
    /// `systemctl kexec` failed, or the machine did not go down after it.
    Reboot,
    /// qemu could not be started.
    Qemu,
}

/// What became of one attempt at a boot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Outcome {
    /// The command ran and saved its result.
    Measured,
    /// The command ran and saved no result (its exit status is in the measurement).
    CommandFailed,
    /// The boot carried this attempt's token but was not the kernel or command line meant.
    WrongKernel {
        /// What differed.
        mismatches: Vec<Mismatch>,
    },
    /// The next boot was not one rtsoak loaded (no token): the point's kernel did not come up,
    /// and a panic (`panic=N`), a watchdog or a person rebooted through the firmware, within
    /// the deadline.
    FellBack {
        /// Seconds from the load to the boot found.
        after_s: u64,
        /// The boot found instead.
        found: BootFacts,
    },
    /// The result was not saved within the deadline: the machine came back through the
    /// firmware after it, or the boot meant ran out of time settling or measuring.
    DeadlineMissed {
        /// Seconds from the load to when it was noticed.
        after_s: u64,
    },
    /// The boot meant came up, and ended before its result was saved (a crash or a reset
    /// while settling or measuring).
    LostBoot {
        /// The boot that ended.
        boot_id: String,
    },
    /// The boot meant never settled within `settle.timeout_s`.
    SettleTimeout,
    /// The kernel could not be loaded, or the machine did not kexec into it.
    LoadFailed {
        /// Why.
        failure: LoadFailure,
        /// What the system said.
        message: String,
    },
    /// The campaign's own process was stopped during this boot's run.
    Interrupted,
    /// A qemu guest ended without reporting (a kernel panic, or its init failed).
    NoReport {
        /// Seconds from its start to its end.
        after_s: u64,
    },
}

impl Outcome {
    /// The stable id of its kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Outcome::Measured => "measured",
            Outcome::CommandFailed => "command_failed",
            Outcome::WrongKernel { .. } => "wrong_kernel",
            Outcome::FellBack { .. } => "fell_back",
            Outcome::DeadlineMissed { .. } => "deadline_missed",
            Outcome::LostBoot { .. } => "lost_boot",
            Outcome::SettleTimeout => "settle_timeout",
            Outcome::LoadFailed { .. } => "load_failed",
            Outcome::Interrupted => "interrupted",
            Outcome::NoReport { .. } => "no_report",
        }
    }
}

/// How a boot settled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settled {
    /// What `systemctl is-system-running --wait` said (`running`, `degraded`); absent when
    /// not asked or where systemd is not PID 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub systemd: Option<String>,
    /// The CPUs' idle share over the span that settled it, percent.
    pub idle_percent: f64,
    /// Seconds from the start of settling until it held.
    pub waited_s: f64,
}

/// What one boot's command did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// How the boot settled.
    pub settled: Settled,
    /// The host fingerprint, read after settling.
    pub fingerprint: Fingerprint,
    /// The command's exit code, if it exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The signal that ended it, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// How long it ran, seconds.
    pub duration_s: f64,
    /// Its result file, relative to the campaign directory (`boots/03-child-0/bench.json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<PathBuf>,
}

/// One try at one planned boot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    /// 0 for the first try.
    pub number: u32,
    /// The token its command line carries.
    pub token: String,
    /// When its kernel was loaded, seconds since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loaded_at_s: Option<u64>,
    /// The boot that came up as the one meant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reached: Option<Reached>,
    /// What its command did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measurement: Option<Measurement>,
    /// What became of it; absent while it is under way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// When that was decided, seconds since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at_s: Option<u64>,
}

/// One planned boot and every try at it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlotState {
    /// The planned boot.
    pub slot: Slot,
    /// Every try, in order.
    pub attempts: Vec<Attempt>,
}

impl SlotState {
    /// The try whose outcome stands: the last one, if it has ended.
    pub fn final_outcome(&self) -> Option<&Outcome> {
        self.attempts.last()?.outcome.as_ref()
    }

    /// The last try's measurement where it saved a result.
    pub fn measured(&self) -> Option<&Measurement> {
        let last = self.attempts.last()?;
        matches!(last.outcome, Some(Outcome::Measured))
            .then_some(last.measurement.as_ref())
            .flatten()
    }
}

/// Why the campaign ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// Every planned boot was tried.
    Completed,
    /// A boot failed and the plan says `on_failure = "stop"`.
    Stopped,
    /// `rtsoak campaign abort`.
    Aborted,
    /// More boots came than the campaign could have caused (a boot loop elsewhere): it gave up.
    TooManyBoots,
}

/// Where the machine was left.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LeftIn {
    /// The kernel and command line it started in.
    Start,
    /// The last boot (`end = "stay"`, or the qemu driver).
    LastBoot,
    /// Rebooted through the firmware (`end = "reboot"`).
    Reboot,
    /// Another boot than the one it started in, although it returned there (a failed return).
    NotStart {
        /// The boot found.
        found: BootFacts,
    },
}

/// Where the campaign is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "phase", rename_all = "snake_case")]
pub enum Phase {
    /// Booting or measuring planned boot `seq`.
    Booting {
        /// The planned boot.
        seq: usize,
    },
    /// Going back to the start kernel.
    Returning {
        /// Why the campaign ended.
        why: EndReason,
        /// When the start kernel was loaded, seconds since the epoch.
        loaded_at_s: Option<u64>,
    },
    /// Done.
    Finished {
        /// Why.
        why: EndReason,
        /// Where the machine was left.
        left_in: LeftIn,
        /// When, seconds since the epoch.
        at_s: u64,
    },
}

/// The whole state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// [`STATE_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// 16 random hex digits: the campaign's name in tokens and documents.
    pub campaign_id: String,
    /// How it boots.
    pub driver: Driver,
    /// SHA-256 of the plan text it runs.
    pub plan_sha256: String,
    /// When it started (RFC 3339 UTC).
    pub started_at: String,
    /// The boot it started in.
    pub start: StartBoot,
    /// What each point boots.
    pub targets: BTreeMap<Role, BootTarget>,
    /// Every planned boot.
    pub slots: Vec<SlotState>,
    /// Where it is.
    pub phase: Phase,
    /// Boots (and runs of `resume`) seen so far ...
    pub resumes: u32,
    /// ... and the most that can happen without a loop.
    pub max_resumes: u32,
    /// The release first seen booting each point (where the plan and the image named none).
    #[serde(default)]
    pub seen_releases: BTreeMap<Role, String>,
    /// The build id first seen booting each point.
    #[serde(default)]
    pub seen_build_ids: BTreeMap<Role, String>,
}

impl State {
    /// The planned boot `seq`.
    pub fn slot(&self, seq: usize) -> &SlotState {
        &self.slots[seq]
    }

    /// Whether the campaign has ended.
    pub fn finished(&self) -> bool {
        matches!(self.phase, Phase::Finished { .. })
    }
}
