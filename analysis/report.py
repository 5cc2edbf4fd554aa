#!/usr/bin/env python3
"""One-page HTML report of a result, readable on a phone, telling the story top-down as rtsoak's
headline view does: the verdict and its reasons, the headline table (per transport: messages,
missed, lost, send calls and deliveries over the threshold per million with their 95 % interval,
the longest of each, status), the decision rtsoak stated from the figures, the caveats most
serious first, every plot, then the details table.

Writes DIR/report.html beside histogram, percentiles and intervals (PNG shown, SVG linked), and
with --baseline the baseline-vs-new comparison. Prints the details table it rendered.
"""

from __future__ import annotations

import argparse
import html
import os
import sys
import tempfile
from pathlib import Path

import compare_results
import plot_histogram
import plot_intervals
import plot_percentiles
import plot_tail
import plotting
from rtsoak_results import HEADLINE_SERIES, Result, cause_words, format_table, load_result
from summary_table import COLUMNS, result_rows, threshold_text

STYLE = """
body { font-family: system-ui, -apple-system, sans-serif; margin: 0 auto; padding: 12px; max-width: 1100px;
       color: #222; line-height: 1.4; }
h1 { font-size: 1.35em; margin: 0.2em 0; } h2 { font-size: 1.1em; margin-top: 1.4em; }
.facts { color: #555; font-size: 0.9em; }
.table-wrap { overflow-x: auto; -webkit-overflow-scrolling: touch; }
table { border-collapse: collapse; font-size: 0.85em; white-space: nowrap; }
th, td { border: 1px solid #ccc; padding: 4px 6px; text-align: right; }
th:first-child, td:first-child { text-align: left; position: sticky; left: 0; background: #fff; }
th { background: #f2f2f2; }
td.bad { color: #b00020; font-weight: 600; }
table.headline { white-space: normal; } table.headline th { white-space: normal; max-width: 9em; }
h2.verdict.pass { color: #1b5e20; } h2.verdict.fail { color: #b00020; }
h2.verdict.inconclusive, h2.verdict.qualified { color: #8a5a00; }
li.invalidates { color: #b00020; } li.distorts { color: #8a5a00; } li.detail { color: #555; }
img { max-width: 100%; height: auto; display: block; margin: 6px 0; }
figure { margin: 0 0 1.2em 0; } figcaption { font-size: 0.85em; color: #555; }
ul.caveats { padding-left: 1.2em; font-size: 0.9em; }
/* On a phone each transport becomes a card of "figure: value" lines instead of a wide table. */
@media (max-width: 600px) {
  table, tbody, tr, td { display: block; width: 100%; box-sizing: border-box; }
  tr:first-child { display: none; }
  tr { margin-bottom: 10px; border: 1px solid #ccc; border-radius: 6px; }
  td { border: none; border-bottom: 1px solid #eee; display: flex; justify-content: space-between; }
  td::before { content: attr(data-label); color: #555; text-align: left; padding-right: 1em; }
  td:first-child { position: static; background: #f2f2f2; font-weight: 600; }
}
"""

BAD_WHEN_NONZERO = {"sends_over", "deliveries_over", "lost"}
HEADLINE_COLUMNS = ("transport", "messages", "missed", "lost", "send calls > T per M (95% CI)", "longest send us",
                    "deliveries > T per M (95% CI)", "longest delivery us", "status")


def per_million(value: float) -> str:
    """rtsoak's spelling of a rate per million: 0, 2.50, 25.0, 5264, 248k."""
    if value == 0:
        return "0"
    if value >= 10_000:
        return f"{value / 1000:.0f}k"
    return f"{value:.2f}" if value < 10 else f"{value:.1f}" if value < 100 else f"{value:.0f}"


def headline_rows(result: Result) -> list[list[str]]:
    """One row per measured transport, from the decision rtsoak recorded (its rates and exact
    intervals) and the merged figures; a figure rtsoak does not have is "-"."""
    decision = result.data.get("decision") or {}
    rates = {}
    for series in decision.get("series") or []:
        for rate in series.get("ranking") or []:
            rates[(series["series"], rate["label"])] = rate
    rows = []
    for transport in result.measured_transports():
        missed = sum(int((run.get("integrity") or {}).get("missed_periods", 0)) for run in transport.runs)
        row = [transport.label, str(transport.sent), str(missed), str(transport.lost)]
        for name in ("send_call", "delivery"):
            rate, series = rates.get((name, transport.label)), transport.get(name)
            row.append(f"{per_million(rate['per_million'])} ({per_million(rate['low_per_million'])}-"
                       f"{per_million(rate['high_per_million'])})" if rate else "-")
            row.append(f"{series.max_ns / 1000:.1f}" if series.count else "-")
        row.append(transport.status_label)
        rows.append(row)
    return rows


