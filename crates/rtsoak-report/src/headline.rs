//! The headline view, what `run`, `compare` and `report` print by default: the answer first, in
//! one screen as wide as the terminal, at most [`WIDEST`] columns, and [`NARROWEST`] where its
//! width is unknown or narrower (a Jetson's serial console, a tmux pane). One table in the shape RT engineers publish (per
//! transport: messages, missed periods, lost, send calls and deliveries over the threshold per
//! million with their exact 95 % interval, the longest of each, status), the decision in
//! sentences made from the figures ([`super::decision`]), the verdict with every reason,
//! and the caveats that change the figures most, ranked and folded, with a count of the rest;
//! with `--floor`, the harness against its floor ([`super::floor`]). `--details` adds every
//! other table.
//!
//! Pure: a [`ResultDoc`] in, text out; the layout is shared by the terminal and Markdown. The
//! text is built from the result as it is; the two writers ([`wrap`] and [`table`] for the
//! terminal, [`markdown`] with the Markdown escape) escape every line and cell they write.

use std::fmt::Write;

use super::comparison::{not_run_word, status_word, title};
use super::decision::{per_million, sentence};
use super::escape::{markdown as escape, terminal};
use super::journal::{VerdictParts, verdict_parts};
use super::text::{grouped, us};
use super::why;
use rtsoak_analysis::judge::decision::decide;
use rtsoak_analysis::merge::{TransportRuns, by_transport};
use rtsoak_analysis::stats::clopper_pearson_95;
use rtsoak_record::result::decision::{Decision, MainCause};
use rtsoak_record::result::verdict::Verdict;
use rtsoak_record::result::{ResultDoc, RunKey, RunStatus};
use rtsoak_record::{Caveat, Series, SeriesKey};

/// Widest line of the headline view, however wide the terminal: prose is wrapped to the width
/// and the table fits it.
pub(crate) const WIDEST: usize = 100;
/// The width where the terminal's is unknown (a file, a pipe) or narrower: 80 columns, a serial
/// console's. Where the table does not fit, its figures and its integrity are two tables.
pub(crate) const NARROWEST: usize = 80;
/// Caveats the headline shows (after folding); the rest are counted.
const CAVEATS_SHOWN: usize = 3;

/// Everything the headline shows, as text.
pub(crate) struct Headline {
    /// The command, kernel, RT pair, period and duration.
    pub title: String,
    /// Group labels over the figure columns (`send calls >100.0us` over its two columns).
    pub groups: [String; 2],
    /// Column names, then one row per measured transport.
    pub header: Vec<String>,
    /// ...
    pub rows: Vec<Vec<String>>,
    /// The transports that were not measured, and why, in one line (none when all were).
    pub not_measured: Option<String>,
    /// The decision: one sentence per series, then one per explained transport.
    pub decision: Vec<String>,
    /// The verdict line and one line per reason.
    pub verdict: Vec<String>,
    /// The caveats shown, folded, most serious first.
    pub caveats: Vec<String>,
    /// How many more caveats `--details` lists.
    pub caveats_hidden: usize,
}

/// Columns of a row: transport, messages, missed, lost, then per series (rate, longest), then
/// status. The transport is the one text column.
const COLUMNS: usize = 9;

/// Build the headline of `doc` (its stored decision, or one derived from it for results saved
/// without); its advice names rtsoak as `rtsoak` (`rtsoak probe`), the command the reader types
/// where they are (`cargo run --release --` in a source tree).
pub(crate) fn headline(doc: &ResultDoc, rtsoak: &str) -> Headline {
    let merged = by_transport(doc);
    let threshold = format!(">{}us", us(doc.plan.threshold_ns));
    let decision: Decision = doc.decision.clone().unwrap_or_else(|| decide(doc));
    let (measured, not_run): (Vec<&TransportRuns<'_>>, Vec<&TransportRuns<'_>>) = merged
        .iter()
        .partition(|t| t.status != RunStatus::Unsupported);
    let not_measured = (!not_run.is_empty()).then(|| {
        let names: Vec<String> = not_run
            .iter()
            .map(|t| format!("{} ({})", t.label, not_run_word(doc, t.transport)))
            .collect();
        format!(
            "Not measured: {}; `{rtsoak} probe` says why.",
            names.join(", ")
        )
    });
    let mut lines: Vec<String> = decision
        .series
        .iter()
        .map(|s| sentence(s, decision.threshold_ns, decision.alpha))
        .collect();
    lines.extend(cause_lines(&decision.causes));
    let (caveats, caveats_hidden) = top_caveats(&doc.caveats);
    Headline {
        title: title(doc),
        groups: [
            format!("send calls {threshold}"),
            format!("deliveries {threshold}"),
        ],
        header: [
            "transport",
            "messages",
            "missed",
            "lost",
            "per M (95% CI)",
            "longest",
            "per M (95% CI)",
            "longest",
            "status",
        ]
        .map(str::to_string)
        .to_vec(),
        rows: measured.iter().map(|t| row(t)).collect(),
        not_measured,
        decision: lines,
        verdict: doc
            .verdict
            .as_ref()
            .map(|v| {
                let mut lines = folded_verdict(v);
                lines.extend(break_whys(doc));
                lines
            })
            .unwrap_or_default(),
        caveats,
        caveats_hidden,
    }
}

