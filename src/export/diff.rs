//! A baseline comparison as `rtsoak diff` prints it.

use crate::result::diff::Diff;

/// One line per finding (`REGRESSION` or `ok`), then the one-line verdict.
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
    out.push_str(&diff.summary_line());
    out.push('\n');
    out
}
