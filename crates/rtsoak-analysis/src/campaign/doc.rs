//! The campaign document, `campaign.json`: one schema-versioned JSON file holding the plan,
//! the boot the campaign started in, what each point boots, every planned boot with every try
//! at it (what became of it, how it settled, its host fingerprint) and the result it saved
//! (the whole `bench.json` or `result.json`), and the judgement. Documented field by field in
//! `docs/campaign.md`.//!
//! Owns: the document's shape. Never builds it (the binaries' crate does, from a campaign's
//! state and the results in its directory), never measures; the judgement is `judge`'s.

use std::collections::BTreeMap;

use rtsoak_record::result::Tool;
use serde::{Deserialize, Serialize};

use super::judge::{BootResult, Judgement};
use super::plan::{Accel, CommandKind, Plan};
use super::sequence::{Role, Slot};
use super::state::{Attempt, BootTarget, Driver, Phase, StartBoot};

/// Bumped on any incompatible change of the document's shape.
pub const CAMPAIGN_SCHEMA_VERSION: u32 = 1;
/// The `command` field of every campaign document.
pub const CAMPAIGN_COMMAND: &str = "campaign";
/// One planned boot in the document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Boot {
    /// Which, of which point, where it counts.
    pub slot: Slot,
    /// Every try at it, in order.
    pub attempts: Vec<Attempt>,
    /// The result the last try saved, if it measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<BootResult>,
}

/// The campaign document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CampaignDoc {
    /// [`CAMPAIGN_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Tool name and version.
    pub tool: Tool,
    /// Always `campaign`.
    pub command: String,
    /// The campaign's id, as its tokens carry it.
    pub campaign_id: String,
    /// How it booted.
    pub driver: Driver,
    /// The qemu driver's accelerator (`kvm` or `tcg`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accel: Option<Accel>,
    /// The plan, every default filled in.
    pub plan: Plan,
    /// SHA-256 of the plan's text.
    pub plan_sha256: String,
    /// `bench` or `soak`.
    pub kind: CommandKind,
    /// When it started (RFC 3339 UTC).
    pub started_at: String,
    /// When it ended, if it has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// The boot it started in, and where it returns.
    pub start: StartBoot,
    /// What each point boots.
    pub targets: BTreeMap<Role, BootTarget>,
    /// Where it is (finished: why, and where the machine was left).
    pub phase: Phase,
    /// Every planned boot.
    pub boots: Vec<Boot>,
    /// The judgement of what was measured so far.
    pub judgement: Judgement,
}

impl CampaignDoc {
    /// Whether the campaign has ended.
    pub fn finished(&self) -> bool {
        matches!(self.phase, Phase::Finished { .. })
    }
}