/// The main causes, one line per series and cause: transports whose spikes share their main
/// cause are named together, each with its share (and median), so six transports held back by
/// the same thing take one line, not six.
fn cause_lines(causes: &[MainCause]) -> Vec<String> {
    grouped(causes, |c| (c.series, c.cause.as_ref()))
        .into_iter()
        .map(|((series, main), members)| {
            let name = why::cause_or_unexplained(main);
            if let [one] = members.as_slice() {
                return main_cause(one, &name);
            }
            let each: Vec<String> = members
                .iter()
                .map(|c| {
                    let median = c
                        .median_us
                        .map_or(String::new(), |us| format!(", median {us} us"));
                    format!("{} {:.0} %{median}", c.label, c.share_percent)
                })
                .collect();
            format!(
                "{} spikes, main cause {name}: {} (share of each one's kept spikes)",
                series.name().replace('_', " "),
                each.join("; ")
            )
        })
        .collect()
}

/// `futex: 83 % of 1364 delivery spikes (1000 kept): <cause> (median 353 us)`, or the line a
/// version 2 result holds.
fn main_cause(c: &MainCause, name: &str) -> String {
    if let Some(sentence) = &c.sentence {
        return sentence.clone();
    }
    let median = c
        .median_us
        .map_or(String::new(), |us| format!(" (median {us} us)"));
    let kept = if c.kept < c.over_threshold {
        format!(" ({} kept)", c.kept)
    } else {
        String::new()
    };
    format!(
        "{}: {:.0} % of {} {} spikes{kept}: {name}{median}",
        c.label,
        c.share_percent,
        c.over_threshold,
        c.series.name().replace('_', " ")
    )
}

/// Why each `--break-on` sample was late, where the explainer says: the question a break asks,
/// answered under the failure it caused.
fn break_whys(doc: &ResultDoc) -> Vec<String> {
    doc.runs
        .iter()
        .filter_map(|run| Some((run, run.explanation.as_ref()?.break_event.as_ref()?)))
        .map(|(run, event)| {
            format!(
                "  why: {}: {}",
                RunKey::of(run).label(),
                why::why(&event.why)
            )
        })
        .collect()
}

/// The verdict's lines as the journal has them, with reasons of one kind folded: the first in
/// full, then the other transports it applies to (six transports that each missed most of
/// their periods are one reason, not six paragraphs).
fn folded_verdict(verdict: &Verdict) -> Vec<String> {
    let VerdictParts {
        head: mut lines,
        inconclusive: reasons,
        regressions: rest,
    } = verdict_parts(verdict);
    let kinds = grouped(&verdict.inconclusive, |reason| reason.kind);
    if kinds.len() == reasons.len() {
        lines.extend(reasons);
    } else {
        for (_, same) in kinds {
            let others: Vec<String> = same[1..]
                .iter()
                .map(|reason| {
                    RunKey {
                        transport: reason.transport.as_deref().unwrap_or(""),
                        ring_setup: reason.ring_setup,
                    }
                    .label()
                })
                .collect();
            let more = match others.len() {
                0 => String::new(),
                _ => format!(" (the same for {})", others.join(", ")),
            };
            lines.push(format!("  inconclusive: {}{more}", same[0].message));
        }
    }
    lines.extend(rest);
    lines
}

fn row(t: &TransportRuns<'_>) -> Vec<String> {
    let i = &t.integrity;
    let mut row = vec![
        t.label.clone(),
        i.sent.to_string(),
        i.missed_periods.to_string(),
        i.lost.to_string(),
    ];
    for series in [Series::SendCall, Series::Delivery] {
        match t.series.get(&SeriesKey::Rt(series)).map(|s| s.summary) {
            Some(s) if s.count > 0 => {
                let rate = s.over_threshold_per_million();
                let cell = match clopper_pearson_95(s.over_threshold, s.count) {
                    Some(ci) => format!(
                        "{} ({}-{})",
                        compact(rate),
                        compact(ci.low * 1e6),
                        compact(ci.high * 1e6)
                    ),
                    None => compact(rate),
                };
                row.push(cell);
                row.push(us(s.max_ns));
            }
            _ => row.extend(["-".to_string(), "-".to_string()]),
        }
    }
    row.push(status_word(t.status, i).to_string());
    debug_assert_eq!(row.len(), COLUMNS);
    row
}

