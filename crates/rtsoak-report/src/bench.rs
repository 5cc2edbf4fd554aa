//! Text renderings of a bench result and of a comparison: pure functions from documents to
//! strings, so they are tested without running anything.

use std::fmt::Write;

use rtsoak_analysis::bench::compare::{Comparison, Gates};
use rtsoak_record::bench::BenchDoc;

/// The summary `rtsoak bench <name>` prints: settings, then per series the figures, then each
/// round with its checks.
pub fn render_doc(doc: &BenchDoc) -> String {
    let mut out = String::new();
    write_settings(&mut out, doc);
    write_series(&mut out, doc);
    write_rounds(&mut out, doc);
    let _ = writeln!(
        out,
        "{}",
        if doc.valid {
            "every round passed every check"
        } else {
            "SOME ROUNDS FAILED THEIR CHECKS: the figures above are not valid"
        }
    );
    out
}

/// What was run, where, on which kernel, and the setup's warnings.
fn write_settings(out: &mut String, doc: &BenchDoc) {
    let c = &doc.config;
    let kernel = doc
        .host
        .kernel_release
        .as_deref()
        .unwrap_or("unknown kernel");
    let rt = if doc.host.preempt_rt {
        "PREEMPT_RT"
    } else {
        "not PREEMPT_RT"
    };
    let _ = writeln!(
        out,
        "bench {}: k={}{}, ring {}, CPU {:?} {} {}, kernel {kernel} ({rt})",
        doc.bench.name(),
        c.k,
        match (doc.bench.waits_on_futex_words(), c.shared) {
            (false, _) => "",
            (true, true) => " shared words",
            (true, false) => " private words",
        },
        doc.setup
            .ring_setup
            .map(|r| r.name())
            .unwrap_or("(none used)"),
        doc.setup.cpus,
        doc.setup.policy,
        doc.setup.priority,
    );
    let _ = writeln!(
        out,
        "{} warm-up + {} measured rounds x {} cycles",
        c.warmup_rounds, c.rounds, c.cycles
    );
    for warning in &doc.setup.warnings {
        let _ = writeln!(out, "warning: {warning}");
    }
}

/// One row per series: its figures over the valid rounds.
fn write_series(out: &mut String, doc: &BenchDoc) {
    let _ = writeln!(
        out,
        "{:<16} {:>12} {:>12} {:>8} {:>12} {:>12} {:>7}",
        "series", "mean ns/op", "median", "CV %", "min", "max", "valid"
    );
    for series in &doc.series {
        let s = &series.summary;
        let _ = writeln!(
            out,
            "{:<16} {:>12.3} {:>12.3} {:>8.3} {:>12.3} {:>12.3} {:>3}/{:<3}  (op: {}, {} per cycle)",
            series.name,
            s.mean_ns_per_op,
            s.median_ns_per_op,
            s.cv_pct,
            s.min_ns_per_op,
            s.max_ns_per_op,
            s.valid_rounds,
            s.measured_rounds,
            series.op,
            series.ops_per_cycle,
        );
    }
}

/// Every round of every series, with what its checks found.
fn write_rounds(out: &mut String, doc: &BenchDoc) {
    for series in &doc.series {
        for round in &series.rounds {
            let checks = if round.valid {
                "all checks passed".to_string()
            } else {
                format!("FAILED: {}", round.checks.failed.join(", "))
            };
            let _ = writeln!(
                out,
                "  {} round {:>3}{:<9} {:>12.3} ns/op  {} completions validated, {checks}",
                series.name,
                round.index,
                if round.warmup { " (warm-up)" } else { "" },
                round.ns_per_op,
                round.checks.completions,
            );
        }
    }
}

/// The comparison table and the verdict, with the gates it was judged against. The bench,
/// labels and series names come from the results compared: each is escaped for the terminal
/// once, here, before it is laid out.
pub fn render_comparison(
    bench: &str,
    labels: &[String],
    rows: &[(String, Comparison)],
    gates: &Gates,
    verdict: &str,
) -> String {
    use super::escape::terminal;
    let bench = terminal(bench);
    let labels: Vec<String> = labels.iter().map(|l| terminal(l).into_owned()).collect();
    let rows: Vec<(String, &Comparison)> = rows
        .iter()
        .map(|(name, c)| (terminal(name).into_owned(), c))
        .collect();
    let mut out = String::new();
    let three_way = labels.len() == 3;
    let _ = writeln!(out, "bench {bench}: {}", labels.join(" -> "));
    let _ = writeln!(
        out,
        "gates fixed in advance: signal {:.3}%, drift {:.3}%, CV {:.3}%",
        gates.signal_pct, gates.drift_pct, gates.cv_pct
    );
    let points = if three_way {
        ["parent A", "child", "parent B"].as_slice()
    } else {
        ["A", "B"].as_slice()
    };
    let _ = write!(out, "{:<16}", "series");
    for p in points {
        let _ = write!(out, " {p:>12}");
    }
    let change = if three_way { "vs midpoint" } else { "B vs A" };
    let _ = writeln!(
        out,
        " {change:>12} {:>11} {:>9} {:>8}  verdict",
        "drop-first", "drift", "max CV"
    );
    for (name, c) in &rows {
        let _ = write!(out, "{name:<16}");
        for mean in &c.means_ns_per_op {
            let _ = write!(out, " {mean:>12.3}");
        }
        let drift = c
            .drift_pct
            .map(|d| format!("{d:+.3}%"))
            .unwrap_or_else(|| "n/a".to_string());
        let _ = writeln!(
            out,
            " {:>12} {:>11} {drift:>9} {:>8}  {}",
            format!("{:+.3}%", c.change_pct),
            format!("{:+.3}%", c.change_drop_first_pct),
            format!("{:.3}%", c.max_cv_pct),
            c.verdict.name()
        );
        for reason in &c.reasons {
            let _ = writeln!(out, "  {name}: {reason}");
        }
    }
    let _ = writeln!(out, "verdict: {verdict}");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsoak_analysis::bench::compare::{Point, three_way};

    #[test]
    fn a_comparison_prints_the_gates_the_figures_and_the_verdict() {
        let point = |v: f64| Point {
            rounds_ns_per_op: vec![v],
            invalid_rounds: 0,
        };
        let gates = Gates::default();
        let c = three_way(&point(180.079), &point(196.647), &point(179.856), &gates);
        let text = render_comparison(
            "futex-wait-wake",
            &["a".into(), "child".into(), "b".into()],
            &[("futex-wait-wake".into(), c)],
            &gates,
            "regression",
        );
        assert!(
            text.contains("signal 5.000%, drift 2.000%, CV 2.000%"),
            "{text}"
        );
        assert!(text.contains("+9.268%"), "{text}");
        assert!(text.contains("-0.124%"), "{text}");
        assert!(text.contains("verdict: regression"), "{text}");
    }
}
