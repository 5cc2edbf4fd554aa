//! A baseline comparison as `rtsoak diff` prints it, for a terminal and as Markdown. The
//! findings name what the two results hold (transports, the baseline's path, their reasons):
//! every line is escaped for the terminal, every Markdown cell and line for Markdown, where it
//! is written ([`fn@line`], [`markdown_line`]).

use std::fmt::Write;

use crate::escape::{markdown as md, terminal};
use rtsoak_record::result::RunKey;
use rtsoak_record::result::diff::{CauseChange, CauseChanges, Diff};

use crate::why;

/// Causes named per series in "why the spikes changed"; the rest are counted.
const CAUSES_NAMED: usize = 3;

/// One line per finding (`REGRESSION` or `ok`), one per reason the comparison is
/// inconclusive, why the spikes changed where both sides were explained, then the one-line
/// verdict (`verdict: PASS|FAIL|INCONCLUSIVE`).
pub fn render(diff: &Diff) -> String {
    let mut out = String::new();
    for finding in &diff.findings {
        let mark = if finding.regression {
            "REGRESSION"
        } else {
            "ok"
        };
        let text = format!("{mark:<10}  {}: {}", finding.label(), finding.reason);
        line(&mut out, &text);
    }
    for reason in &diff.inconclusive {
        line(&mut out, &format!("{:<10}  {reason}", "NOT JUDGED"));
    }
    if !diff.causes.is_empty() {
        line(&mut out, WHY_HEADING);
        for changes in &diff.causes {
            line(&mut out, &format!("  {}", why(changes)));
        }
    }
    let verdict = format!("verdict: {}: {}", diff.status().word(), diff.summary_line());
    line(&mut out, &verdict);
    out
}

/// One line of the terminal view, escaped.
fn line(out: &mut String, text: &str) {
    let _ = writeln!(out, "{}", terminal(text));
}

/// One line of the Markdown view: `before`, then `text` escaped, then `after`.
fn markdown_line(out: &mut String, before: &str, text: &str, after: &str) {
    let _ = writeln!(out, "{before}{}{after}", md(text));
}

const WHY_HEADING: &str = "Why the spikes changed (both sides explained; a cause's count is its \
                           share of the kept spikes times all spikes over the threshold):";

