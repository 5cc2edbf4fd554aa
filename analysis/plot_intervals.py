#!/usr/bin/env python3
"""Spikes over time: the longest sample per interval and how many went over the threshold, and
where the result keeps them, every kept spike at its own time.

One line per transport run (per compare round when there are several), x = time since the start
of that run's measured phase. Each interval's figure is a step over the interval's span (an
interval is a span, not an instant), from the exact per-interval stats rtsoak keeps. A run cut
into few intervals (a default 10 s run has one) is not left as one column of dots: the spikes
the result kept (`outliers`, with their times) are drawn as points, and where that list is
complete the over-threshold counts are binned finer than the intervals (about 20 bins per run);
where it is not, the panel's title says the interval is the finest time line the result holds.
Writes intervals.png and intervals.svg and prints every interval.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

import numpy as np
from matplotlib.ticker import MaxNLocator

import plotting
from rtsoak_results import HEADLINE_SERIES, format_table, format_us, load_result, series_title

# With at least this many intervals per run, the intervals are a fine enough time line.
FINE_ENOUGH_INTERVALS = 8
# Bins the over-threshold counts get when they come from the spikes' own times.
TARGET_BINS = 20


def run_labels(result):
    """(label, transport name, run, round position) per run; a transport run in several rounds
    gets its round."""
    labelled = []
    for transport in result.measured_transports():
        several_rounds = len(transport.runs) > 1
        for position, run in enumerate(transport.runs):
            round_number = run.get("round", position + 1)
            label = f"{transport.label} round {round_number}" if several_rounds else transport.label
            labelled.append((label, transport.label, run, position))
    return labelled


def interval_points(run, name):
    """(start_s, length_s, index, stats) of each interval that has this series."""
    points = []
    for interval in run.get("intervals") or []:
        stats = ((interval.get("series") or {}).get(name) or {}).get("stats")
        if stats is None:
            continue
        start_ns = int(interval.get("start_ns", 0))
        points.append((start_ns / 1e9, int(interval.get("length_ns", 0)) / 1e9, interval.get("index"), stats))
    return points


def spikes(run, name):
    """(times_s, values_us) of the kept samples over the threshold, and whether they are all of
    them (the list held every one: nothing dropped, as many as the run counted)."""
    series = (run.get("series") or {}).get(name) or {}
    outliers = series.get("outliers") or []
    times = np.array([o["at_ns"] / 1e9 for o in outliers], dtype=float)
    values = np.array([o["value_ns"] / 1000.0 for o in outliers], dtype=float)
    over = int((series.get("summary") or {}).get("over_threshold", 0))
    complete = not series.get("outliers_dropped") and len(outliers) == over
    return times, values, complete


def nice_width_s(span_s: float) -> float:
    """A round bin width (1, 2 or 5 times a power of ten) giving about TARGET_BINS bins."""
    raw = max(span_s / TARGET_BINS, 1e-3)
    power = 10 ** math.floor(math.log10(raw))
    return next(step * power for step in (1, 2, 5, 10) if step * power >= raw)


@dataclass
class TimeLine:
    """How a series' over-threshold counts are binned in time for one result."""

    fine: bool  # binned from the spikes' own times, finer than the intervals
    width_s: float  # bin width (fine) or the plan's interval
    coarse: bool = False  # few intervals, and no complete spike list to bin finer


def time_line(result, labelled, name) -> TimeLine:
    """Finer bins where the intervals are too few and every run kept all its spikes."""
    interval_s = ((result.data.get("plan") or {}).get("interval_ns") or 0) / 1e9
    runs = [(run, interval_points(run, name)) for _, _, run, _ in labelled]
    runs = [(run, points) for run, points in runs if points]
    if not runs or min(len(points) for _, points in runs) >= FINE_ENOUGH_INTERVALS:
        return TimeLine(False, interval_s)
    if not all(spikes(run, name)[2] for run, _ in runs):
        return TimeLine(False, interval_s, coarse=True)
    span_s = max(p[0] + p[1] for _, points in runs for p in points)
    return TimeLine(True, nice_width_s(span_s))


