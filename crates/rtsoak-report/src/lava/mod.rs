//! LAVA: a result as the test cases of a LAVA test shell, each with a measurement and its
//! units, and the sentences that say why, for the job's log.
//!
//! The same lines two ways: [`render`] writes them as a shell script for a test shell
//! (`lava-test-cases.sh`: a `lava-test-case NAME --result pass|fail|skip --measurement V
//! --units U` per case, a `printf` per log line), and [`Line::console`] is what that script
//! prints on the console, word for word as LAVA's own `lava-test-case` helper prints a case's
//! signal (`<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=... RESULT=... UNITS=... MEASUREMENT=...>`):
//! inside a test shell rtsoak prints these itself (`lava/rtsoak-compare.yaml`).
//!
//! A LAVA signal carries a name, a result, a measurement and units, and no text: the reasons of
//! a verdict are test cases of their own (`verdict.reason.<kind>...`, [`verdict`]), each just
//! after the sentence that says it in the log. Names hold letters, digits and `_-.` only: LAVA
//! keeps a name in URLs and in its signal lines, where spaces and slashes do not survive. Pure:
//! the lines come from the saved result alone.

mod figures;
mod verdict;

use std::fmt::Write;

use super::escape::{lava_log, shell_word};
use rtsoak_analysis::merge::by_transport;
use rtsoak_record::result::ResultDoc;

/// A test case's result, as `lava-test-case --result` takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Pass,
    Fail,
    /// Not judged: an unsupported transport, an inconclusive verdict.
    Skip,
}

impl Outcome {
    /// The word LAVA records.
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "fail",
            Outcome::Skip => "skip",
        }
    }
}

/// A figure as a test case carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Measurement {
    /// The number, as LAVA parses it (a decimal).
    pub value: String,
    /// Its unit (`us`, `messages`, `per-million`).
    pub units: &'static str,
}

/// One `lava-test-case` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    /// The test case's name, from the characters LAVA keeps only.
    pub name: String,
    /// Its result.
    pub outcome: Outcome,
    /// Its figure, if it has one.
    pub measurement: Option<Measurement>,
}

/// One line of a result's report into a LAVA job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A sentence for the job's log, just before the test case it explains.
    Log(String),
    /// A test case.
    Case(Case),
}

impl Case {
    /// A case named `name` (every character LAVA does not keep made a `-`).
    pub(crate) fn new(name: &str, outcome: Outcome, measurement: Option<Measurement>) -> Self {
        Case {
            name: case_name(name),
            outcome,
            measurement,
        }
    }

    /// The signal LAVA's `lava-test-case` helper prints for this case, word for word:
    /// `TEST_CASE_ID`, `RESULT`, then `UNITS` and `MEASUREMENT` where given. The dispatcher
    /// records a test case from it.
    pub fn signal(&self) -> String {
        let mut signal = format!(
            "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID={} RESULT={}",
            self.name,
            self.outcome.word()
        );
        if let Some(m) = &self.measurement {
            let _ = write!(signal, " UNITS={} MEASUREMENT={}", m.units, m.value);
        }
        signal.push('>');
        signal
    }

    /// The helper's command line for this case.
    fn command(&self) -> String {
        let mut command = format!(
            "lava-test-case {} --result {}",
            self.name,
            self.outcome.word()
        );
        if let Some(m) = &self.measurement {
            let _ = write!(command, " --measurement {} --units {}", m.value, m.units);
        }
        command
    }
}

impl Line {
    /// What the line puts on the console in a test shell: a log line as it reads (escaped so
    /// that the dispatcher finds no signal in it), a case as its signal.
    pub fn console(&self) -> String {
        match self {
            Line::Log(text) => lava_log(text),
            Line::Case(case) => case.signal(),
        }
    }

    /// The script's line that prints it: `printf` for a log line (taken literally, unlike
    /// `echo`), the helper for a case.
    fn script(&self) -> String {
        match self {
            Line::Log(text) => format!("printf '%s\\n' {}", shell_word(&lava_log(text))),
            Line::Case(case) => case.command(),
        }
    }
}

/// Every line of `doc`: each transport's figures, then the caveats, the verdict's reasons and
/// the verdict.
pub fn lines(doc: &ResultDoc) -> Vec<Line> {
    let mut lines: Vec<Line> = by_transport(doc)
        .iter()
        .flat_map(|t| figures::cases(doc, t))
        .map(Line::Case)
        .collect();
    lines.extend(verdict::lines(doc));
    lines
}

/// `doc` as a script of `lava-test-case` calls and the log lines between them.
pub fn render(doc: &ResultDoc) -> String {
    lines(doc).iter().map(|line| line.script() + "\n").collect()
}

/// `name` with every character LAVA does not take in a test case name made a `-`.
fn case_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_-.".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
