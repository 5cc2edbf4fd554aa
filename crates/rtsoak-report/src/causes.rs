//! The lines under the comparison table that say why the spikes happened: per transport and
//! series, how many spikes were kept and explained, and the top causes with their shares,
//! merged over the transport's runs.

use std::collections::BTreeMap;

use rtsoak_analysis::merge::TransportRuns;
use rtsoak_record::SeriesKey;
use rtsoak_record::result::explain::SeriesBlame;

use crate::why;

/// Causes listed per series; the rest are folded into "other causes".
const TOP: usize = 3;

/// The heading and one line per transport and series; none when no run was explained.
pub(crate) fn lines(merged: &[&TransportRuns<'_>], threshold: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for t in merged {
        let explanations: Vec<_> = t
            .runs
            .iter()
            .filter_map(|run| run.explanation.as_ref())
            .collect();
        if explanations.is_empty() {
            continue;
        }
        if let Some(reason) = explanations
            .iter()
            .find_map(|e| e.tracing.unavailable.as_ref())
        {
            lines.push(format!("  {}: spikes not explained: {reason}", t.label));
            continue;
        }
        let mut per_series: BTreeMap<SeriesKey, Vec<&SeriesBlame>> = BTreeMap::new();
        for explanation in &explanations {
            for (&key, blame) in &explanation.series {
                per_series.entry(key).or_default().push(blame);
            }
        }
        let series = per_series
            .into_iter()
            .filter_map(|(key, blames)| Some((key, SeriesBlame::sum(blames)?)));
        for (key, blame) in &series.collect::<Vec<_>>() {
            lines.push(line(&t.label, key.name(), blame, threshold));
        }
        let missing: Vec<&str> = explanations[0]
            .tracing
            .events_missing
            .iter()
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            lines.push(format!(
                "    (this kernel lacks {}: chains that need them are shorter)",
                missing.join(", ")
            ));
        }
    }
    if lines.is_empty() {
        return lines;
    }
    let heading = "Why the spikes happened (kernel trace of each run; a cause covers at least \
                   half of a spike, else it is unexplained):"
        .to_string();
    std::iter::once(heading).chain(lines).collect()
}

fn line(transport: &str, series: &str, blame: &SeriesBlame, threshold: &str) -> String {
    let mut text = format!(
        "  {transport} {series}: {} {threshold}",
        blame.over_threshold
    );
    if blame.kept < blame.over_threshold {
        text += &format!(" ({} kept)", blame.kept);
    }
    if blame.kept == 0 {
        return text;
    }
    text += &format!(", {:.1}% explained", blame.explained_percent());
    let percent_of_kept = |count: u64| 100.0 * count as f64 / blame.kept as f64;
    let mut parts: Vec<String> = blame
        .causes
        .iter()
        .take(TOP)
        .map(|c| {
            format!(
                "{:.1}% {} (median {} us)",
                c.share_percent,
                why::cause(&c.cause),
                c.median_us
            )
        })
        .collect();
    let rest: u64 = blame.causes.iter().skip(TOP).map(|c| c.count).sum();
    if rest > 0 {
        parts.push(format!("{:.1}% other causes", percent_of_kept(rest)));
    }
    if blame.unexplained > 0 {
        let mut text = format!("{:.1}% unexplained", percent_of_kept(blame.unexplained));
        if blame.unexplained_on_cpu > 0 {
            text += &format!(
                " ({:.1}% with the RT task on its CPU and nothing in the trace holding it back)",
                percent_of_kept(blame.unexplained_on_cpu)
            );
        }
        parts.push(text);
    }
    format!("{text}: {}", parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsoak_record::result::cause::Cause;
    use rtsoak_record::result::explain::CauseShare;

    #[test]
    fn a_series_line_gives_counts_shares_top_causes_and_the_unexplained() {
        let cause = |name: &str, count| CauseShare {
            cause: Cause::Softirq {
                action: name.to_string(),
            },
            count,
            share_percent: 0.0,
            median_us: 480,
        };
        let run = SeriesBlame {
            over_threshold: 1200,
            kept: 1000,
            explained: 970,
            unexplained: 30,
            unexplained_on_cpu: 20,
            causes: vec![
                cause("TIMER", 900),
                cause("NET_RX", 40),
                cause("RCU", 20),
                cause("SCHED", 10),
            ],
        };
        let total = SeriesBlame::sum([&run]).unwrap();
        assert_eq!(
            line("futex", "send_call", &total, ">100us"),
            "  futex send_call: 1200 >100us (1000 kept), 97.0% explained: 90.0% softirq TIMER on \
             its CPU (median 480 us); 4.0% softirq NET_RX on its CPU (median 480 us); 2.0% \
             softirq RCU on its CPU (median 480 us); 1.0% other causes; 3.0% unexplained (2.0% \
             with the RT task on its CPU and nothing in the trace holding it back)"
        );
        let total = SeriesBlame::sum([&run, &run]).unwrap();
        assert_eq!((total.kept, total.causes[0].count), (2000, 1800));
        assert_eq!(total.causes[0].share_percent, 90.0);
    }
}
