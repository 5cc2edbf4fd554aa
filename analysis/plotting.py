"""What every plot script shares: the headless backend, saving PNG + SVG, colours, the CLI frame.

Owns: matplotlib set-up (Agg: no display needed), one colour per transport across every plot (a
fixed map from the transport's name), one legend per figure outside its axes, the caption with
one caveat block, the threshold marker, and running a script's main with clear errors. Must never read a result
itself (rtsoak_results does) or decide what a plot shows.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import zlib
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
# Text stays text in the SVG (searchable, and readable by the tests), not glyph outlines.
matplotlib.rcParams["svg.fonttype"] = "none"

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402
from matplotlib.transforms import Bbox  # noqa: E402

from rtsoak_results import ResultError, ns_to_us  # noqa: E402

# One colour per transport, the same in every plot and every report: a fixed map from the
# transport's registry name (a ring setup or a result label after it does not change it). Red is
# left out: the threshold line is crimson.
TRANSPORT_COLORS = {
    "futex": "tab:blue",
    "msg-ring": "tab:orange",
    "eventfd": "tab:green",
    "signalfd": "tab:purple",
    "eventfd-multishot": "tab:brown",
    "futex-syscall": "tab:gray",
    "persistent-futex": "tab:pink",
    "doorbell": "tab:olive",
}
# A transport this map does not know (a newer rtsoak's) gets one of these, by a stable hash of
# its name: the same colour in every plot, if not necessarily one no other has.
SPARE_COLORS = ("tab:cyan", "#393b79", "#637939", "#8c6d31", "#7b4173", "#3182bd")
# Line styles where colour is taken: results plotted together, ring setups of one transport.
RESULT_LINESTYLES = ("-", "--", ":", "-.")
SETUP_LINESTYLES = {"defer-taskrun": "-", "coop-taskrun": "--", "none": ":"}


def transport_name(label: str) -> str:
    """The registry name in a plot label: `eventfd (none) @ 20261130T120000Z-compare` -> `eventfd`."""
    return label.split(" @ ")[0].split(" (")[0]


def transport_color(label: str):
    """The transport's colour, from the fixed map (a spare one for a transport it lacks)."""
    name = transport_name(label)
    if name in TRANSPORT_COLORS:
        return TRANSPORT_COLORS[name]
    return SPARE_COLORS[zlib.crc32(name.encode()) % len(SPARE_COLORS)]


def line_style(label: str, result_index: int = 0, several_results: bool = False) -> str:
    """How a curve tells apart what its colour does not: the result when several are plotted,
    else the ring setup in a ring-setup comparison."""
    if several_results:
        return RESULT_LINESTYLES[result_index % len(RESULT_LINESTYLES)]
    setup = label.split(" (")[1].rstrip(")") if " (" in label else None
    return SETUP_LINESTYLES.get(setup, "-.") if setup else "-"


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
# rest of the samples never reach. At 1 % a busy run's drained deliveries still set the axis.
FLOOR_QUANTILE = 0.05


def latency_floor_us(series_list) -> float | None:
    """The bottom of a log latency axis: below the 5th percentile of every plotted series (the
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


def caption_lines(results, caveats: bool = True) -> list[str]:
    """Where a figure's figures came from and what they are worth: one line per distinct context
    (host, kernel and whether it is PREEMPT_RT, period, duration), then one block of the
    results' caveats, each said once, so a figure pasted elsewhere keeps the 'not an RT kernel'
    that the result says. `caveats=False` for a figure on a page that shows the caveats itself
    (the report): one caveat block per page."""
    if len(results) <= 2:
        lines = list(dict.fromkeys(result.context() for result in results))
    else:
        # Many results (a trend): each distinct setup once, then the span of dates.
        lines = list(dict.fromkeys(result.context(dated=False) for result in results))
        if len(lines) > 6:
            lines = lines[:6] + ["..."]
        dates = sorted(str(r.data.get("started_at", "?"))[:16] for r in results)
        lines.append(f"{len(results)} results, {dates[0]} to {dates[-1]}")
    if not caveats:
        return lines
    said = list(dict.fromkeys(c for result in results for c in result.caveats))
    if not said:
        return lines + ["  no caveats: a properly set up real-time machine"]
    lines += [f"  caveat: {c}" for c in said[:CAPTION_CAVEATS]]
    if len(said) > CAPTION_CAVEATS:
        lines.append(f"  ... and {len(said) - CAPTION_CAVEATS} more caveats in the result")
    return lines


def add_caption(fig, results, caveats: bool = True) -> str:
    text = "\n".join(caption_lines(results, caveats))
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
        "texts": [t.get_text() for t in ax.texts],
        "lines": [line.get_label() for line in ax.get_lines()],
    }


def _handle_color(handle) -> str | None:
    for getter in ("get_color", "get_facecolor", "get_edgecolor"):
        if hasattr(handle, getter):
            try:
                return to_hex(getattr(handle, getter)())
            except (ValueError, TypeError):
                continue
    return None


def describe_figure_legends(fig) -> dict:
    """The figure's own legends: their entries with each entry's colour, and what of the figure
    they overlap (an axes with its ticks, labels and title, the suptitle): nothing, if they are
    placed right."""
    renderer = fig.canvas.get_renderer()
    entries, colors, covered = [], {}, []
    for legend in fig.legends:
        box = legend.get_window_extent(renderer)
        for text, handle in zip(legend.get_texts(), legend.legend_handles):
            entries.append(text.get_text())
            colors[text.get_text()] = _handle_color(handle)
        for ax in fig.get_axes():
            if _overlaps(box, ax.get_tightbbox(renderer)):
                covered.append(ax.get_title() or "an axes")
        if fig._suptitle is not None and _overlaps(box, fig._suptitle.get_window_extent(renderer)):
            covered.append("the suptitle")
    return {"entries": entries, "colors": colors, "covers": covered}


def figure_legend(fig, extra=()) -> None:
    """One legend for the whole figure, outside every axes at its right (the figure must use the
    constrained layout, which makes room for it), so it covers no curve, bar, tick label or
    axis label however many entries it has: an entry per distinct label of every axes, then the
    `extra` (handle, label) pairs (a key to line styles)."""
    handles, labels = [], []
    for ax in fig.get_axes():
        for handle, label in zip(*ax.get_legend_handles_labels()):
            if label not in labels:
                handles.append(handle)
                labels.append(label)
    for handle, label in extra:
        handles.append(handle)
        labels.append(label)
    if handles:
        fig.legend(handles, labels, loc="outside right upper", fontsize="small")


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


def save_figure(fig, output_dir: Path, name: str, results, caveats: bool = True) -> list[Path]:
    """Caption the figure with where its figures came from (`results`; their caveats too unless
    the page it goes on shows them), write NAME.png and NAME.svg into output_dir, and report them
    on stderr (stdout holds figures)."""
    caption = add_caption(fig, results, caveats)
    fig.canvas.draw()
    DRAWN[name] = {
        "caption": caption,
        "suptitle": fig._suptitle.get_text() if fig._suptitle else "",
        "axes": [describe_axes(ax) for ax in fig.get_axes()],
        "legend": describe_figure_legends(fig),
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
