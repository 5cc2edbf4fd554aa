#!/usr/bin/env python3
"""Percentile curves (p50 ... p99.999 and max) of several transports on one chart.

The x axis is the HdrHistogram percentile-plot convention: 1/(1-p) on a log scale, labelled with
the percentiles. A curve stops at the highest percentile its sample count supports (1 - 1/n);
the exact maximum is the marker in the "max" column. Compare rounds of a transport are merged
histograms, never averaged percentiles. Writes percentiles.png and percentiles.svg and prints
the plotted figures.
"""

from __future__ import annotations

import argparse

import numpy as np
from matplotlib.ticker import NullLocator

import plotting
from rtsoak_results import (
    HEADLINE_SERIES,
    format_table,
    format_us,
    load_results,
    percentile_label,
    quantile_position,
    run_label,
    series_title,
)

TICK_QUANTILES = (0.5, 0.9, 0.99, 0.999, 0.9999, 0.99999)
PRINTED_QUANTILES = (0.5, 0.9, 0.99, 0.999, 0.9999, 0.99999)
MAX_POSITION = 1e6  # where the "max" column sits, one decade right of p99.999
CURVE_POINTS = 400


def curve(series):
    """(x positions, latencies in us) from p0 to the highest percentile the count supports."""
    last_quantile = min(1.0 - 1.0 / series.count, 0.99999) if series.count > 1 else 0.0
    top_position = quantile_position(last_quantile)
    positions = np.logspace(0, np.log10(max(top_position, 1.0)), CURVE_POINTS)
    quantiles = 1.0 - 1.0 / positions
    latencies_us = series.value_at_quantiles_ns(quantiles) / 1000.0
    # A 0 ns sample (the clock's resolution) has no place on a log axis; leave it out of the line.
    return positions, np.where(latencies_us > 0, latencies_us, np.nan)


def draw_curve(ax, series, color, label, linestyle="-") -> None:
    """The percentile curve of a series, a dotted link to its exact maximum, and that maximum."""
    positions, latencies_us = curve(series)
    ax.plot(positions, latencies_us, color=color, linewidth=1.5, linestyle=linestyle, label=label)
    ax.plot([positions[-1], MAX_POSITION], [latencies_us[-1], series.max_ns / 1000.0], color=color, linestyle=":")
    ax.plot([MAX_POSITION], [series.max_ns / 1000.0], marker="o", color=color)


def style_percentile_axes(ax, title: str) -> None:
    """Log axes, x ticks labelled with percentiles and "max", units on the latency axis."""
    ax.set_xscale("log")
    plotting.log_axis_us(ax.yaxis)
    ax.set_xlim(1, MAX_POSITION * 2)
    ticks = [quantile_position(q) for q in TICK_QUANTILES] + [MAX_POSITION]
    ax.set_xticks(ticks, [percentile_label(q) for q in TICK_QUANTILES] + ["max"], rotation=30)
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel("percentile")
    ax.set_ylabel("latency (us, log scale)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+", metavar="RESULT", help="result.json or the directory holding it")
    parser.add_argument(
        "--series", default=",".join(HEADLINE_SERIES), help="comma-separated series, one panel each (default: %(default)s)"
    )
    plotting.add_output_argument(parser)
    args = parser.parse_args()

    print(render(load_results(args.results), plotting.parse_series(args.series), args.output_dir))


def render(results, series_names, output_dir, caveats: bool = True) -> str:
    """Write percentiles.png and .svg into output_dir; return the table of the plotted figures."""
    several = len(results) > 1
    fig, axes = plotting.plt.subplots(1, len(series_names), figsize=(5.5 * len(series_names), 4.8), squeeze=False, layout="constrained")
    rows = []
    for ax, name in zip(axes[0], series_names):
        for result_index, result in enumerate(results):
            for transport in result.measured_transports():
                label = run_label(transport, result, several)
                series = transport.get(name)
                if not series.count:
                    continue
                style = plotting.line_style(label, result_index, several)
                draw_curve(ax, series, plotting.transport_color(label), label, linestyle=style)
                printed = series.value_at_quantiles_ns(PRINTED_QUANTILES)
                rows.append(
                    [label, name, series.count]
                    + [format_us(v) for v in printed]
                    + [format_us(series.max_ns), format_us(series.histogram_max_ns)]
                )
        for result_threshold in sorted({r.threshold_ns for r in results if r.threshold_ns is not None}):
            plotting.mark_threshold(ax, result_threshold, orientation="horizontal")
        style_percentile_axes(ax, series_title(name))
        floor = plotting.latency_floor_us(
            [t.get(name) for r in results for t in r.measured_transports()]
        )
        if floor:
            ax.set_ylim(bottom=floor)
    # One legend beside the panels: with a dozen curves, no corner inside is free.
    plotting.figure_legend(fig)
    fig.suptitle("Latency by percentile")
    plotting.save_figure(fig, output_dir, "percentiles", results, caveats)
    headers = ["label", "series", "count"] + [f"p{percentile_label(q)[:-1]}_us" for q in PRINTED_QUANTILES]
    return format_table(headers + ["max_us", "hdr_max_us"], rows)


if __name__ == "__main__":
    plotting.run_main(main)