def headline_html(result: Result) -> str:
    head = "".join(f"<th>{html.escape(title)}</th>" for title in HEADLINE_COLUMNS)
    body = "".join(
        "<tr>" + "".join(f'<td data-label="{html.escape(t)}">{html.escape(c)}</td>' for t, c in zip(HEADLINE_COLUMNS, row))
        + "</tr>" for row in headline_rows(result))
    return f'<table class="headline"><tr>{head}</tr>{body}</table>'


def verdict_html(result: Result) -> str:
    verdict = result.data.get("verdict") or {}
    status = str(verdict.get("status") or ("pass" if verdict.get("pass") else "unknown")).upper()
    reasons = [f"failure: {f.get('message')}" for f in verdict.get("failures") or []]
    reasons += [f"breach: {b.get('message')}" for b in verdict.get("breaches") or []]
    reasons += [f"inconclusive: {i.get('message')}" for i in verdict.get("inconclusive") or []]
    items = "".join(f"<li>{html.escape(r)}</li>" for r in reasons)
    accepted = {a.get("condition") for a in verdict.get("accepted") or []}
    css = status.lower()
    if status == "PASS" and accepted:
        # A development profile's PASS is no clean PASS: it says what it is not, in amber.
        css, status = "qualified", qualified_pass(accepted)
    return f'<h2 class="verdict {css}">Verdict: {html.escape(status)}</h2>' + (f"<ul>{items}</ul>" if items else "")


def qualified_pass(accepted: set) -> str:
    """What rtsoak's verdict line says of a PASS that accepted invalidating conditions."""
    qualifiers = []
    if "kernel.preempt-rt" in accepted:
        qualifiers.append("on a non-RT kernel")
    if "layout.noise-shares-rt-cpu" in accepted:
        qualifiers.append("with noise on the RT CPUs")
    if qualifiers == ["on a non-RT kernel"]:
        return "PASS on a non-RT kernel: these figures describe this kernel"
    described = "these figures describe this machine as it is set up, not real-time conditions"
    return f"PASS {' '.join(qualifiers) or 'with accepted conditions'}: {described}"


def caveat_html(caveat) -> str:
    """One caveat with its severity (version 1 results held sentences only)."""
    if not isinstance(caveat, dict):
        return f"<li>{html.escape(str(caveat))}</li>"
    severity = str(caveat.get("severity", "detail"))
    text = html.escape(str(caveat.get("text", "")))
    return f'<li class="{html.escape(severity)}">[{html.escape(severity)}] {text}</li>'


def decision_html(result: Result) -> str:
    decision = result.data.get("decision") or {}
    sentences = [s.get("sentence", "") for s in decision.get("series") or []]
    sentences += [c.get("sentence") or main_cause_sentence(c) for c in decision.get("causes") or []]
    if not sentences:
        return "<p>no decision recorded (a result written before rtsoak stated one: `rtsoak report` derives it)</p>"
    return "<ul class=\"decision\">" + "".join(f"<li>{html.escape(s)}</li>" for s in sentences) + "</ul>"


def main_cause_sentence(cause: dict) -> str:
    """`futex: 83 % of 1364 delivery spikes (1000 kept): <cause> (median 353 us)`, as rtsoak
    says it (version 3 keeps the fields, not the sentence)."""
    kept = f" ({cause['kept']} kept)" if cause["kept"] < cause["over_threshold"] else ""
    median = f" (median {cause['median_us']} us)" if cause.get("median_us") is not None else ""
    series = cause["series"].replace("_", " ")
    return (
        f"{cause['label']}: {cause['share_percent']:.0f} % of {cause['over_threshold']} {series} spikes{kept}: "
        f"{cause_words(cause.get('cause'))}{median}"
    )


def not_measured_html(result: Result) -> str:
    missing = [t.label for t in result.transports.values() if not t.measured]
    return f"<p>Not measured: {html.escape(', '.join(missing))}.</p>" if missing else ""


