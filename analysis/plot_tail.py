#!/usr/bin/env python3
"""The tail estimates of a result: per run and series, a return-level plot and a QQ plot of the fit.

Reads rtsoak result.json files (or their directories) holding `runs[].tail` (docs/tail.md). A
figure is drawn from a fit only where rtsoak gives the estimate (status `estimated`): the left
panel draws the fitted return level against the return period, each return level rtsoak states
for an hour, a day and a year with its 95 % interval (a dashed line where the interval is open
above; `*` where the span is over 100 times the span measured), and the cluster maxima as
empirical points (the k-th largest of n in a span S returns every S / k); the right panel plots
the cluster maxima against the fitted distribution's quantiles (on the diagonal: the fit
describes them); the estimates come first, at most eight series. Where rtsoak refused the estimate (a heavy tail, or any status but
`estimated`) and kept the model, only the cluster maxima are drawn, and the right panel says why
no fit is drawn: a refused fit's return levels (10^19 us and beyond for a heavy tail) are no
figure. Writes tail.png and tail.svg and prints one line per series: its estimate or why there
is none.
"""

from __future__ import annotations

import argparse
import math
import textwrap

import matplotlib.pyplot as plt
import numpy as np

import plotting
from rtsoak_results import load_results, run_label

MAX_PANELS = 8


def gpd_quantile(p, sigma: float, xi: float):
    """The p quantile of a generalized Pareto distribution (threshold 0)."""
    p = np.asarray(p, dtype=float)
    if abs(xi) < 1e-7:
        return -sigma * np.log1p(-p)
    return sigma / xi * ((1.0 - p) ** (-xi) - 1.0)


def return_level_ns(model: dict, samples: float) -> float:
    """The level one cluster exceeds on average once in `samples` samples (nan below the threshold)."""
    expected = samples * model["clusters"] / model["samples"]
    if expected <= 1.0:
        return math.nan
    xi, sigma = model["xi"], model["sigma_ns"]
    if abs(xi) < 1e-7:
        return model["threshold_ns"] + sigma * math.log(expected)
    return model["threshold_ns"] + sigma / xi * (expected**xi - 1.0)


def models(results):
    """(label, series, status, model or None, reason or None) for every tail estimate."""
    several = len(results) > 1
    for result in results:
        for transport in result.measured_transports():
            label = run_label(transport, result, several)
            for run in transport.runs:
                for series, estimate in sorted((run.get("tail") or {}).items()):
                    status = estimate.get("status")
                    if status == "estimated":
                        yield label, series, status, estimate, None
                    else:
                        yield label, series, status, estimate.get("model"), estimate.get("reason")


# Where the return-level axis ends: a year.
YEAR_S = 3.2e7
# A span over this many times the span measured is marked as resting on the model.
EXTRAPOLATION_MARK = 100


def draw_maxima(ax_level, title: str, model: dict) -> None:
    """The cluster maxima at their empirical return periods, with the span measured dashed."""
    period_s = model["period_ns"] / 1e9
    span_s = model["samples"] * period_s
    maxima = np.sort(np.asarray(model["cluster_maxima_ns"], dtype=float))[::-1]
    # Empirical points: the k-th largest cluster maximum returns once every span / k.
    ranks = np.arange(1, len(maxima) + 1)
    ax_level.scatter(span_s / ranks, maxima / 1000.0, s=8, color="black", label="cluster maxima")
    ax_level.axvline(span_s, color="gray", linestyle="--", linewidth=0.8, label="span measured")
    ax_level.set_xscale("log")
    # Far intervals span decades: a linear axis would flatten the data to a line.
    ax_level.set_yscale("log")
    ax_level.set_xlabel("return period (s)")
    ax_level.set_ylabel("latency (us)")
    ax_level.set_title(title, fontsize=9)