/// A rate per million as the table shows it: [`per_million`], with thousands as `k` from
/// 10 000 on, so a column stays narrow whatever the machine (`2.5`, `5264`, `248k`).
fn compact(value: f64) -> String {
    if value >= 10_000.0 {
        format!("{:.0}k", value / 1e3)
    } else {
        per_million(value)
    }
}

/// The caveats folded by kind (several of one kind become its first sentence with a count of
/// the others), the most serious first; the first [`CAVEATS_SHOWN`] with their severity, and
/// how many are left.
fn top_caveats(caveats: &[Caveat]) -> (Vec<String>, usize) {
    let mut folded: Vec<(&Caveat, usize)> = grouped(caveats, |c| &c.kind)
        .into_iter()
        .map(|(_, same)| (same[0], same.len() - 1))
        .collect();
    folded.sort_by_key(|(c, _)| c.severity);
    let shown = folded
        .iter()
        .take(CAVEATS_SHOWN)
        .map(|(c, more)| {
            let more = match more {
                0 => String::new(),
                n => format!(" (and {n} more like it)"),
            };
            format!("[{}] {}{more}", c.severity.word(), c.text)
        })
        .collect();
    (shown, folded.len().saturating_sub(CAVEATS_SHOWN))
}

/// The headline for a terminal, in lines of at most `width` columns (between [`NARROWEST`] and
/// [`WIDEST`]), naming rtsoak as `rtsoak` (see [`headline`]).
pub(crate) fn render(doc: &ResultDoc, width: usize, rtsoak: &str) -> String {
    let h = headline(doc, rtsoak);
    let mut out = String::new();
    wrap(&mut out, &h.title, "", width);
    let _ = writeln!(out);
    table(&mut out, &h, width);
    if let Some(line) = &h.not_measured {
        wrap(&mut out, line, "", width);
    }
    if !h.decision.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "The decision (exact test of two rates per pair, p < 0.01; latencies in us):"
        );
        for line in &h.decision {
            wrap(&mut out, line, "  ", width);
        }
    }
    if !h.verdict.is_empty() {
        let _ = writeln!(out);
        for line in &h.verdict {
            let indent = if line.starts_with("  ") { "  " } else { "" };
            wrap(&mut out, line.trim_start(), indent, width);
        }
    }
    if !h.caveats.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(out, "What these figures are worth, most serious first:");
        for caveat in &h.caveats {
            wrap(&mut out, &format!("- {caveat}"), "  ", width);
        }
        if h.caveats_hidden > 0 {
            let _ = writeln!(
                out,
                "  and {} more caveats: `--details` lists every one, and every other table",
                h.caveats_hidden
            );
        }
    }
    // With `--floor`: how far above its floor each figure is, after what the figures are worth.
    out.push_str(&super::floor::render(doc));
    out
}

/// The headline as GitHub Markdown.
pub(crate) fn markdown(doc: &ResultDoc) -> String {
    let h = headline(doc, "rtsoak");
    let mut out = String::new();
    let _ = writeln!(out, "{}\n", escape(&h.title));
    let header: Vec<String> = h
        .header
        .iter()
        .enumerate()
        .map(|(i, name)| match i {
            4 | 5 => format!("{}: {name}", h.groups[0]),
            6 | 7 => format!("{}: {name}", h.groups[1]),
            _ => name.clone(),
        })
        .collect();
    super::markdown::header_and_rows(&mut out, &header, &h.rows);
    if let Some(not_measured) = &h.not_measured {
        let _ = writeln!(out, "\n{}", escape(not_measured));
    }
    if !h.decision.is_empty() {
        let _ = writeln!(
            out,
            "\n**The decision** (exact test of two rates per pair, p < 0.01):\n"
        );
        for sentence in &h.decision {
            let _ = writeln!(out, "- {}", escape(sentence));
        }
    }
    if let Some((first, reasons)) = h.verdict.split_first() {
        let _ = writeln!(out, "\n**{}**\n", escape(first));
        for reason in reasons {
            let _ = writeln!(out, "- {}", escape(reason.trim_start()));
        }
    }
    if !h.caveats.is_empty() {
        let _ = writeln!(out, "\nWhat these figures are worth, most serious first:\n");
        for caveat in &h.caveats {
            let _ = writeln!(out, "- {}", escape(caveat));
        }
        if h.caveats_hidden > 0 {
            let _ = writeln!(out, "- and {} more (all of them below)", h.caveats_hidden);
        }
    }
    out
}

