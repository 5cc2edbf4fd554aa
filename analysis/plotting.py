"""What every plot script shares: the headless backend, saving PNG + SVG, colours, the CLI frame.

Owns: matplotlib set-up (Agg: no display needed), one colour per transport across every plot,
the threshold marker, and running a script's main with clear errors. Must never read a result
itself (rtsoak_results does) or decide what a plot shows.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
# Text stays text in the SVG (searchable, and readable by the tests), not glyph outlines.
matplotlib.rcParams["svg.fonttype"] = "none"

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402
from matplotlib.transforms import Bbox  # noqa: E402

from rtsoak_results import ResultError, ns_to_us  # noqa: E402

# The order rtsoak registers its transports in, so each keeps its colour in every plot.
KNOWN_TRANSPORTS = ("futex", "msg-ring", "eventfd", "signalfd")
_PALETTE = plt.get_cmap("tab10").colors


def transport_color(name: str, index: int = 0):
    if name in KNOWN_TRANSPORTS:
        return _PALETTE[KNOWN_TRANSPORTS.index(name)]
    return _PALETTE[(len(KNOWN_TRANSPORTS) + index) % len(_PALETTE)]


def color_for_label(transport: str, label_index: int, several_results: bool):
    """A transport's colour; when several results are plotted each (result, transport) differs."""
    if several_results:
        return _PALETTE[label_index % len(_PALETTE)]
    return transport_color(transport, label_index)


def us_formatter() -> FuncFormatter:
    return FuncFormatter(lambda value, _pos: f"{value:g}")


def log_axis_us(axis) -> None:
    """A log-scaled latency axis labelled in plain microseconds (no 10^n notation).

    Call it after plotting: 2 and 5 between the decades are labelled only when the axis spans
    at most two decades, where the decades alone would leave it almost unlabelled.
    """
    axes = axis.axes
    is_x = axis is axes.xaxis
    axes.set_xscale("log") if is_x else axes.set_yscale("log")
    low, high = axes.get_xlim() if is_x else axes.get_ylim()
    few_decades = low > 0 and math.log10(high / low) <= 2.2
    axis.set_major_formatter(us_formatter())
    axis.set_minor_formatter(
        FuncFormatter(lambda value, _pos: f"{value:g}" if few_decades and f"{value:g}"[0] in "25" else "")
    )


# Share of the samples a latency axis may leave below its bottom: messages published while the
# subscriber was draining for another one are seen at once, timed at tens of nanoseconds (a few
# percent of deliveries on a busy machine), and would stretch a log axis over three decades the
# rest of the samples never reach.
FLOOR_QUANTILE = 0.01


def latency_floor_us(series_list) -> float | None:
    """The bottom of a log latency axis: below the 1st percentile of every plotted series (the
    samples under it are still counted, in the lowest bin), or None with no samples."""
    lows = [s.value_at_quantile_ns(FLOOR_QUANTILE) / 1000.0 for s in series_list if s.count]
    lows = [low for low in lows if low > 0]
    return min(lows) / 1.5 if lows else None


def mark_threshold(ax, threshold_ns, orientation: str = "vertical") -> None:
    if threshold_ns is None:
        return
    threshold_us = ns_to_us(threshold_ns)
    label = f"threshold {threshold_us:g} us"
    if orientation == "vertical":
        ax.axvline(threshold_us, color="crimson", linestyle="--", linewidth=1.2, label=label)
    else:
        ax.axhline(threshold_us, color="crimson", linestyle="--", linewidth=1.2, label=label)


# How many caveats a caption spells out; the rest are counted.
CAPTION_CAVEATS = 3

# What each figure saved in this process showed (name -> axes' ranges and labels, the caption):
# printed by nothing, read by the tests, which check a figure's content and not just its file.
DRAWN: dict[str, dict] = {}


def caption_lines(results) -> list[str]:
    """Where a figure's figures came from and what they are worth: one line per result (host,
    kernel and whether it is PREEMPT_RT, period, duration), then its caveats, so a figure pasted
    elsewhere keeps the 'not an RT kernel' that the result says."""
    lines = []
    for result in results:
        lines.append(result.context())
        caveats = result.caveats
        if caveats:
            shown = [f"  caveat: {c}" for c in caveats[:CAPTION_CAVEATS]]
            if len(caveats) > CAPTION_CAVEATS:
                shown.append(f"  ... and {len(caveats) - CAPTION_CAVEATS} more caveats in the result")
            lines += shown
        else:
            lines.append("  no caveats: a properly set up real-time machine")
    # A figure of many results (a trend) names each distinct context once.
    unique = list(dict.fromkeys(lines))
    if len(unique) > 8:
        unique = unique[:8] + [f"... ({len(results)} results)"]
    return unique


def add_caption(fig, results) -> str:
    text = "\n".join(caption_lines(results))
    fig.text(0.0, -0.02, text, ha="left", va="top", fontsize="x-small", wrap=True, color="#333333")
    return text


