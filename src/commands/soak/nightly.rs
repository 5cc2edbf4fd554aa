//! What `run` and `compare` do for scheduled runs once the measuring is over: judge the result
//! (limits and baseline), say so on stderr (one line per transport under systemd, then the
//! verdict), write the node_exporter textfile, point `latest` at the result, prune old results,
//! and choose the exit code. The judging itself is the pure `result::verdict` and
//! `result::diff`; this module only loads, prints and writes.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::Context;

use crate::cli::NightlyArgs;
use crate::exit::Outcome;
use crate::store::load;
use crate::store::retention::{self, Retention};
use rtsoak_analysis::judge::diff;
use rtsoak_analysis::judge::verdict;
use rtsoak_record::result::ResultDoc;
use rtsoak_record::result::diff::DiffRules;
use rtsoak_record::result::verdict::{FailureKind, Status, Verdict};
use rtsoak_report::journal;
use rtsoak_sys::safe_dir::SafeDir;

/// A loaded baseline and the name it is reported under.
pub(super) struct Baseline {
    name: String,
    doc: ResultDoc,
}

/// What a scheduled run takes from its flags before anything runs: the baseline, read, and the
/// textfile directory, open.
pub(super) struct Scheduled {
    /// `--baseline`, loaded (none given, or none there yet).
    pub(super) baseline: Option<Baseline>,
    /// `--textfile-dir`, opened (and as root checked) now and written through this fd at the
    /// end, never looked up again by name (none given, or none there).
    textfile: Option<SafeDir>,
}

/// Load `--baseline` and open `--textfile-dir` before anything runs, so that a broken baseline
/// or a refused directory fails the invocation at once (exit 2 for a refusal), never after the
/// run, when a refused textfile would leave node_exporter serving the night before's verdict.
pub(super) fn prepare(args: &NightlyArgs) -> anyhow::Result<Scheduled> {
    Ok(Scheduled {
        baseline: load_baseline(args)?,
        textfile: open_textfile_dir(args)?,
    })
}

/// `--textfile-dir`, opened as node_exporter's directory is (`SafeDir::open_service_dir`). One
/// that does not exist is a warning, as for the systemd units, which name Debian's
/// node_exporter directory whether node_exporter is installed or not: nothing is written.
fn open_textfile_dir(args: &NightlyArgs) -> anyhow::Result<Option<SafeDir>> {
    let Some(dir) = &args.textfile_dir else {
        return Ok(None);
    };
    if std::fs::symlink_metadata(dir).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
        eprintln!(
            "Warning: --textfile-dir {} does not exist: the metrics will not be written. Create \
             it (owned by root, writable by no one else), or drop --textfile-dir.",
            dir.display()
        );
        return Ok(None);
    }
    // node_exporter's directory: Debian gives its parent to the `prometheus` user, which the
    // walk by fd makes harmless (see `SafeDir::open_service_dir`).
    SafeDir::open_service_dir(dir)
        .with_context(|| {
            format!(
                "opening --textfile-dir {} for the metrics: choose another, or drop it",
                dir.display()
            )
        })
        .map(Some)
}

/// Load `--baseline` before anything runs, so a broken baseline fails fast. A baseline that
/// does not exist yet (the first night) is a warning: the run goes on uncompared.
fn load_baseline(args: &NightlyArgs) -> anyhow::Result<Option<Baseline>> {
    let Some(path) = &args.baseline else {
        return Ok(None);
    };
    if std::fs::symlink_metadata(path).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
        eprintln!(
            "Warning: no baseline at {} yet; this result is not compared. Make one with \
             `{} baseline promote RESULT --to {}`.",
            path.display(),
            crate::commands::invocation::rtsoak_command(),
            path.display()
        );
        return Ok(None);
    }
    let doc = load(path).with_context(|| {
        format!(
            "loading the baseline {}: promote a valid result with `{} baseline promote`, or \
             drop --baseline",
            path.display(),
            crate::commands::invocation::rtsoak_command()
        )
    })?;
    Ok(Some(Baseline {
        name: path.display().to_string(),
        doc,
    }))
}

/// Default parent of the timestamped result directories.
pub(crate) fn results_parent(args: &NightlyArgs) -> PathBuf {
    args.results_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("rtsoak-results"))
}

/// The verdict of a finished document: its limits, then the baseline comparison.
pub(super) fn judge(doc: &ResultDoc, baseline: Option<&Baseline>) -> Verdict {
    let judged = verdict(doc);
    match baseline {
        Some(b) => judged.with_baseline(diff(&b.name, &b.doc, doc, &DiffRules::default())),
        None => judged,
    }
}

