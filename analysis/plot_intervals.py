#!/usr/bin/env python3
"""Over-threshold counts and maximum latency per interval over a run: places the spikes in time.

One line per transport run (per compare round when there are several), x = time since the
start of that run's measured phase. The figures are the exact per-interval stats rtsoak keeps
beside each interval histogram. Writes intervals.png and intervals.svg and prints every
plotted interval.
"""

from __future__ import annotations

import argparse

from matplotlib.ticker import MaxNLocator

import plotting
from rtsoak_results import HEADLINE_SERIES, format_table, format_us, load_result, series_title


def run_labels(result):
    """(label, transport name, run) per run; a transport run in several rounds gets its round."""
    labelled = []
    for transport in result.measured_transports():
        several_rounds = len(transport.runs) > 1
        for position, run in enumerate(transport.runs, start=1):
            round_number = run.get("round", position)
            label = f"{transport.label} round {round_number}" if several_rounds else transport.label
            labelled.append((label, transport.label, run))
    return labelled


def interval_points(run, name):
    """(start_s, midpoint_s, index, stats) of each interval that has this series."""
    points = []
    for interval in run.get("intervals") or []:
        stats = ((interval.get("series") or {}).get(name) or {}).get("stats")
        if stats is None:
            continue
        start_ns = int(interval.get("start_ns", 0))
        middle_s = (start_ns + int(interval.get("length_ns", 0)) / 2) / 1e9
        points.append((start_ns / 1e9, middle_s, interval.get("index"), stats))
    return points


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("result", metavar="RESULT", help="result.json or the directory holding it")
    parser.add_argument(
        "--series", default=",".join(HEADLINE_SERIES), help="comma-separated series, one column each (default: %(default)s)"
    )
    plotting.add_output_argument(parser)
    args = parser.parse_args()

    print(render(load_result(args.result), plotting.parse_series(args.series), args.output_dir))


def render(result, series_names, output_dir) -> str:
    """Write intervals.png and .svg into output_dir; return the table of the plotted intervals."""
    fig, axes = plotting.plt.subplots(
        2, len(series_names), figsize=(5.5 * len(series_names), 7), squeeze=False, sharex=True, layout="constrained"
    )
    rows = []
    labelled = run_labels(result)
    for column, name in enumerate(series_names):
        max_ax, over_ax = axes[0][column], axes[1][column]
        for index, (label, transport, run) in enumerate(labelled):
            points = interval_points(run, name)
            if not points:
                continue
            color = plotting.transport_color(transport, index)
            style = "-" if "round" not in label or label.endswith("round 1") else "--"
            middles = [p[1] for p in points]
            maxima_us = [p[3].get("max_ns", 0) / 1000.0 if p[3].get("count") else float("nan") for p in points]
            # An interval without samples (the short one after the end) says nothing: no point.
            overs = [p[3].get("over_threshold", 0) if p[3].get("count") else float("nan") for p in points]
            max_ax.plot(middles, maxima_us, style, marker="o", markersize=3, color=color, label=label)
            over_ax.plot(middles, overs, style, marker="o", markersize=3, color=color, label=label)
            for start_s, _, interval_index, stats in points:
                rows.append(
                    [label, name, interval_index, f"{start_s:.3f}", stats.get("count", 0),
                     stats.get("over_threshold", 0), format_us(stats.get("max_ns", 0))]
                )
        plotting.mark_threshold(max_ax, result.threshold_ns, orientation="horizontal")
        plotting.log_axis_us(max_ax.yaxis)
        max_ax.set_ylabel("longest in interval (us, log scale)")
        max_ax.set_title(f"{series_title(name)}: maximum per interval")
        threshold_text = f"> {result.threshold_ns / 1000:g} us" if result.threshold_ns else "over threshold"
        over_ax.set_ylabel(f"samples {threshold_text} in interval")
        over_ax.set_title(f"{series_title(name)}: over threshold per interval")
        over_ax.set_xlabel("time since start of measured phase (s)")
        over_ax.set_ylim(bottom=0, top=max(over_ax.get_ylim()[1], 1))
        over_ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        for ax in (max_ax, over_ax):
            ax.grid(True, alpha=0.3)
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize="small")
    fig.suptitle(f"Spikes over time ({result.label})")
    plotting.save_figure(fig, output_dir, "intervals", [result])
    return format_table(["label", "series", "interval", "start_s", "count", "over_threshold", "max_us"], rows)


if __name__ == "__main__":
    plotting.run_main(main)
