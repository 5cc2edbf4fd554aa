//! The comparison table for the terminal: one row per transport run, the figures that answer
//! "which transport held up", then the caveats.

use std::fmt::Write;

use crate::result::{ResultDoc, RunStatus};

fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1e3)
}

/// Render `doc` as the comparison table.
pub fn render(doc: &ResultDoc) -> String {
    let threshold = us(doc.plan.threshold_ns);
    let header = [
        "transport".to_string(),
        "messages".to_string(),
        format!("sends>{threshold}us"),
        "longest send us".to_string(),
        format!("deliveries>{threshold}us"),
        "longest delivery us".to_string(),
        "lost".to_string(),
        "noise".to_string(),
        "status".to_string(),
    ];
    let mut rows: Vec<Vec<String>> = vec![header.to_vec()];
    for run in &doc.runs {
        let series = |name: &str| run.series.get(name).map(|s| s.summary);
        let status = match run.status {
            RunStatus::Completed => "ok".to_string(),
            RunStatus::Interrupted => "interrupted".to_string(),
            RunStatus::Failed => "FAILED".to_string(),
            RunStatus::Unsupported => "unsupported".to_string(),
        };
        if run.status == RunStatus::Unsupported {
            rows.push(vec![
                run.transport.clone(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                status,
            ]);
            continue;
        }
        let send = series("send_call").unwrap_or_default();
        let delivery = series("delivery").unwrap_or_default();
        rows.push(vec![
            run.transport.clone(),
            run.integrity.sent.to_string(),
            send.over_threshold.to_string(),
            us(send.max_ns),
            delivery.over_threshold.to_string(),
            us(delivery.max_ns),
            run.integrity.lost.to_string(),
            if run.noise.ran() { "on" } else { "off" }.to_string(),
            status,
        ]);
    }
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|c| rows.iter().map(|r| r[c].len()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    let host = &doc.host;
    let _ = writeln!(
        out,
        "rtsoak {}: {} {}{}, RT pair on CPUs {} and {} ({} {}), period {} us, {} s per transport",
        doc.command,
        host.kernel_release.as_deref().unwrap_or("unknown kernel"),
        host.arch,
        if host.preempt_rt { " PREEMPT_RT" } else { "" },
        doc.plan.rt.publisher_cpu,
        doc.plan.rt.subscriber_cpu,
        doc.plan.rt.policy.name(),
        doc.plan.rt.publisher_priority,
        us(doc.plan.period_ns),
        doc.plan.duration_ns / 1_000_000_000,
    );
    for row in &rows {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (cell, width))| {
                if i == 0 {
                    format!("{cell:<width$}")
                } else {
                    format!("{cell:>width$}")
                }
            })
            .collect();
        let _ = writeln!(out, "{}", line.join("  ").trim_end());
    }
    for run in doc.runs.iter().filter(|r| r.reason.is_some()) {
        let _ = writeln!(
            out,
            "{}: {}",
            run.transport,
            run.reason.as_deref().unwrap_or("")
        );
    }
    if !doc.caveats.is_empty() {
        let _ = writeln!(out, "What these figures are worth:");
        for caveat in &doc.caveats {
            let _ = writeln!(out, "  - {caveat}");
        }
    }
    out
}