def table_html(rows: list[dict]) -> str:
    head = "".join(f"<th>{html.escape(title)}</th>" for _, title in COLUMNS)
    body = []
    for row in rows:
        cells = []
        for key, title in COLUMNS:
            value = row[key]
            bad = key in BAD_WHEN_NONZERO and isinstance(value, int) and value != 0
            attributes = f'data-label="{html.escape(title)}"' + (' class="bad"' if bad else "")
            cells.append(f"<td {attributes}>{html.escape(str(value))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f'<div class="table-wrap"><table><tr>{head}</tr>{"".join(body)}</table></div>'


def figure_html(name: str, caption: str) -> str:
    return (
        f'<figure><a href="{name}.svg"><img src="{name}.png" alt="{html.escape(caption)}"></a>'
        f"<figcaption>{html.escape(caption)} (tap for SVG)</figcaption></figure>"
    )


def facts_html(result: Result) -> str:
    data, host, plan = result.data, result.data.get("host") or {}, result.data.get("plan") or {}
    rt = "PREEMPT_RT" if host.get("preempt_rt") else "not PREEMPT_RT"
    duration_s = (plan.get("duration_ns") or 0) / 1e9
    period_us = (plan.get("period_ns") or 0) / 1000
    facts = [
        f"{data.get('command', '?')} started {data.get('started_at', '?')}",
        f"{host.get('hostname', '?')}: {host.get('kernel_release', '?')} {host.get('arch', '?')}, {rt}",
        f"profile {plan.get('profile', '?')}, {duration_s:g} s per run, period {period_us:g} us, "
        f"threshold {threshold_text(result)}",
    ]
    if data.get("interrupted"):
        facts.append("interrupted: the runs so far are shown")
    return "<br>".join(html.escape(fact) for fact in facts)


def render_report(result: Result, baseline: Result | None, output_dir: Path) -> Path:
    """Write every plot and report.html into output_dir; return the report's path."""
    series = list(HEADLINE_SERIES)
    # The page shows the caveats once, above the plots: their captions say only where the
    # figures came from.
    plot_histogram.render([result], series, output_dir, caveats=False)
    plot_percentiles.render([result], series, output_dir, caveats=False)
    plot_intervals.render(result, series, output_dir, caveats=False)
    figures = [
        figure_html("histogram", "Latency histogram per transport: log counts, threshold dashed"),
        figure_html("percentiles", "Latency by percentile; dots are the exact maxima"),
        figure_html("intervals", "Maximum and over-threshold count per interval: where the spikes fall in time"),
    ]
    plot_tail.render([result], output_dir, caveats=False)
    if (output_dir / "tail.png").is_file():
        figures.append(
            figure_html("tail", "Tail estimates where rtsoak gives them: return level per span with its 95 % "
                        "interval, and the fit's QQ plot; a refused estimate shows its cluster maxima and why")
        )
    if baseline is not None:
        compare_results.render(baseline, result, output_dir, caveats=False)
        figures.append(figure_html("compare", f"Baseline {baseline.label} (dashed, hatched) vs this result"))
    caveats = "".join(caveat_html(c) for c in result.data.get("caveats") or [])
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>rtsoak report: {html.escape(result.label)}</title><style>{STYLE}</style></head>
<body>
<h1>rtsoak report: {html.escape(result.label)}</h1>
<p class="facts">{facts_html(result)}</p>
{verdict_html(result)}
<h2>The answer (T = {html.escape(threshold_text(result))})</h2>
{headline_html(result)}
{not_measured_html(result)}
<h2>The decision (exact test of two rates per pair, p &lt; 0.01)</h2>
{decision_html(result)}
<h2>What these figures are worth, most serious first</h2>
<ul class="caveats">{caveats or "<li>no caveats recorded</li>"}</ul>
<h2>Plots</h2>
{"".join(figures)}
<h2>Details</h2>
{table_html(result_rows(result))}
</body></html>
"""
    path = output_dir / "report.html"
    # Written beside and renamed into place, so a reader never sees half a report.
    with tempfile.NamedTemporaryFile("w", dir=output_dir, suffix=".tmp", delete=False) as temporary:
        temporary.write(page)
    # Readable by a web server running as another user, like the figures beside it (a temporary
    # file is created 0600).
    os.chmod(temporary.name, 0o644)
    os.replace(temporary.name, path)
    print(f"wrote {path}", file=sys.stderr)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("result", metavar="RESULT", help="result.json or the directory holding it")
    parser.add_argument("--baseline", metavar="RESULT", help="also compare with this earlier result")
    parser.add_argument("-o", "--output-dir", type=Path, required=True, help="directory for report.html and its images")
    args = parser.parse_args()

    result = load_result(args.result)
    baseline = load_result(args.baseline) if args.baseline else None
    args.output_dir.mkdir(parents=True, exist_ok=True)
    render_report(result, baseline, args.output_dir)
    rows = result_rows(result)
    print(format_table([key for key, _ in COLUMNS], [[row[key] for key, _ in COLUMNS] for row in rows], left_columns=1))


if __name__ == "__main__":
    plotting.run_main(main)
