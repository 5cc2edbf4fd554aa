#!/usr/bin/env python3
"""Why the spikes happened: per transport and series, the explainer's causes as shares of the kept spikes.

Reads rtsoak result.json files (or their directories) whose runs were traced (`explanation` in
each run; see docs/explain.md). One horizontal bar per transport and series (send call,
delivery), split into the most frequent causes, the other causes and the unexplained spikes;
compare rounds of a transport are added up. Writes causes.png and causes.svg, and prints per
transport, series and cause the count, the share of the kept spikes and the median time the
cause held the RT task back. A result whose runs were not explained is refused with what to do.
"""

from __future__ import annotations

import argparse
import textwrap
from collections import defaultdict

import plotting
from rtsoak_results import HEADLINE_SERIES, ResultError, cause_words, format_table, load_results, run_label, series_title

TOP_CAUSES = 4
OTHER = "other causes"
UNEXPLAINED = "unexplained"
UNEXPLAINED_COLOR = "#bbbbbb"
OTHER_COLOR = "#888888"


def blame(transport, series_name):
    """(kept, {cause: (count, median_us of the most frequent run)}, unexplained) over the runs."""
    kept = unexplained = 0
    causes: dict[str, list] = defaultdict(lambda: [0, 0, 0])  # count, median_us, its run's count
    explained_runs = 0
    for run in transport.runs:
        explanation = run.get("explanation")
        if not explanation:
            continue
        explained_runs += 1
        series = (explanation.get("series") or {}).get(series_name) or {}
        kept += int(series.get("kept", 0))
        unexplained += int(series.get("unexplained", 0))
        for cause in series.get("causes", []):
            entry = causes[cause_words(cause["cause"])]
            entry[0] += int(cause["count"])
            if int(cause["count"]) > entry[2]:
                entry[1], entry[2] = int(cause["median_us"]), int(cause["count"])
    return explained_runs, kept, {c: (e[0], e[1]) for c, e in causes.items()}, unexplained


def unavailable(transport) -> str | None:
    for run in transport.runs:
        reason = ((run.get("explanation") or {}).get("tracing") or {}).get("unavailable")
        if reason:
            return reason
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+", metavar="RESULT", help="result.json or the directory holding it")
    parser.add_argument(
        "--series", default=",".join(HEADLINE_SERIES), help="comma-separated series, one bar each (default: %(default)s)"
    )
    plotting.add_output_argument(parser)
    args = parser.parse_args()
    print(render(load_results(args.results), plotting.parse_series(args.series), args.output_dir))


def render(results, series_names, output_dir) -> str:
    """Write causes.png and .svg into output_dir; return the table of the plotted figures."""
    several = len(results) > 1
    bars = []  # (label, {segment: count}, kept)
    rows = []
    refused = []
    for result in results:
        for transport in result.measured_transports():
            label = run_label(transport, result, several)
            reason = unavailable(transport)
            if reason:
                refused.append(f"{label}: not traced ({reason})")
                continue
            for name in series_names:
                runs, kept, causes, unexplained = blame(transport, name)
                if not runs:
                    refused.append(f"{label}: no explanation recorded")
                    break
                ranked = sorted(causes.items(), key=lambda item: (-item[1][0], item[0]))
                segments = {cause: count for cause, (count, _) in ranked[:TOP_CAUSES]}
                other = sum(count for _, (count, _) in ranked[TOP_CAUSES:])
                if other:
                    segments[OTHER] = other
                if unexplained:
                    segments[UNEXPLAINED] = unexplained
                bars.append((f"{label} {series_title(name)}", segments, kept))
                for cause, (count, median_us) in ranked:
                    rows.append([label, name, cause, count, share(count, kept), median_us])
                rows.append([label, name, UNEXPLAINED, unexplained, share(unexplained, kept), "-"])
    if not bars:
        raise ResultError(
            "no run has an explanation of its spikes ("
            + "; ".join(refused or ["none measured"])
            + "): run rtsoak as root, with --explain where every CPU is an RT CPU"
        )
    draw(bars, output_dir, results)
    table = format_table(["label", "series", "cause", "count", "share_%", "median_us"], rows, left_columns=3)
    if refused:
        table += "\n" + "\n".join(f"# {line}" for line in refused)
    return table


def share(count: int, kept: int) -> str:
    return f"{100.0 * count / kept:.1f}" if kept else "0.0"


def draw(bars, output_dir, results) -> None:
    causes = []
    for _, segments, _ in bars:
        causes += [c for c in segments if c not in causes and c not in (OTHER, UNEXPLAINED)]
    # tab20 without its two greys, which mark the other causes and the unexplained.
    palette = [c for i, c in enumerate(plotting.plt.get_cmap("tab20").colors) if i not in (14, 15)]
    colors = {cause: palette[i % len(palette)] for i, cause in enumerate(causes)}
    colors[OTHER] = OTHER_COLOR
    colors[UNEXPLAINED] = UNEXPLAINED_COLOR
    fig, ax = plotting.plt.subplots(figsize=(11, 1.2 + 0.55 * len(bars)), layout="constrained")
    drawn = set()
    for y, (label, segments, kept) in enumerate(bars):
        left = 0.0
        for cause, count in segments.items():
            width = 100.0 * count / kept if kept else 0.0
            legend = "\n".join(textwrap.wrap(cause, 70)) if cause not in drawn else None
            drawn.add(cause)
            ax.barh(y, width, left=left, color=colors[cause], edgecolor="white", label=legend)
            if width >= 6:
                ax.text(left + width / 2, y, f"{width:.0f}%", ha="center", va="center", fontsize="small")
            left += width
        ax.text(101, y, f"{kept} kept", va="center", fontsize="small")
    ax.set_yticks(range(len(bars)), [label for label, _, _ in bars])
    ax.invert_yaxis()
    ax.set_xlim(0, 112)
    ax.set_xticks(range(0, 101, 20))
    ax.set_xlabel("share of the kept spikes (%)")
    ax.set_title("Why the spikes happened (a cause covers at least half of a spike)")
    ax.legend(fontsize="x-small", loc="upper center", bbox_to_anchor=(0.5, -0.35 / max(len(bars), 1) - 0.12), ncol=2)
    plotting.save_figure(fig, output_dir, "causes", results)


if __name__ == "__main__":
    plotting.run_main(main)
