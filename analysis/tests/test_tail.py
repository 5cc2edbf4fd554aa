"""The tail estimates: rtsoak's generalized Pareto fit agrees with scipy's on the same cluster
maxima (seeded samples of known shape, and a real run's where it held a tail), and plot_tail
draws the return-level and QQ plots of a real result."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest
from conftest import REPO_DIR, assert_images, rtsoak_binary, run_script, saved_compare
from scipy.optimize import minimize
from scipy.stats import genpareto

# A low threshold and a long outlier list, so a few seconds of this machine's spikes hold a tail.
TAIL_PROFILE_CHANGES = {
    "duration_s = 3": "duration_s = 8",
    "threshold_us = 100": "threshold_us = 20",
    "outliers_max = 1000": "outliers_max = 20000",
    'explain = "auto"': 'explain = "off"',
}


@pytest.fixture(scope="session")
def tail_result(tmp_path_factory):
    profile = (REPO_DIR / "profiles" / "ci.toml").read_text()
    for old, new in TAIL_PROFILE_CHANGES.items():
        assert old in profile, f"profiles/ci.toml no longer holds {old!r}"
        profile = profile.replace(old, new)
    path = tmp_path_factory.mktemp("profile") / "tail.toml"
    path.write_text(profile)
    return saved_compare(tmp_path_factory, "tail", ["compare", "-q", "--profile", str(path), "-t", "eventfd,futex"])


def fitted_models(result_path):
    data = json.loads(result_path.read_text())
    for run in data["runs"]:
        for series, estimate in (run.get("tail") or {}).items():
            model = estimate if estimate["status"] == "estimated" else estimate.get("model")
            if model is not None:
                yield f"{run['transport']} {series}", model


def log_likelihood(excesses, xi, sigma):
    return float(np.sum(genpareto.logpdf(excesses, xi, loc=0, scale=sigma)))


# rtsoak fits within xi >= -1: below it the likelihood has no maximum (it grows without bound as
# the fitted endpoint nears the largest excess), so scipy's fit is compared within the same domain.
XI_MIN = -1.0


def scipy_fit(excesses):
    """scipy's maximum-likelihood fit, within xi >= XI_MIN: genpareto.fit, else (where that
    leaves the domain) the best of bounded Nelder-Mead searches from several starts."""
    xi, _, sigma = genpareto.fit(excesses, floc=0)
    if xi >= XI_MIN:
        return xi, sigma

    def negative_log_likelihood(params):
        value = log_likelihood(excesses, params[0], np.exp(params[1]))
        return -value if np.isfinite(value) else np.inf

    largest, mean = float(np.max(excesses)), float(np.mean(excesses))
    starts = [(XI_MIN, largest), (-0.9, largest), (-0.5, 1.5 * mean), (0.0, mean)]
    searches = [
        minimize(
            negative_log_likelihood,
            (shape, np.log(scale)),
            method="Nelder-Mead",
            bounds=[(XI_MIN, 5.0), (None, None)],
            options={"xatol": 1e-10, "fatol": 1e-10, "maxiter": 20_000},
        )
        for shape, scale in starts
    ]
    best = min(searches, key=lambda search: search.fun)
    return float(best.x[0]), float(np.exp(best.x[1]))


def assert_fits_agree(label, excesses, xi_ours, sigma_ours):
    xi, sigma = scipy_fit(excesses)
    ours = log_likelihood(excesses, xi_ours, sigma_ours)
    theirs = log_likelihood(excesses, xi, sigma)
    agree = abs(xi - xi_ours) <= max(0.02, 0.05 * abs(xi)) and abs(sigma / sigma_ours - 1) <= 0.05
    # Where the optimisers part, the better maximum of the same likelihood must be rtsoak's.
    assert agree or ours >= theirs - 1e-6, (
        f"{label}: rtsoak xi {xi_ours:.4f} sigma {sigma_ours:.1f} (log-lik {ours:.4f}), "
        f"scipy xi {xi:.4f} sigma {sigma:.1f} (log-lik {theirs:.4f})"
    )
    print(f"{label}: xi {xi_ours:.4f} vs scipy {xi:.4f}, sigma {sigma_ours:.1f} vs {sigma:.1f}")


def gpd_fit_binary():
    """rtsoak's fit as a program (examples/gpd_fit.rs), beside the rtsoak binary the tests use
    (`cargo test` builds the examples), else built here."""
    binary_dir = rtsoak_binary().parent
    candidate = binary_dir / "examples" / "gpd_fit"
    if not candidate.is_file():
        # In the same profile as that binary, so the example lands where it is looked for.
        profile = ["--release"] if binary_dir.name == "release" else []
        subprocess.run(["cargo", "build", "--locked", *profile, "--example", "gpd_fit"], cwd=REPO_DIR, check=True)
    assert candidate.is_file(), f"no {candidate}: run `cargo build --example gpd_fit`"
    return candidate


# -1.2 lies outside the domain both fit in: the fits meet on its edge.
@pytest.mark.parametrize("true_xi", [-1.2, -0.3, -0.08, 0.0, 0.25, 0.6])
def test_rtsoaks_fit_agrees_with_scipys_on_samples_of_a_known_shape(true_xi):
    # Cluster maxima as a soak gives them: 30 to 400 excesses in nanoseconds, seeded so the
    # check is the same on every machine.
    for seed, n in [(1, 30), (2, 120), (3, 400)]:
        rng = np.random.default_rng(seed)
        excesses = genpareto.rvs(true_xi, scale=8_000.0, size=n, random_state=rng)
        completed = subprocess.run(
            [str(gpd_fit_binary())], input=" ".join(str(float(y)) for y in excesses), capture_output=True, text=True, check=True
        )
        fitted = json.loads(completed.stdout)
        assert fitted is not None, f"xi {true_xi}, {n} excesses: rtsoak found nothing to fit"
        assert_fits_agree(f"xi {true_xi}, {n} excesses", excesses, fitted["xi"], fitted["sigma"])


def test_rtsoaks_fits_of_a_real_run_agree_with_scipys(tail_result):
    # What this machine's spikes gave, where they held enough clusters for a fit; the fit itself
    # is checked on every machine by the test above.
    for label, model in fitted_models(tail_result):
        excesses = np.asarray(model["cluster_maxima_ns"], dtype=float) - model["threshold_ns"]
        assert_fits_agree(label, excesses, model["xi"], model["sigma_ns"])


def test_the_return_levels_follow_from_the_recorded_parameters(tail_result):
    for label, model in fitted_models(tail_result):
        for level in model["return_levels"]:
            if level["level_ns"] is None:
                continue
            expected = level["span_s"] * 1e9 / model["period_ns"] * model["clusters"] / model["samples"]
            xi, sigma, u = model["xi"], model["sigma_ns"], model["threshold_ns"]
            recomputed = u + sigma * np.log(expected) if abs(xi) < 1e-7 else u + sigma / xi * (expected**xi - 1)
            # The level is never below an exponential tail's (docs/result-schema.md): the
            # larger of the generalized Pareto level and `exponential_ns`, where recorded.
            exponential = level.get("exponential_ns")
            if exponential is not None:
                recomputed = max(recomputed, exponential)
            assert recomputed == pytest.approx(level["level_ns"], rel=1e-6), label


def test_plot_tail_draws_the_return_level_and_qq_plots(tail_result, tmp_path):
    completed = run_script("plot_tail.py", tail_result, "-o", tmp_path)
    assert "send_call" in completed.stdout or "delivery" in completed.stdout, completed.stdout
    if list(fitted_models(tail_result)):
        assert_images(tmp_path, "tail")
