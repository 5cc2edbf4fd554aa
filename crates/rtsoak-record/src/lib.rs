//! rtsoak's records: the plain data that crosses the process boundary (a worker's spec and
//! report) or lands in a file (the result document, the bench document). Every other crate
//! stands on these; this one depends on nothing of rtsoak's, so the layers above it (the kernel
//! layer, measuring, analysis, reporting) meet here instead of importing each other.
//!
//! Owns: names and shapes, with their serde spelling, which is the result schema's
//! (`docs/result-schema.md`); the spelling of CPU lists ([`cpulist`]) and the one escaping rule
//! for text another user controls ([`text`]). Never reads or writes anything, reads the clock,
//! makes a system call, measures or judges. Sentences belong to the report crate; the few
//! methods here that still word a record (`Support::reason`, `Integrity::loss`, the explanation's
//! phrases) are to become ids the report words.
//!
//! In reading order: what a run is told ([`plan`], [`export`], [`transport`], [`abi`]), what
//! its workers are and record (roles, series, setups, counters, the figures' types), what the
//! machine is (host facts, the system check), and the documents that hold it all ([`result`],
//! [`mod@bench`]).

#![forbid(unsafe_code)]
// A function a reader can hold in their head: at most 100 lines (clippy.toml), product code
// only (`tests/architecture.rs` refuses an `allow` that would let one through).
#![cfg_attr(not(test), deny(clippy::too_many_lines))]

pub mod plan;

pub mod action;
pub mod export;

pub mod transport;

pub mod abi;

pub mod cpulist;

pub mod text;

pub mod result;

pub mod bench;

mod board;
mod break_event;
mod caveat;
mod caveat_kind;
mod check_id;
mod coordinator;
mod counters;
mod cpu_dma_latency;
mod cpu_wait;
mod finding;
mod host;
mod integrity;
mod privileges;
mod role;
mod samples;
mod series;
mod setup;
mod status;
mod summary;
mod support;
mod system_check;
mod tail;

pub use board::{
    BoardCheck, BoardFacts, BoardFinding, BootConfig, BootEntry, BootParameter, DeviceClass,
    DeviceIrq,
};
pub use break_event::BreakEvent;
pub use caveat::{Caveat, Severity};
pub use caveat_kind::CaveatKind;
pub use check_id::CheckId;
pub use coordinator::CoordinatorActivity;
pub use counters::{BurstReport, Counters, LoadCount};
pub use cpu_dma_latency::CpuDmaLatency;
pub use cpu_wait::{CpuHolder, CpuHolderRole, CpuWait};
pub use finding::{Finding, Level};
pub use host::{BootIsolation, CpuFacts, HostFacts};
pub use integrity::{Attribution, Integrity};
pub use privileges::{Privileges, Trial};
pub use role::Role;
pub use samples::{Outlier, SampleStats};
pub use series::{Series, SeriesKey};
pub use setup::{FdWait, Hygiene, Policy, RingSetup, RtSetup};
pub use status::Status;
pub use summary::Summary;
pub use support::{Support, TransportSupport};
pub use system_check::{
    CheckFacts, CpuIdle, Hypervisor, IdleState, Irq, RtCpus, SystemCheck, Task,
};
pub use tail::{
    FitTestRecord, Half, HeldOutRecord, OverThreshold, PooledTail, ReturnLevel, ReturnSpan,
    StationarityKind, StationarityTest, TailEstimate, TailModel, TailRefusal, ThresholdTried,
};

/// The id a unit variant is written as in a result (its serde name: `lost-messages`,
/// `verdict.max_p99_us`), for the renderers that name a kind the way the file does; empty for a
/// value that does not serialize to a string.
pub fn serde_id(value: impl serde::Serialize) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}
