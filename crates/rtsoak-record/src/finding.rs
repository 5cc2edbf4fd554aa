//! One verdict of the system check.

use serde::{Deserialize, Serialize};

use crate::CheckId;

/// How a finding bears on the figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Level {
    /// As it should be for a real-time measurement.
    Ok,
    /// The figures are still real-time figures, but worse than this machine can do.
    Warning,
    /// The figures do not show real-time behaviour, or part of the run cannot work.
    Problem,
}

impl Level {
    /// `ok`, `warning`, `PROBLEM` (shouted, so it stands out in a terminal).
    pub fn label(self) -> &'static str {
        match self {
            Level::Ok => "ok",
            Level::Warning => "warning",
            Level::Problem => "PROBLEM",
        }
    }
}

/// One verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// The check (`irq.affinity`, `kernel.preempt-rt` in the JSON), for scripts.
    pub id: CheckId,
    /// The verdict.
    pub level: Level,
    /// What it is about (`kernel`, `irq 45 (eth0)`, `CPU 4`).
    pub subject: String,
    /// What was found, with the values read.
    pub detail: String,
    /// What to do about it (absent when ok).
    pub remedy: Option<String>,
    /// Its line in the "what this result is worth" summary (absent when ok).
    pub worth: Option<String>,
}

impl Finding {
    /// An ok finding: nothing to do, nothing to say about the figures.
    pub fn ok(id: CheckId, subject: impl Into<String>, detail: impl Into<String>) -> Self {
        Finding {
            id,
            level: Level::Ok,
            subject: subject.into(),
            detail: detail.into(),
            remedy: None,
            worth: None,
        }
    }

    /// A warning or problem, with what to do and its line in the summary.
    pub fn bad(
        id: CheckId,
        level: Level,
        subject: impl Into<String>,
        detail: impl Into<String>,
        remedy: impl Into<String>,
        worth: Option<String>,
    ) -> Self {
        Finding {
            id,
            level,
            subject: subject.into(),
            detail: detail.into(),
            remedy: Some(remedy.into()),
            worth,
        }
    }
}