def draw_levels(ax_level, model: dict) -> None:
    """The fitted curve and each stated return level with its 95 % interval."""
    period_s = model["period_ns"] / 1e9
    span_s = model["samples"] * period_s
    first_s = span_s / max(len(model["cluster_maxima_ns"]), 1)
    periods = np.logspace(math.log10(first_s), math.log10(YEAR_S), 80)
    levels = [return_level_ns(model, p / period_s) / 1000.0 for p in periods]
    ax_level.plot(periods, levels, color="tab:blue", label="fit")
    for level in model["return_levels"]:
        if level.get("level_ns") is None:
            continue  # below the threshold: the model says nothing there
        x, y = level["span_s"], level["level_ns"] / 1000.0
        low = level["low_ns"] / 1000.0 if level.get("low_ns") is not None else y
        if level.get("high_ns") is not None:
            high = level["high_ns"] / 1000.0
            # A line with end marks, not errorbar: errorbar stretches a log axis far below the data.
            ax_level.plot([x, x], [low, high], color="tab:blue", marker="_", markersize=8, linewidth=1.2,
                          label="95 % interval")
            ax_level.plot([x], [y], "o", color="tab:blue", markersize=4, label="return level")
        else:
            ax_level.plot([x], [y], "o", color="tab:blue", markersize=4, label="return level")
            ax_level.axvline(x, ymin=0, ymax=1, color="tab:blue", linestyle=":", linewidth=0.8,
                             label="95 % interval open above")
        mark = "*" if level.get("extrapolation", 0) > EXTRAPOLATION_MARK else ""
        ax_level.annotate(f"{level['span']}{mark}", (x, y), textcoords="offset points", xytext=(4, -10), fontsize=7)


def draw_qq(ax_qq, model: dict) -> None:
    maxima = np.asarray(model["cluster_maxima_ns"], dtype=float)
    excesses = np.sort(maxima - model["threshold_ns"])
    n = len(excesses)
    expected = gpd_quantile((np.arange(1, n + 1) - 0.5) / n, model["sigma_ns"], model["xi"])
    ax_qq.scatter(expected / 1000.0, excesses / 1000.0, s=8, color="black")
    top = max(float(expected.max()), float(excesses.max())) / 1000.0
    ax_qq.plot([0, top], [0, top], color="tab:blue")
    ax_qq.set_xlabel("fitted quantile (us over threshold)")
    ax_qq.set_ylabel("cluster maximum (us over threshold)")
    ax_qq.set_title(f"QQ: xi {model['xi']:.2f}, A^2 p {model['fit_test']['p_value']:.2f}", fontsize=9)


def draw_refusal(ax_qq, status: str, reason: str | None) -> None:
    """In place of the QQ plot of a refused fit: why there is no fit to draw."""
    ax_qq.axis("off")
    text = f"No fit drawn: rtsoak refused this estimate ({status})" + (f": {reason}" if reason else ".")
    ax_qq.text(0.0, 1.0, "\n".join(textwrap.wrap(text, 60)), va="top", ha="left", fontsize=9,
               transform=ax_qq.transAxes)


def render(results, output_dir, caveats: bool = True) -> str:
    """Write tail.png and .svg (when any series has a model) into output_dir; return the summary."""
    lines = []
    panels = []
    for label, series, status, model, reason in models(results):
        if status == "estimated":
            hour = model["return_levels"][0]
            level = hour.get("level_ns")
            text = "below threshold" if level is None else f"{level / 1000:.1f} us"
            lines.append(f"{label} {series}: hour {text}, xi {model['xi']:.2f}")
        else:
            lines.append(f"{label} {series}: {status}: {reason}")
        if model is not None:
            shown = "estimated" if status == "estimated" else f"refused: {status}"
            panels.append((f"{label} {series} ({shown})", status, model, reason))
    # The estimates first: a run of refusals must not crowd out the figures there are.
    panels = sorted(panels, key=lambda panel: panel[1] != "estimated")[:MAX_PANELS]
    if panels:
        fig, axes = plt.subplots(len(panels), 2, figsize=(11, 3.4 * len(panels)), squeeze=False, layout="constrained")
        for (title, status, model, reason), (ax_level, ax_qq) in zip(panels, axes):
            draw_maxima(ax_level, title, model)
            if status == "estimated":
                draw_levels(ax_level, model)
                draw_qq(ax_qq, model)
            else:
                draw_refusal(ax_qq, status, reason)
            plotting.log_axis_us(ax_level.yaxis)
        plotting.figure_legend(fig)
        fig.suptitle("Tail estimates: return levels and the fit's QQ plot, where rtsoak gives them")
        plotting.save_figure(fig, output_dir, "tail", results, caveats)
    return "\n".join(lines) if lines else "no tail estimates in these results"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+", metavar="RESULT", help="result.json or the directory holding it")
    plotting.add_output_argument(parser)
    args = parser.parse_args()
    print(render(load_results(args.results), args.output_dir))


if __name__ == "__main__":
    plotting.run_main(main)
