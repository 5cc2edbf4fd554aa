//! The floor of shared records: the plain data that crosses the process boundary (worker spec
//! and report) and lands in the result file. Every other module may use these; this module
//! uses nothing of rtsoak's, so the layers above it (kernel layer, loops, results, exports) meet
//! here instead of importing each other.
//!
//! Owns: names and shapes, with their serde spelling (which is the result schema's). Never
//! reads the system, measures, judges or renders.

#![forbid(unsafe_code)]

mod board;
mod break_event;
mod caveat;
mod counters;
mod cpu_dma_latency;
mod finding;
mod host;
mod privileges;
mod role;
mod series;
mod setup;
mod status;
mod support;
mod system_check;
mod tail;

pub use board::{
    BoardCheck, BoardFacts, BoardFinding, BootConfig, BootEntry, BootParameter, DeviceClass,
    DeviceIrq,
};
pub use break_event::BreakEvent;
pub use caveat::{Caveat, Severity};
pub use counters::{BurstReport, Counters, LoadCount};
pub use cpu_dma_latency::CpuDmaLatency;
pub use finding::{Finding, Level};
pub use host::{BootIsolation, CpuFacts, HostFacts};
pub use privileges::{Privileges, Trial};
pub use role::Role;
pub use series::{Series, SeriesKey};
pub use setup::{FdWait, Hygiene, Policy, RingSetup, RtSetup};
pub use status::Status;
pub use support::{Support, TransportSupport};
pub use system_check::{CheckFacts, CpuIdle, IdleState, Irq, RtCpus, SystemCheck, Task};
pub use tail::{
    FitTestRecord, OverThreshold, ReturnLevel, TailEstimate, TailModel, ThresholdTried,
};
