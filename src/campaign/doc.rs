//! The campaign document, `campaign.json`: one schema-versioned JSON file holding the plan,
//! the boot the campaign started in, what each point boots, every planned boot with every try
//! at it (what became of it, how it settled, its host fingerprint) and the result it saved
//! (the whole `bench.json` or `result.json`), and the judgement. Documented field by field in
//! `docs/campaign.md`.
//!
//! Owns: building the document from a campaign's state and the results in its directory, and
//! reading it back; its shape is `rtsoak-analysis`'s (`campaign::doc`), re-exported here. Never
//! measures; the judgement is `rtsoak-analysis`'s (`campaign::judge`).

use std::ffi::OsStr;
use std::path::{Component, Path};

use anyhow::Context;
use rtsoak_analysis::campaign::judge::{BootResult, Context as JudgeContext, MeasuredBoot, judge};
use rtsoak_analysis::campaign::sequence::{Role, Slot};
use rtsoak_record::bench::{BENCH_COMMAND, BENCH_SCHEMA_VERSION};
use rtsoak_record::result::Tool;
use rtsoak_sys::safe_dir::SafeDir;

use super::identity::varied_parameters;
use super::plan::{Accel, Plan};
use super::state::{Phase, State};

pub use rtsoak_analysis::campaign::doc::{
    Boot, CAMPAIGN_COMMAND, CAMPAIGN_SCHEMA_VERSION, CampaignDoc,
};

/// The document's file name in a campaign directory.
pub const CAMPAIGN_FILE: &str = "campaign.json";
/// The largest campaign document read back.
const MAX_DOC_BYTES: u64 = 1 << 30;

/// The document of `state`, the results read from `dir` (the campaign directory).
pub fn build(state: &State, plan: &Plan, accel: Option<Accel>, dir: &SafeDir) -> CampaignDoc {
    let boots: Vec<Boot> = state
        .slots
        .iter()
        .map(|slot| Boot {
            slot: slot.slot,
            attempts: slot.attempts.clone(),
            result: slot
                .measured()
                .and_then(|m| m.result.as_deref())
                .and_then(|path| read_result(dir, path).ok()),
        })
        .collect();
    let measured: Vec<MeasuredBoot<'_>> = state
        .slots
        .iter()
        .zip(&boots)
        .filter_map(|(slot, boot)| {
            Some(MeasuredBoot {
                slot: slot.slot,
                result: boot.result.as_ref()?,
                fingerprint: &slot.measured()?.fingerprint,
            })
        })
        .collect();
    let planned: Vec<Slot> = state.slots.iter().map(|s| s.slot).collect();
    let cmdline = |role: Role| {
        state
            .targets
            .get(&role)
            .map_or(String::new(), |t| t.cmdline.clone())
    };
    let context = JudgeContext {
        plan,
        planned: &planned,
        varied_parameters: varied_parameters(&cmdline(Role::Parent), &cmdline(Role::Child)),
        emulated: accel == Some(Accel::Tcg),
    };
    let judgement = judge(&context, &measured);
    CampaignDoc {
        schema_version: CAMPAIGN_SCHEMA_VERSION,
        tool: Tool::current(),
        command: CAMPAIGN_COMMAND.to_string(),
        campaign_id: state.campaign_id.clone(),
        driver: state.driver,
        accel,
        plan: plan.clone(),
        plan_sha256: state.plan_sha256.clone(),
        kind: plan.command_kind(),
        started_at: state.started_at.clone(),
        finished_at: match state.phase {
            Phase::Finished { at_s, .. } => Some(rfc3339(at_s)),
            _ => None,
        },
        start: state.start.clone(),
        targets: state.targets.clone(),
        phase: state.phase.clone(),
        boots,
        judgement,
    }
}

/// Seconds since the epoch as RFC 3339 UTC.
fn rfc3339(at_s: u64) -> String {
    humantime::format_rfc3339_seconds(std::time::UNIX_EPOCH + std::time::Duration::from_secs(at_s))
        .to_string()
}

