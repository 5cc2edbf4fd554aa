#!/usr/bin/env python3
"""Latency histograms per transport: send call and delivery side by side, log counts, threshold marked.

Reads one or more rtsoak result.json files (or their directories); compare rounds of a
transport are merged. Writes histogram.png and histogram.svg, and prints per transport and
series the sample count, the exact over-threshold count, and the histogram's maximum.
"""

from __future__ import annotations

import argparse

import numpy as np

import plotting
from rtsoak_results import HEADLINE_SERIES, format_table, format_us, load_results, run_label, series_title

BINS_PER_DECADE = 20


def log_bin_edges_us(series_list) -> np.ndarray:
    """Log-spaced bin edges from the axis floor (below the 5th percentile, see plotting) to the
    largest recorded value of the plotted series; faster samples count in the first bin."""
    values = [s.recorded[0][s.recorded[0] > 0] for s in series_list]
    values = [v for v in values if len(v)]
    if not values:
        return np.array([1.0, 10.0])
    low_us = plotting.latency_floor_us(series_list) or max(min(v.min() for v in values) / 1000.0, 0.001)
    high_us = max(v.max() for v in values) / 1000.0
    low, high = np.log10(low_us), np.ceil(np.log10(high_us * 1.0001))
    count = max(int(np.ceil((high - low) * BINS_PER_DECADE)), 1) + 1
    return np.logspace(low, high, count)


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
    """Write histogram.png and .svg into output_dir; return the table of the plotted figures."""
    several = len(results) > 1
    lines = []  # (legend label, TransportData, result index)
    for index, result in enumerate(results):
        for transport in result.measured_transports():
            lines.append((run_label(transport, result, several), transport, index))
    fig, axes = plotting.plt.subplots(
        1, len(series_names), figsize=(5.5 * len(series_names), 4.5), squeeze=False, sharey=True, layout="constrained"
    )
    rows = []
    for ax, name in zip(axes[0], series_names):
        plotted = [(label, t.get(name), i) for label, t, i in lines]
        edges = log_bin_edges_us([s for _, s, _ in plotted])
        for label, series, result_index in plotted:
            values_ns, counts = series.recorded
            rows.append(
                [label, name, series.histogram_count, series.over_threshold, format_us(series.histogram_max_ns)]
            )
            if not len(values_ns):
                continue
            # A 0 ns sample has no place on a log axis: it is counted in the lowest bin.
            binned, _ = np.histogram(np.clip(values_ns / 1000.0, edges[0], edges[-1]), bins=edges, weights=counts)
            style = plotting.line_style(label, result_index, several)
            ax.stairs(binned, edges, color=plotting.transport_color(label), linestyle=style, linewidth=1.4, label=label)
        thresholds = {r.threshold_ns for r in results if r.threshold_ns is not None}
        for threshold_ns in sorted(thresholds):
            plotting.mark_threshold(ax, threshold_ns)
        # The x range is the data's (and the threshold's), not the empty bins around it.
        shown_us = [t / 1000.0 for t in thresholds]
        for _, series, _ in plotted:
            values_us = series.recorded[0] / 1000.0
            if len(values_us):
                shown_us += [edges[0] * 1.3, values_us[-1]]
        if shown_us:
            ax.set_xlim(min(shown_us) / 1.3, max(shown_us) * 1.3)
        plotting.log_axis_us(ax.xaxis)
        ax.set_yscale("log")
        ax.set_ylim(bottom=0.5)
        ax.set_xlabel("latency (us, log scale; the first bin also counts the fastest 1 %)")
        ax.set_title(series_title(name))
        ax.grid(True, which="major", alpha=0.3)
    axes[0][0].set_ylabel("samples per bin (log scale)")
    # One legend beside the panels: with a dozen curves, no corner inside is free.
    plotting.figure_legend(fig)
    fig.suptitle("Latency histogram per transport")
    plotting.save_figure(fig, output_dir, "histogram", results, caveats)
    return format_table(["label", "series", "count", "over_threshold", "max_us"], rows)


if __name__ == "__main__":
    plotting.run_main(main)