/// After the result is saved: the stderr report, the textfile, `latest` and retention. What
/// fails here is a warning: the result is saved and its verdict stands. The verdict's first
/// line always goes to stderr (the line a log or a gate looks for); its reasons too under
/// systemd, or when stdout did not get the table (`--json`), which already ends with them.
pub(super) fn finish(
    doc: &ResultDoc,
    result_dir: &Path,
    args: &NightlyArgs,
    scheduled: &Scheduled,
    table_printed: bool,
) {
    let journal = std::env::var_os("JOURNAL_STREAM").is_some();
    if journal {
        for line in journal::transport_lines(doc) {
            eprintln!("{line}");
        }
        if let Some(line) = doc.decision.as_ref().and_then(journal::decision_line) {
            eprintln!("{line}");
        }
    }
    if let Some(verdict) = &doc.verdict {
        let lines = journal::verdict_lines(verdict);
        let shown = if journal || !table_printed {
            lines.len()
        } else {
            1
        };
        for line in &lines[..shown] {
            eprintln!("{line}");
        }
    }
    if let Some(dir) = &scheduled.textfile {
        let name = rtsoak_report::textfile::file_name(doc);
        let text = rtsoak_report::textfile::render(doc);
        if let Err(error) = dir.write(name.as_ref(), text.as_bytes(), 0o644) {
            eprintln!(
                "Warning: writing the metrics to {}: {error}; check --textfile-dir",
                dir.path().join(&name).display()
            );
        }
    }
    let retention = Retention {
        keep: args.keep.map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
        keep_days: args.keep_days,
    };
    match retention::keep(result_dir, &retention, SystemTime::now()) {
        Ok(lines) => lines.iter().for_each(|line| eprintln!("{line}")),
        Err(error) => eprintln!("Warning: {error:#}"),
    }
}