/// Which of a row's columns one table shows, the spaces before each (two between groups, one
/// inside a group: messages, missed and lost; a rate and its longest), and which of them start
/// a group, under [`Headline::groups`] in order.
struct Layout {
    columns: &'static [usize],
    gaps: &'static [usize],
    groups: &'static [usize],
}

/// Every column in one table: what a terminal of [`WIDEST`] columns shows.
const ONE_TABLE: Layout = Layout {
    columns: &[0, 1, 2, 3, 4, 5, 6, 7, 8],
    gaps: &[0, 2, 1, 1, 2, 1, 2, 1, 2],
    groups: &[4, 6],
};
/// Where one table does not fit: the figures first, the answer...
const FIGURES: Layout = Layout {
    columns: &[0, 4, 5, 6, 7],
    gaps: &[0, 2, 1, 2, 1],
    groups: &[1, 3],
};
/// ... then what each transport's figures rest on, and its status.
const INTEGRITY: Layout = Layout {
    columns: &[0, 1, 2, 3, 8],
    gaps: &[0, 2, 1, 1, 2],
    groups: &[],
};

/// The table, or where it is wider than `width` its figures and its integrity as two tables.
fn table(out: &mut String, h: &Headline, width: usize) {
    let one = laid_out(h, &ONE_TABLE);
    if one.lines().all(|line| line.chars().count() <= width) {
        out.push_str(&one);
    } else {
        out.push_str(&laid_out(h, &FIGURES));
        let _ = writeln!(out);
        out.push_str(&laid_out(h, &INTEGRITY));
    }
}

/// One table of `layout`'s columns: group labels over their two columns, the header, the
/// rows; the transport left, figures right.
fn laid_out(h: &Headline, layout: &Layout) -> String {
    let rows: Vec<Vec<&str>> = std::iter::once(&h.header)
        .chain(&h.rows)
        .map(|row| layout.columns.iter().map(|&c| row[c].as_str()).collect())
        .collect();
    let (lines, widths) = super::details::aligned(&rows, layout.gaps);
    let mut out = String::new();
    if !layout.groups.is_empty() {
        // Each group label centred over its two columns (and the gap between them).
        let start = |column: usize| {
            widths[..column].iter().sum::<usize>() + layout.gaps[..=column].iter().sum::<usize>()
        };
        let mut groups = String::new();
        for (label, &column) in h.groups.iter().zip(layout.groups) {
            let span = widths[column] + layout.gaps[column + 1] + widths[column + 1];
            let pad = span.saturating_sub(label.chars().count()) / 2;
            let at = start(column) + pad;
            let used = groups.chars().count();
            groups.push_str(&" ".repeat(at.saturating_sub(used)));
            groups.push_str(label);
        }
        let _ = writeln!(out, "{}", groups.trim_end());
    }
    for line in lines {
        let _ = writeln!(out, "{line}");
    }
    out
}

/// `text`, escaped for the terminal, wrapped at `width` columns on spaces, continuation lines indented by `indent` and
/// two more spaces; `p < 0.01` and a command in backticks (`` `rtsoak probe` ``) are never
/// split.
fn wrap(out: &mut String, text: &str, indent: &str, width: usize) {
    const GLUE: char = '\u{1}';
    let mut in_code = false;
    // A control character: none is left in the escaped text to be mistaken for it.
    let glued: String = terminal(text)
        .replace("p < ", &format!("p{GLUE}<{GLUE}"))
        .chars()
        .map(|c| {
            in_code ^= c == '`';
            if in_code && c == ' ' { GLUE } else { c }
        })
        .collect();
    let mut line = String::from(indent);
    let continuation = format!("{indent}  ");
    for word in glued.split(' ').map(|w| w.replace(GLUE, " ")) {
        let fresh = line.trim().is_empty();
        if !fresh && line.chars().count() + 1 + word.chars().count() > width {
            let _ = writeln!(out, "{}", line.trim_end());
            line = continuation.clone();
        } else if !fresh {
            line.push(' ');
        }
        line.push_str(&word);
    }
    let _ = writeln!(out, "{}", line.trim_end());
}

#[cfg(test)]
#[path = "headline_tests.rs"]
mod tests;