/// The comparison as GitHub Markdown: the verdict, the regressions, why it is inconclusive,
/// why the spikes changed, then every finding in a table.
pub fn markdown(diff: &Diff) -> String {
    let mut out = String::new();
    let verdict = format!("**verdict: {}**: ", diff.status().word());
    markdown_line(&mut out, &verdict, &diff.summary_line(), "\n");
    for reason in &diff.inconclusive {
        markdown_line(&mut out, "- not judged: ", reason, "");
    }
    if !diff.causes.is_empty() {
        let _ = writeln!(out, "\n{WHY_HEADING}\n");
        for changes in &diff.causes {
            markdown_line(&mut out, "- ", &why(changes), "");
        }
    }
    out.push_str(
        "\n| finding | regression | baseline | new | why |\n| --- | --- | ---: | ---: | --- |\n",
    );
    for f in &diff.findings {
        let cells = [
            md(&f.label()),
            if f.regression { "**yes**" } else { "no" }.to_string(),
            f.baseline.to_string(),
            f.new.to_string(),
            md(&f.reason),
        ];
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out
}

/// `futex send_call: +2800 spikes over the threshold (97 → 2897): +2650 blocked on ... (12 % →
/// 91 %); ...`, the largest changes first.
fn why(changes: &CauseChanges) -> String {
    let row = RunKey {
        transport: &changes.transport,
        ring_setup: changes.ring_setup,
    }
    .label();
    // In 128 bits: two counts read from files, whose difference an i64 may not hold.
    let total =
        i128::from(changes.new_over_threshold) - i128::from(changes.baseline_over_threshold);
    let (paired, unpaired): (Vec<&CauseChange>, Vec<&CauseChange>) =
        changes.changes.iter().partition(|c| !c.unpaired);
    let mut parts: Vec<String> = paired
        .iter()
        .take(CAUSES_NAMED)
        .map(|c| {
            format!(
                "{:+.0} {} ({:.0} % → {:.0} % of the kept spikes)",
                c.new_count - c.baseline_count,
                why::cause_or_unexplained(c.cause.as_ref()),
                c.baseline_share_percent,
                c.new_share_percent
            )
        })
        .collect();
    let rest = paired.len().saturating_sub(CAUSES_NAMED);
    if rest > 0 {
        parts.push(format!("{rest} more causes changed less"));
    }
    // Never folded into the rest: a cause that could not be paired is not known to have changed.
    parts.extend(unpaired.iter().map(|c| {
        let (share, side) = if c.baseline_count > 0.0 {
            (c.baseline_share_percent, "the baseline")
        } else {
            (c.new_share_percent, "this result")
        };
        format!(
            "not paired: {} ({share:.0} % of the kept spikes in {side}; an older rtsoak's words \
             this one does not recognise, so it may be one of the causes above)",
            why::cause_or_unexplained(c.cause.as_ref()),
        )
    }));
    format!(
        "{row} {}: {total:+} spikes over the threshold ({} → {}): {}",
        changes.series,
        changes.baseline_over_threshold,
        changes.new_over_threshold,
        parts.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use rtsoak_record::result::cause::Cause;
    use rtsoak_record::result::diff::{CauseChange, CauseChanges, Diff, DiffRules};
    use rtsoak_record::result::explain::LockKind;

    #[test]
    fn a_cause_that_changed_is_said_with_its_counts_and_shares() {
        let diff = Diff {
            baseline: "base".into(),
            baseline_started_at: String::new(),
            rules: DiffRules::default(),
            regression: true,
            inconclusive: Vec::new(),
            findings: Vec::new(),
            causes: vec![CauseChanges {
                transport: "eventfd".into(),
                ring_setup: None,
                series: rtsoak_record::Series::Delivery,
                baseline_over_threshold: 200,
                new_over_threshold: 3000,
                changes: vec![CauseChange {
                    cause: Some(Cause::Lock {
                        lock: LockKind::Other,
                        caller: None,
                        holder: None,
                    }),
                    unpaired: false,
                    baseline_count: 20.0,
                    new_count: 2700.0,
                    baseline_share_percent: 10.0,
                    new_share_percent: 90.0,
                }],
            }],
        };
        let text = super::render(&diff);
        assert!(
            text.contains(
                "  eventfd delivery: +2800 spikes over the threshold (200 → 3000): +2680 blocked \
                 on a lock (10 % → 90 % of the kept spikes)"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_cause_that_could_not_be_paired_is_named_with_its_side_not_folded_into_the_rest() {
        let change = |cause: Cause, unpaired, baseline_count: f64| CauseChange {
            cause: Some(cause),
            unpaired,
            baseline_count,
            new_count: 0.0,
            baseline_share_percent: baseline_count / 2.0,
            new_share_percent: 0.0,
        };
        let softirq = |action: &str| Cause::Softirq {
            action: action.into(),
        };
        let mut changes: Vec<CauseChange> = ["A", "B", "C", "D"]
            .into_iter()
            .map(|a| change(softirq(a), false, 10.0))
            .collect();
        changes.push(change(
            Cause::Unknown {
                text: "an old phrase".into(),
            },
            true,
            60.0,
        ));
        let line = super::why(&CauseChanges {
            transport: "eventfd".into(),
            ring_setup: None,
            series: rtsoak_record::Series::Delivery,
            baseline_over_threshold: 200,
            new_over_threshold: 200,
            changes,
        });
        assert!(line.contains("1 more causes changed less"), "{line}");
        assert!(
            line.ends_with(
                "not paired: an old phrase (30 % of the kept spikes in the baseline; an older \
                 rtsoak's words this one does not recognise, so it may be one of the causes above)"
            ),
            "{line}"
        );
    }
}
