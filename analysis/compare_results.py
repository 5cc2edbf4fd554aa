#!/usr/bin/env python3
"""Side by side of two results (baseline vs new): percentile curves and longest latencies.

Top row: each transport's percentile curve, baseline dashed, new solid, in the transport's own
colour. Bottom row: the longest send call and delivery per transport that either side measured,
baseline (hatched) and new bars side by side. One legend beside the panels. Writes
compare.png and compare.svg and prints, per transport and figure, baseline, new and the change.
"""

from __future__ import annotations

import argparse

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

import plotting
from plot_percentiles import draw_curve, style_percentile_axes
from rtsoak_results import HEADLINE_SERIES, format_table, load_result, series_title
from summary_table import COLUMNS, transport_row

def change_text(before: str, after: str) -> str:
    try:
        before_value, after_value = float(before), float(after)
    except ValueError:
        return "" if before == after else "changed"
    delta = after_value - before_value
    if before_value == 0:
        return f"{delta:+g}"
    return f"{delta:+g} ({delta / before_value * 100:+.0f}%)"


def paired(baseline, new) -> list[tuple[str, object, object]]:
    """(name, baseline TransportData or None, new TransportData or None) for every row of either
    result, paired as rtsoak diff pairs them: by the transport and the ring setup it measured,
    so a plain comparison's futex meets a ring-setup comparison's futex (defer-taskrun)."""
    before = {baseline.measured_key(t): t for t in baseline.transports.values()}
    after = {new.measured_key(t): t for t in new.transports.values()}
    pairs = []
    for key in list(before) + [k for k in after if k not in before]:
        old, now = before.get(key), after.get(key)
        pairs.append(((now or old).label, old, now))
    return pairs


def comparison_rows(baseline, new) -> list[list]:
    """(transport, figure, baseline, new, change) for every row of either result."""
    rows = []
    for name, old, now in paired(baseline, new):
        before = transport_row(old) if old else {}
        after = transport_row(now) if now else {}
        for key, _title in COLUMNS[1:]:
            old_value = str(before.get(key, "-"))
            new_value = str(after.get(key, "-"))
            rows.append([name, key, old_value, new_value, change_text(old_value, new_value)])
    return rows


def measured_pairs(baseline, new) -> list[tuple[str, object, object]]:
    """The pairs either side measured: a transport neither ran (unsupported on both) has no bar."""
    return [(label, old, now) for label, old, now in paired(baseline, new) if (old and old.measured) or (now and now.measured)]


def draw_longest_bars(ax, baseline, new, name) -> None:
    pairs = measured_pairs(baseline, new)
    transports = [label for label, _, _ in pairs]
    positions = np.arange(len(transports))
    colors = [plotting.transport_color(t) for t in transports]
    for offset, side, hatch in ((-0.2, 1, "//"), (0.2, 2, None)):
        longest_us = [pair[side].get(name).max_ns / 1000.0 if pair[side] else 0 for pair in pairs]
        bars = ax.bar(positions + offset, longest_us, width=0.4, color=colors, hatch=hatch, edgecolor="black",
                      alpha=0.55 if hatch else 0.95)
        ax.bar_label(bars, fmt="%.0f", fontsize="x-small", rotation=90, padding=2)
    plotting.mark_threshold(ax, new.threshold_ns, orientation="horizontal")
    ax.set_xticks(positions, transports)
    plotting.log_axis_us(ax.yaxis)
    ax.set_ylabel("longest (us, log scale)")
    ax.set_title(f"{series_title(name)}: longest, baseline (hatched) vs new")
    ax.grid(True, axis="y", alpha=0.3)
    # Room above the tallest bar for its label.
    low, high = ax.get_ylim()
    ax.set_ylim(low, high * 3)
    plotting.fit_tick_labels(ax)


def legend_entries(baseline, new) -> list:
    """The legend: a patch of each transport's colour, then the key to what colour does not say,
    which side is which."""
    colors = [
        (Patch(facecolor=plotting.transport_color(label), edgecolor="black"), label)
        for label, _, _ in measured_pairs(baseline, new)
    ]
    return colors + [
        (Line2D([], [], color="black", linestyle="--"), f"baseline: {baseline.label} (dashed curve)"),
        (Patch(facecolor="white", edgecolor="black", hatch="//"), "baseline (hatched bar)"),
        (Line2D([], [], color="black", linestyle="-"), f"new: {new.label} (solid curve, plain bar)"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("baseline", metavar="BASELINE", help="the reference result.json or its directory")
    parser.add_argument("new", metavar="NEW", help="the result to compare with it")
    plotting.add_output_argument(parser)
    args = parser.parse_args()

    print(render(load_result(args.baseline), load_result(args.new), args.output_dir))


def render(baseline, new, output_dir, caveats: bool = True) -> str:
    """Write compare.png and .svg into output_dir; return the figure-by-figure comparison."""
    # Wider for many bars (a ring-setup comparison has a group per transport and setup), so
    # their labels, turned if need be, stay apart.
    width = max(11.0, 0.8 * len(measured_pairs(baseline, new)))
    fig, axes = plotting.plt.subplots(2, len(HEADLINE_SERIES), figsize=(width, 9), squeeze=False, layout="constrained")
    for column, name in enumerate(HEADLINE_SERIES):
        ax = axes[0][column]
        for result, style in ((baseline, "--"), (new, "-")):
            for transport in result.measured_transports():
                series = transport.get(name)
                if series.count:
                    # Unlabelled: the legend names each colour once, and the styles apart.
                    draw_curve(ax, series, plotting.transport_color(transport.label), "_curve", linestyle=style)
        style_percentile_axes(ax, f"{series_title(name)}: baseline dashed, new solid")
        floor = plotting.latency_floor_us(
            [t.get(name) for r in (baseline, new) for t in r.measured_transports()]
        )
        if floor:
            ax.set_ylim(bottom=floor)
        draw_longest_bars(axes[1][column], baseline, new, name)
    plotting.figure_legend(fig, extra=legend_entries(baseline, new))
    fig.suptitle(f"{baseline.label} (baseline) vs {new.label} (new)")
    plotting.save_figure(fig, output_dir, "compare", [baseline, new], caveats)
    return format_table(["transport", "figure", "baseline", "new", "change"], comparison_rows(baseline, new))


if __name__ == "__main__":
    plotting.run_main(main)
