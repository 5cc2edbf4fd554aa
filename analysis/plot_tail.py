#!/usr/bin/env python3
"""The tail estimates of a result: per run and series, a return-level plot and a QQ plot of the fit.

Reads rtsoak result.json files (or their directories) holding `runs[].tail` (docs/tail.md). For
every series with a fitted model (estimated, or refused as a heavy tail), the left panel draws
the fitted return level against the return period with the 95 % intervals rtsoak gives for an
hour, a day and a year as a band, and the cluster maxima as empirical points (the k-th largest of
n in a span S returns every S / k); the right panel plots the cluster maxima against the fitted
distribution's quantiles (on the diagonal: the fit describes them). Writes tail.png and tail.svg
and prints one line per series: its estimate or why there is none.
"""

from __future__ import annotations

import argparse
import math

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


def draw(ax_level, ax_qq, title: str, model: dict) -> None:
    period_s = model["period_ns"] / 1e9
    span_s = model["samples"] * period_s
    maxima = np.sort(np.asarray(model["cluster_maxima_ns"], dtype=float))[::-1]
    # Empirical points: the k-th largest cluster maximum returns once every span / k.
    ranks = np.arange(1, len(maxima) + 1)
    ax_level.scatter(span_s / ranks, maxima / 1000.0, s=8, color="black", label="cluster maxima")
    periods = np.logspace(math.log10(span_s / len(maxima)), math.log10(3.2e7), 80)
    levels = [return_level_ns(model, p / period_s) / 1000.0 for p in periods]
    ax_level.plot(periods, levels, color="tab:blue", label="fit")
    spans = [level for level in model["return_levels"] if level.get("level_ns") is not None]
    if spans:
        x = [s["span_s"] for s in spans]
        low = [s["low_ns"] / 1000.0 for s in spans]
        high = [(s["high_ns"] if s.get("high_ns") is not None else math.inf) / 1000.0 for s in spans]
        high = [h if math.isfinite(h) else max(levels) * 10 for h in high]
        ax_level.fill_between(x, low, high, color="tab:blue", alpha=0.2, label="95 % interval")
    ax_level.axvline(span_s, color="gray", linestyle="--", linewidth=0.8)
    ax_level.set_xscale("log")
    # Far intervals span decades: a linear axis would flatten the data to a line.
    ax_level.set_yscale("log")
    ax_level.set_xlabel("return period (s); dashed: span measured")
    ax_level.set_ylabel("latency (us)")
    ax_level.set_title(title, fontsize=9)
    ax_level.legend(fontsize=7)
    excesses = np.sort(maxima - model["threshold_ns"])
    n = len(excesses)
    expected = gpd_quantile((np.arange(1, n + 1) - 0.5) / n, model["sigma_ns"], model["xi"])
    ax_qq.scatter(expected / 1000.0, excesses / 1000.0, s=8, color="black")
    top = max(float(expected.max()), float(excesses.max())) / 1000.0
    ax_qq.plot([0, top], [0, top], color="tab:blue")
    ax_qq.set_xlabel("fitted quantile (us over threshold)")
    ax_qq.set_ylabel("cluster maximum (us over threshold)")
    ax_qq.set_title(f"QQ: xi {model['xi']:.2f}, A^2 p {model['fit_test']['p_value']:.2f}", fontsize=9)


def render(results, output_dir) -> str:
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
        if model is not None and len(panels) < MAX_PANELS:
            panels.append((f"{label} {series} ({status})", model))
    if panels:
        fig, axes = plt.subplots(len(panels), 2, figsize=(11, 3.6 * len(panels)), squeeze=False)
        for (title, model), (ax_level, ax_qq) in zip(panels, axes):
            draw(ax_level, ax_qq, title, model)
        fig.suptitle("Tail estimates: return levels and the fit's QQ plot")
        fig.tight_layout()
        plotting.save_figure(fig, output_dir, "tail", results)
    return "\n".join(lines) if lines else "no tail estimates in these results"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+", metavar="RESULT", help="result.json or the directory holding it")
    plotting.add_output_argument(parser)
    args = parser.parse_args()
    print(render(load_results(args.results), args.output_dir))


if __name__ == "__main__":
    plotting.run_main(main)