/// A boot's result at `path` (relative, inside `dir`), read without following a symlink.
fn read_result(dir: &SafeDir, path: &Path) -> anyhow::Result<BootResult> {
    let names: Vec<&OsStr> = path
        .components()
        .map(|c| match c {
            Component::Normal(name) => Ok(name),
            _ => Err(anyhow::anyhow!(
                "{} is not a plain relative path",
                path.display()
            )),
        })
        .collect::<anyhow::Result<_>>()?;
    let (file, dirs) = names.split_last().context("an empty result path")?;
    let mut at = dir.open_entry(dirs.first().copied().unwrap_or(OsStr::new(".")))?;
    for name in dirs.iter().skip(1) {
        at = at.open_entry(name)?;
    }
    let bytes = at
        .read_own_file(file, crate::store::MAX_RESULT_BYTES)
        .with_context(|| format!("reading {}", path.display()))?;
    parse_result(&bytes).with_context(|| format!("loading {}", path.display()))
}

/// A `bench.json` or a `result.json`, told apart by their `command`.
fn parse_result(bytes: &[u8]) -> anyhow::Result<BootResult> {
    let value: serde_json::Value = serde_json::from_slice(bytes).context("it is not JSON")?;
    if value.get("command").and_then(|c| c.as_str()) == Some(BENCH_COMMAND) {
        let version = value.get("schema_version").and_then(|v| v.as_u64());
        anyhow::ensure!(
            version == Some(u64::from(BENCH_SCHEMA_VERSION)),
            "it has bench schema version {version:?}; this rtsoak reads {BENCH_SCHEMA_VERSION}"
        );
        return Ok(BootResult::Bench(Box::new(serde_json::from_value(value)?)));
    }
    Ok(BootResult::Soak(Box::new(crate::store::from_bytes(bytes)?)))
}

/// Read a campaign document back (a `campaign.json`, or its directory).
pub fn load(path: &Path) -> anyhow::Result<CampaignDoc> {
    let file = if path.is_dir() {
        path.join(CAMPAIGN_FILE)
    } else {
        path.to_path_buf()
    };
    let bytes = rtsoak_sys::checked_input::read(&file, "campaign document", MAX_DOC_BYTES)?;
    let value: serde_json::Value = serde_json::from_slice(&bytes)
        .with_context(|| format!("{} is not JSON", file.display()))?;
    anyhow::ensure!(
        value.get("command").and_then(|c| c.as_str()) == Some(CAMPAIGN_COMMAND),
        "{} is not an rtsoak campaign document (give the campaign.json a campaign wrote)",
        file.display()
    );
    let version = value.get("schema_version").and_then(|v| v.as_u64());
    anyhow::ensure!(
        version == Some(u64::from(CAMPAIGN_SCHEMA_VERSION)),
        "{} has campaign schema version {version:?}; this rtsoak reads version \
         {CAMPAIGN_SCHEMA_VERSION}",
        file.display()
    );
    serde_json::from_value(value)
        .with_context(|| format!("{} is not a valid campaign document", file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn dir() -> (tempfile::TempDir, SafeDir) {
        let temp = tempfile::tempdir().unwrap();
        std::fs::set_permissions(temp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let dir = SafeDir::open(temp.path()).unwrap();
        (temp, dir)
    }

    #[test]
    fn a_soak_result_is_read_back_as_one_and_anything_else_refused() {
        let (temp, dir) = dir();
        std::fs::create_dir_all(temp.path().join("boots/00/result")).unwrap();
        let soak = rtsoak_report::json::render(&rtsoak_testing::fixture::one_run_doc());
        std::fs::write(temp.path().join("boots/00/result/result.json"), soak).unwrap();
        let read = read_result(&dir, Path::new("boots/00/result/result.json")).unwrap();
        assert!(matches!(read, BootResult::Soak(_)));
        let bench = br#"{"command": "bench", "schema_version": 99}"#;
        let text = parse_result(bench).unwrap_err().to_string();
        assert!(text.contains("bench schema version Some(99)"), "{text}");
        assert!(parse_result(b"[1, 2]").is_err());
    }

    #[test]
    fn a_result_path_out_of_the_campaign_directory_or_through_a_symlink_is_refused() {
        let (temp, dir) = dir();
        let text = read_result(&dir, Path::new("../etc/passwd"))
            .unwrap_err()
            .to_string();
        assert!(text.contains("not a plain relative path"), "{text}");
        std::os::unix::fs::symlink("/etc", temp.path().join("boots")).unwrap();
        assert!(read_result(&dir, Path::new("boots/passwd")).is_err());
    }
}
