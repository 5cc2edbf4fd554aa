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

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

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


def mark_threshold(ax, threshold_ns, orientation: str = "vertical") -> None:
    if threshold_ns is None:
        return
    threshold_us = ns_to_us(threshold_ns)
    label = f"threshold {threshold_us:g} us"
    if orientation == "vertical":
        ax.axvline(threshold_us, color="crimson", linestyle="--", linewidth=1.2, label=label)
    else:
        ax.axhline(threshold_us, color="crimson", linestyle="--", linewidth=1.2, label=label)


def save_figure(fig, output_dir: Path, name: str) -> list[Path]:
    """Write NAME.png and NAME.svg into output_dir; report them on stderr (stdout holds figures)."""
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