def _overlaps(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def describe_axes(ax) -> dict:
    """What one drawn axes shows: titles, ranges, the tick labels shown, its legend, and whether
    the legend or any two tick labels overlap something (the figure must have been drawn)."""
    renderer = ax.figure.canvas.get_renderer()
    legend = ax.get_legend()
    ticks = [t for t in ax.get_xticklabels() if t.get_visible() and t.get_text()]
    boxes = [t.get_window_extent(renderer) for t in ticks]
    # On a log axis a bar starts below the visible range: only what is inside the axes counts.
    inside = ax.get_window_extent(renderer)
    bars = [
        Bbox.intersection(p.get_window_extent(renderer), inside)
        for p in ax.patches
        if math.isfinite(p.get_window_extent(renderer).y1)
    ]
    bars = [b for b in bars if b is not None and b.height > 0]
    legend_box = legend.get_window_extent(renderer) if legend else None
    # Every drawn point of every curve (lines, and the steps of `stairs`) inside the axes, in
    # display coordinates.
    vertices = [line.get_transform().transform(line.get_xydata()) for line in ax.get_lines() if line.get_visible()]
    vertices += [p.get_transform().transform(p.get_path().vertices) for p in ax.patches if p.get_visible()]
    points = [point for block in vertices if len(block) for point in block if inside.contains(*point)]
    return {
        "title": ax.get_title(),
        "xlabel": ax.get_xlabel(),
        "ylabel": ax.get_ylabel(),
        "xlim": ax.get_xlim(),
        "ylim": ax.get_ylim(),
        "xticklabels": [t.get_text() for t in ticks],
        "xticklabels_collide": any(_overlaps(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1 :]),
        "legend": [t.get_text() for t in legend.get_texts()] if legend else [],
        "legend_covers_bars": bool(legend_box) and any(_overlaps(legend_box, bar) for bar in bars),
        "legend_covers_curves": bool(legend_box) and any(legend_box.contains(*point) for point in points),
    }


def legend_beside(ax) -> None:
    """The legend to the right of the axes, outside the data area, so it never covers a curve
    however many there are (the saved figure grows to hold it)."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)


def legend_below(ax, fontsize: str = "small") -> None:
    """The legend under the axes, below its tick labels and axis label, in two columns."""
    if not ax.get_legend_handles_labels()[0]:
        return
    ax.figure.canvas.draw()
    axis_box = ax.xaxis.get_tightbbox(ax.figure.canvas.get_renderer())
    below = axis_box.transformed(ax.transAxes.inverted()).y0 if axis_box else -0.12
    ax.legend(fontsize=fontsize, loc="upper center", bbox_to_anchor=(0.5, below - 0.02), ncol=2)


def fit_tick_labels(ax) -> None:
    """Turn the x tick labels until no two overlap: level, then 30 degrees, then upright (long
    labels such as `futex (defer-taskrun)` side by side run into each other level)."""
    fig = ax.figure
    for rotation, align in ((0, "center"), (30, "right"), (90, "center")):
        for label in ax.get_xticklabels():
            label.set_rotation(rotation)
            label.set_horizontalalignment(align)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        boxes = [t.get_window_extent(renderer) for t in ax.get_xticklabels() if t.get_visible() and t.get_text()]
        if not any(_overlaps(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1 :]):
            return


def save_figure(fig, output_dir: Path, name: str, results) -> list[Path]:
    """Caption the figure with where its figures came from (`results`), write NAME.png and
    NAME.svg into output_dir, and report them on stderr (stdout holds figures)."""
    caption = add_caption(fig, results)
    fig.canvas.draw()
    DRAWN[name] = {
        "caption": caption,
        "suptitle": fig._suptitle.get_text() if fig._suptitle else "",
        "axes": [describe_axes(ax) for ax in fig.get_axes()],
    }
    output_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for extension in ("png", "svg"):
        path = output_dir / f"{name}.{extension}"
        # Drawn beside and renamed into place: an interrupted script never leaves half an image.
        partial = output_dir / f".{name}.{extension}.partial"
        fig.savefig(partial, format=extension, dpi=110, bbox_inches="tight")
        os.replace(partial, path)
        paths.append(path)
        print(f"wrote {path}", file=sys.stderr)
    plt.close(fig)
    return paths


def add_output_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-o", "--output-dir", type=Path, default=Path("."), help="directory for the PNG and SVG files (default: .)"
    )


def parse_series(text: str) -> list[str]:
    """'send_call,delivery' -> ['send_call', 'delivery']."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise SystemExit("error: --series names no series; give e.g. --series send_call,delivery")
    return names


def run_main(main) -> None:
    """Run a script's main; a bad result file ends with its message and exit code 2, no traceback."""
    try:
        main()
    except ResultError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)