def draw_run(max_ax, over_ax, run, name, line: TimeLine, color, style, label) -> None:
    """One run: its longest per interval as a step with the interval's span, its kept spikes as
    points, its over-threshold counts per bin as a step."""
    points = interval_points(run, name)
    edges = [p[0] for p in points] + [points[-1][0] + points[-1][1]]
    # An interval without samples (the short one after the end) says nothing: a gap.
    maxima = [p[3].get("max_ns", 0) / 1000.0 if p[3].get("count") else np.nan for p in points]
    max_ax.stairs(maxima, edges, color=color, linestyle=style, linewidth=1.6, label=label, baseline=None)
    times, values, _ = spikes(run, name)
    if len(times):
        max_ax.scatter(times, values, s=7, color=color, alpha=0.45, linewidths=0, label="_spikes")
    if line.fine:
        fine_edges = np.arange(0.0, edges[-1] + line.width_s, line.width_s)
        counts, fine_edges = np.histogram(times, bins=fine_edges)
        over_ax.stairs(counts, fine_edges, color=color, linestyle=style, linewidth=1.4, label=label)
    else:
        overs = [p[3].get("over_threshold", 0) if p[3].get("count") else np.nan for p in points]
        over_ax.stairs(overs, edges, color=color, linestyle=style, linewidth=1.4, label=label, baseline=None)


def style_axes(max_ax, over_ax, result, name, line: TimeLine) -> None:
    plotting.mark_threshold(max_ax, result.threshold_ns, orientation="horizontal")
    plotting.log_axis_us(max_ax.yaxis)
    max_ax.set_ylabel("latency (us, log scale)")
    max_ax.set_title(f"{series_title(name)}: longest per interval (steps)\nand every kept spike (dots)", fontsize="medium")
    threshold_text = f"> {result.threshold_ns / 1000:g} us" if result.threshold_ns else "over threshold"
    if line.fine:
        per = f"{line.width_s:g} s"
        title = f"{series_title(name)}: over threshold per {per}\n(binned from the spikes' own times)"
    else:
        per = f"interval ({line.width_s:g} s)"
        title = f"{series_title(name)}: over threshold per interval"
        if line.coarse:
            title += "\n(the result keeps no finer time line: its spike list is not complete)"
    over_ax.set_ylabel(f"samples {threshold_text} per {per}")
    over_ax.set_title(title, fontsize="medium")
    over_ax.set_xlabel("time since start of measured phase (s)")
    over_ax.set_ylim(bottom=0, top=max(over_ax.get_ylim()[1], 1))
    over_ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    for ax in (max_ax, over_ax):
        ax.grid(True, alpha=0.3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("result", metavar="RESULT", help="result.json or the directory holding it")
    parser.add_argument(
        "--series", default=",".join(HEADLINE_SERIES), help="comma-separated series, one column each (default: %(default)s)"
    )
    plotting.add_output_argument(parser)
    args = parser.parse_args()

    print(render(load_result(args.result), plotting.parse_series(args.series), args.output_dir))


def render(result, series_names, output_dir, caveats: bool = True) -> str:
    """Write intervals.png and .svg into output_dir; return the table of the plotted intervals."""
    fig, axes = plotting.plt.subplots(
        2, len(series_names), figsize=(5.5 * len(series_names), 7), squeeze=False, sharex=True, layout="constrained"
    )
    rows = []
    labelled = run_labels(result)
    for column, name in enumerate(series_names):
        max_ax, over_ax = axes[0][column], axes[1][column]
        line = time_line(result, labelled, name)
        for label, transport, run, position in labelled:
            points = interval_points(run, name)
            if not points:
                continue
            # A ring setup has its line style; rounds of a transport take the next ones.
            if " (" in transport:
                style = plotting.line_style(transport)
            else:
                style = plotting.RESULT_LINESTYLES[position % len(plotting.RESULT_LINESTYLES)]
            draw_run(max_ax, over_ax, run, name, line, plotting.transport_color(transport), style, label)
            for start_s, _, interval_index, stats in points:
                rows.append(
                    [label, name, interval_index, f"{start_s:.3f}", stats.get("count", 0),
                     stats.get("over_threshold", 0), format_us(stats.get("max_ns", 0))]
                )
        style_axes(max_ax, over_ax, result, name, line)
    plotting.figure_legend(fig)
    fig.suptitle(f"Spikes over time ({result.label})")
    plotting.save_figure(fig, output_dir, "intervals", [result], caveats)
    return format_table(["label", "series", "interval", "start_s", "count", "over_threshold", "max_us"], rows)


if __name__ == "__main__":
    plotting.run_main(main)
