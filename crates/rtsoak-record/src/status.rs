//! The verdict a result and a baseline comparison end with: PASS, FAIL or INCONCLUSIVE.

use serde::{Deserialize, Serialize};

/// The three verdicts. Units, CI gates and dashboards act on it unread, so "nothing wrong was
/// seen" is never said where nothing was measured: that is [`Status::Inconclusive`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Measured what was asked, within every limit, and (with a baseline) no regression.
    Pass,
    /// A limit breached, a message lost, a transport or a worker failed, a regression.
    Fail,
    /// Nothing failed, but the run could not measure what it was asked: nothing measured, too
    /// many missed periods, noise or RT priority not as asked, too few messages, or a baseline
    /// comparison that compared nothing.
    Inconclusive,
}

impl Status {
    /// `PASS`, `FAIL`, `INCONCLUSIVE`: how every renderer spells it.
    pub fn word(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Inconclusive => "INCONCLUSIVE",
        }
    }
}
