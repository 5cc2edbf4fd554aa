#!/usr/bin/env python3
"""One-page HTML report of a result: the comparison table and every plot, readable on a phone.

Writes DIR/report.html beside histogram, percentiles and intervals (PNG shown, SVG linked), and
with --baseline the baseline-vs-new comparison. Prints the comparison table it rendered.
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
import plotting
from rtsoak_results import HEADLINE_SERIES, Result, format_table, load_result
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
    plot_histogram.render([result], series, output_dir)
    plot_percentiles.render([result], series, output_dir)
    plot_intervals.render(result, series, output_dir)
    figures = [
        figure_html("histogram", "Latency histogram per transport: log counts, threshold dashed"),
        figure_html("percentiles", "Latency by percentile; dots are the exact maxima"),
        figure_html("intervals", "Maximum and over-threshold count per interval: where the spikes fall in time"),
    ]
    if baseline is not None:
        compare_results.render(baseline, result, output_dir)
        figures.append(figure_html("compare", f"Baseline {baseline.label} (dashed, hatched) vs this result"))
    caveats = "".join(f"<li>{html.escape(c)}</li>" for c in result.caveats)
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>rtsoak report: {html.escape(result.label)}</title><style>{STYLE}</style></head>
<body>
<h1>rtsoak report: {html.escape(result.label)}</h1>
<p class="facts">{facts_html(result)}</p>
<h2>Comparison (T = {html.escape(threshold_text(result))})</h2>
{table_html(result_rows(result))}
<h2>What these figures are worth</h2>
<ul class="caveats">{caveats or "<li>no caveats recorded</li>"}</ul>
<h2>Plots</h2>
{"".join(figures)}
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
