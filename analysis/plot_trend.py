#!/usr/bin/env python3
"""Nightly trend across many results: maximum and over-threshold rate per transport per night.

x is each result's started_at. Top row: the longest send call and delivery (exact maxima);
bottom row: samples over the threshold per million messages (exact counts). Compare rounds of a
transport in one result are merged first. --baseline marks a reference result: a dashed line at
its value per transport and a vertical line at its date. Writes trend.png and trend.svg and
prints one row per result, transport and series.
"""

from __future__ import annotations

import argparse

import matplotlib.dates as mdates

import plotting
from rtsoak_results import HEADLINE_SERIES, format_table, format_us, load_result, load_results, series_title


def rate_per_million(series) -> float:
    return series.over_threshold * 1e6 / series.count if series.count else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+", metavar="RESULT", help="result.json files or their directories")
    parser.add_argument("--baseline", metavar="RESULT", help="a reference result to mark on every panel")
    plotting.add_output_argument(parser)
    args = parser.parse_args()

    baseline = load_result(args.baseline) if args.baseline else None
    print(render(load_results(args.results), baseline, args.output_dir))


def render(results, baseline, output_dir) -> str:
    """Write trend.png and .svg into output_dir; return one row per result, transport and series."""
    results = sorted(results, key=lambda r: r.started_at)
    transports = []
    for result in results:
        for transport in result.measured_transports():
            if transport.label not in transports:
                transports.append(transport.label)

    fig, axes = plotting.plt.subplots(
        2, len(HEADLINE_SERIES), figsize=(11, 7), squeeze=False, sharex=True, layout="constrained"
    )
    rows = []
    for column, name in enumerate(HEADLINE_SERIES):
        max_ax, rate_ax = axes[0][column], axes[1][column]
        for index, transport_name in enumerate(transports):
            color = plotting.transport_color(transport_name)
            dates, maxima_us, rates = [], [], []
            for result in results:
                transport = result.transports.get(transport_name)
                if transport is None or not transport.measured:
                    continue
                series = transport.get(name)
                dates.append(result.started_at)
                maxima_us.append(series.max_ns / 1000.0 if series.count else float("nan"))
                rates.append(rate_per_million(series))
                rows.append(
                    [result.started_at.strftime("%Y-%m-%dT%H:%M:%SZ"), transport_name, name, series.count,
                     series.over_threshold, f"{rate_per_million(series):.1f}", format_us(series.max_ns)]
                )
            max_ax.plot(dates, maxima_us, "-o", markersize=3, color=color, label=transport_name)
            rate_ax.plot(dates, rates, "-o", markersize=3, color=color, label=transport_name)
            if baseline is not None and transport_name in baseline.transports:
                reference = baseline.transports[transport_name].get(name)
                if reference.count:
                    max_ax.axhline(reference.max_ns / 1000.0, color=color, linestyle="--", linewidth=1, alpha=0.7)
                    rate_ax.axhline(rate_per_million(reference), color=color, linestyle="--", linewidth=1, alpha=0.7)
        if baseline is not None:
            for ax in (max_ax, rate_ax):
                ax.axvline(baseline.started_at, color="black", linestyle=":", linewidth=1.2,
                           label=f"baseline {baseline.started_at:%Y-%m-%d} (dashed: its values)")
        plotting.mark_threshold(max_ax, results[0].threshold_ns, orientation="horizontal")
        plotting.log_axis_us(max_ax.yaxis)
        max_ax.set_ylabel("longest (us, log scale)")
        max_ax.set_title(f"{series_title(name)}: longest per night")
        rate_ax.set_yscale("symlog", linthresh=1.0)
        rate_ax.set_ylim(bottom=0, top=max(rate_ax.get_ylim()[1], 10))
        rate_ax.yaxis.set_major_formatter(plotting.us_formatter())
        rate_ax.set_ylabel("over threshold per million messages")
        rate_ax.set_title(f"{series_title(name)}: over-threshold rate per night")
        rate_ax.set_xlabel("result started at (UTC)")
        # At most about eight date labels, however many nights: they never run into each other.
        locator = mdates.AutoDateLocator(minticks=3, maxticks=8)
        rate_ax.xaxis.set_major_locator(locator)
        rate_ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
        for ax in (max_ax, rate_ax):
            ax.grid(True, alpha=0.3)
    # One legend beside the panels, clear of the dates and of the caption below.
    plotting.figure_legend(fig)
    fig.suptitle(f"Nightly trend over {len(results)} results")
    plotting.save_figure(fig, output_dir, "trend", results)
    headers = ["started_at", "transport", "series", "count", "over_threshold", "per_million", "max_us"]
    return format_table(headers, rows, left_columns=3)


if __name__ == "__main__":
    plotting.run_main(main)