/// The exit code a finished document earns. Precedence: interrupted, then a failed run (the
/// figures are incomplete, and a dead worker also loses messages), then lost messages or a
/// transport failure (both mean the transport did not deliver as it should), then a
/// regression, then a breached limit or `--break-on`, then inconclusive (nothing failed, but
/// the run did not measure what it was asked), then pass. A document without a verdict (one
/// saved mid-run) is judged here. Whatever is not a PASS never exits 0.
pub(super) fn outcome(doc: &ResultDoc) -> Outcome {
    let verdict = rtsoak_analysis::judge::stored_or_judged(doc);
    if doc.interrupted {
        Outcome::Interrupted
    } else if verdict.failed(FailureKind::RunFailed) {
        Outcome::SystemError
    } else if verdict.failed(FailureKind::LostMessages)
        || verdict.failed(FailureKind::TransportErrors)
    {
        Outcome::LostMessages
    } else if verdict.regression() {
        Outcome::Regression
    } else if verdict.status == Status::Fail {
        Outcome::ThresholdBreach
    } else if verdict.status == Status::Inconclusive {
        Outcome::Inconclusive
    } else {
        Outcome::Pass
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsoak_record::result::RunStatus;
    use rtsoak_record::result::diff::{Diff, Figure, Finding};
    use rtsoak_report::journal::verdict_lines;
    use rtsoak_testing::fixture::one_run_doc;

    fn judged(lost: u64, breach: bool, regression: bool) -> ResultDoc {
        let mut doc = one_run_doc();
        doc.runs[0].integrity.lost = lost;
        doc.plan.verdict.max_send_call_ns = breach.then_some(1_000);
        let mut verdict = verdict(&doc);
        if regression {
            verdict = verdict.with_baseline(Diff {
                baseline: "b".into(),
                baseline_started_at: String::new(),
                rules: DiffRules::default(),
                regression: true,
                inconclusive: Vec::new(),
                causes: Vec::new(),
                findings: vec![Finding {
                    transport: "eventfd".into(),
                    ring_setup: None,
                    series: Some(rtsoak_record::Series::Delivery),
                    figure: Figure::Max,
                    baseline: 100_000.0,
                    new: 900_000.0,
                    p_value: None,
                    regression: true,
                    reason: "longest rose".into(),
                }],
            });
        }
        doc.verdict = Some(verdict);
        doc
    }

    #[test]
    fn exit_codes_follow_the_documented_precedence() {
        assert_eq!(outcome(&judged(0, false, false)), Outcome::Pass);
        assert_eq!(outcome(&judged(0, true, false)), Outcome::ThresholdBreach);
        assert_eq!(outcome(&judged(0, true, true)), Outcome::Regression);
        let mut few = judged(0, false, false);
        few.plan.verdict.min_messages = Some(u64::MAX);
        few.verdict = Some(verdict(&few));
        assert_eq!(outcome(&few), Outcome::Inconclusive);
        assert_eq!(outcome(&few).code(), 7);
        // A breach outranks inconclusive.
        few.plan.verdict.max_send_call_ns = Some(1_000);
        few.verdict = Some(verdict(&few));
        assert_eq!(outcome(&few), Outcome::ThresholdBreach);
        assert_eq!(outcome(&judged(3, true, true)), Outcome::LostMessages);
        let mut failed = judged(3, true, true);
        failed.runs[0].status = RunStatus::Failed;
        failed.verdict = Some(verdict(&failed));
        assert_eq!(outcome(&failed), Outcome::SystemError);
        failed.interrupted = true;
        failed.verdict = Some(verdict(&failed));
        assert_eq!(outcome(&failed), Outcome::Interrupted);
    }

    #[test]
    fn a_failed_lost_or_interrupted_run_never_passes_whatever_the_limits() {
        let generous = |doc: &mut ResultDoc| {
            doc.plan.verdict.min_messages = Some(1);
            doc.verdict = Some(verdict(doc));
            let verdict = doc.verdict.as_ref().unwrap();
            assert!(verdict.breaches.is_empty(), "{:?}", verdict.breaches);
            assert!(!verdict.pass);
            assert!(verdict_lines(verdict)[0].starts_with("rtsoak verdict: FAIL (1 failure"));
            outcome(doc)
        };
        let mut lost = one_run_doc();
        lost.runs[0].integrity.lost = 1;
        assert_eq!(generous(&mut lost), Outcome::LostMessages);

        let mut failed = one_run_doc();
        failed.runs[0].integrity.lost = 0;
        failed.runs[0].status = RunStatus::Failed;
        failed.runs[0].reason = Some("the RT subscriber worker ended early".into());
        assert_eq!(generous(&mut failed), Outcome::SystemError);
        let line = &verdict_lines(failed.verdict.as_ref().unwrap())[1];
        assert_eq!(
            line,
            "  failure: eventfd: round 1 failed: the RT subscriber worker ended early"
        );

        let mut interrupted = one_run_doc();
        interrupted.runs[0].integrity.lost = 0;
        interrupted.runs[0].status = RunStatus::Interrupted;
        interrupted.runs[0].reason = Some("stopped by SIGTERM".into());
        interrupted.interrupted = true;
        doc_lines_name(&mut interrupted, "was interrupted: stopped by SIGTERM");
        assert_eq!(outcome(&interrupted), Outcome::Interrupted);
    }

    fn doc_lines_name(doc: &mut ResultDoc, text: &str) {
        doc.verdict = Some(verdict(doc));
        let lines = verdict_lines(doc.verdict.as_ref().unwrap());
        assert!(lines[0].starts_with("rtsoak verdict: FAIL"), "{lines:?}");
        assert!(lines.iter().any(|l| l.contains(text)), "{lines:?}");
    }

    #[test]
    fn a_transport_failure_exits_like_lost_messages_whatever_the_limits() {
        let mut doc = one_run_doc();
        doc.runs[0].integrity.fallback_deliveries = 12;
        doc.plan.verdict.min_messages = Some(1);
        doc.verdict = Some(verdict(&doc));
        assert_eq!(outcome(&doc), Outcome::LostMessages);
        assert_eq!(outcome(&doc).code(), 4);
        let lines = verdict_lines(doc.verdict.as_ref().unwrap());
        assert_eq!(
            lines[1],
            "  failure: eventfd: the transport failed: 12 messages were delivered only by the \
             fallback poll (no wakeup came)"
        );
        // A failed run still outranks it (exit 5), as it outranks lost messages.
        doc.runs[0].status = RunStatus::Failed;
        doc.verdict = Some(verdict(&doc));
        assert_eq!(outcome(&doc), Outcome::SystemError);
    }

    #[test]
    fn a_document_saved_without_a_verdict_is_judged_for_its_exit_code() {
        let mut doc = one_run_doc();
        doc.verdict = None;
        doc.runs[0].integrity.lost = 1;
        assert_eq!(outcome(&doc), Outcome::LostMessages);
    }

    #[test]
    fn the_verdict_lines_name_every_breach_and_regression() {
        let doc = judged(0, true, true);
        let lines = verdict_lines(doc.verdict.as_ref().unwrap());
        assert_eq!(
            lines[0],
            "rtsoak verdict: FAIL (0 failures, 1 breach, 1 regression(s) against b)"
        );
        assert!(
            lines[1].starts_with("  breach: eventfd: longest send_call 150.0 us > 1 us allowed"),
            "{lines:?}"
        );
        assert_eq!(lines[2], "  regression: eventfd delivery max: longest rose");
        assert_eq!(
            lines[3],
            "  regression against the baseline b: eventfd delivery max"
        );
    }
}
