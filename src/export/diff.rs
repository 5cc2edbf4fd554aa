//! A baseline comparison as `rtsoak diff` prints it.

use crate::result::diff::Diff;

/// One line per finding (`REGRESSION` or `ok`), one per reason the comparison is
/// inconclusive, then the one-line verdict (`verdict: PASS|FAIL|INCONCLUSIVE`).
pub fn render(diff: &Diff) -> String {
    let mut out = String::new();
    for finding in &diff.findings {
        let mark = if finding.regression {
            "REGRESSION"
        } else {
            "ok"
        };
        out.push_str(&format!(
            "{mark:<10}  {}: {}\n",
            finding.label(),
            finding.reason
        ));
    }
    for reason in &diff.inconclusive {
        out.push_str(&format!("{:<10}  {reason}\n", "NOT JUDGED"));
    }
    out.push_str(&format!(
        "verdict: {}: {}\n",
        diff.status().word(),
        diff.summary_line()
    ));
    out
}
