//! Inside a qemu guest the qemu driver booted: `rtsoak campaign guest --share DIR` reads the
//! boot's order from the host's 9p share (`boot.json`: the token this boot must carry, the
//! command, the settle conditions, the deadline), checks the token on the kernel's command
//! line, measures as a kexec boot does, and writes its report (`report.json`: the boot's
//! facts, what became of it, the measurement) and the command's result into the share. The
//! host judges it; the guest only reports.
//!
//! The share is read and written as root inside the guest, so the host must run the driver as
//! root (a share another user owns is refused as any directory root writes into is).
//!
//! Owns: the guest's side of the exchange. Never decides what the host does next.

use std::ffi::OsStr;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use super::command::this_rtsoak;
use super::identity::BootFacts;
use super::measure::{Measured, Step, measure};
use super::plan::{CommandKind, SettleSection};
use super::state::{Measurement, Outcome, now_s};
use crate::sysinfo::SysRoot;
use rtsoak_measure::coordinator::stop::StopFlag;
use rtsoak_sys::safe_dir::SafeDir;

/// The order's file in the share.
pub(crate) const ORDER_FILE: &str = "boot.json";
/// The report's file in the share.
pub(crate) const REPORT_FILE: &str = "report.json";
/// Larger than any order or report (a report holds a fingerprint and a measurement).
pub(crate) const MAX_EXCHANGE_BYTES: u64 = 1 << 20;

/// What the host asks of one boot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct GuestOrder {
    /// The token the boot's command line must carry.
    pub(crate) token: String,
    /// The rtsoak command's words.
    pub(crate) command: Vec<String>,
    /// What it saves.
    pub(crate) kind: CommandKind,
    /// When the boot is settled (systemd is not asked: no guest has it as PID 1).
    pub(crate) settle: SettleSection,
    /// Seconds from the boot's start to its saved result.
    pub(crate) deadline_s: u64,
}

/// What the guest reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct GuestReport {
    /// The boot's facts.
    pub(crate) facts: BootFacts,
    /// What became of it; none when it did not carry the order's token (not measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) outcome: Option<Outcome>,
    /// The measurement, with its result relative to the share.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) measurement: Option<Measurement>,
}

/// Run the boot's order from `share`.
pub(crate) fn run(share: &Path, stop: &StopFlag) -> anyhow::Result<()> {
    let dir = SafeDir::open(share)?;
    let order: GuestOrder = serde_json::from_slice(
        &dir.read_own_file(OsStr::new(ORDER_FILE), MAX_EXCHANGE_BYTES)
            .with_context(|| format!("reading {ORDER_FILE} in {}", share.display()))?,
    )
    .with_context(|| format!("{ORDER_FILE} is not a boot order of this rtsoak"))?;
    let root = SysRoot::system();
    let facts = super::identity::read(&root);
    let mut report = GuestReport {
        facts,
        outcome: None,
        measurement: None,
    };
    if report.facts.token() == Some(order.token.as_str()) {
        let uptime_s = root
            .read_trimmed("/proc/uptime")
            .and_then(|t| t.split('.').next()?.parse::<u64>().ok())
            .unwrap_or(0);
        let rtsoak = this_rtsoak()?;
        let step = Step {
            settle: &order.settle,
            command: &order.command,
            kind: order.kind,
            rtsoak: &rtsoak,
            systemctl: None,
            boot_dir: &dir,
            relative_dir: Path::new(""),
            until: Instant::now() + Duration::from_secs(order.deadline_s.saturating_sub(uptime_s)),
            loaded_at_s: now_s().saturating_sub(uptime_s),
        };
        match measure(&step, &root, stop)? {
            Measured::Stopped => return Ok(()),
            Measured::Done(outcome, measurement) => {
                report.outcome = Some(outcome);
                report.measurement = measurement.map(|m| *m);
            }
        }
    }
    let mut bytes = serde_json::to_vec_pretty(&report)?;
    bytes.push(b'\n');
    dir.write(OsStr::new(REPORT_FILE), &bytes, 0o644)
        .with_context(|| format!("writing {REPORT_FILE}"))
}
