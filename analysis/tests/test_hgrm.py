"""The `.hgrm` export of a real short run: one file per transport and series, each read as one
distribution by HdrHistogram's plotter, and each row what Java's `outputPercentileDistribution`
prints for the stored histogram (decoded here by the HdrHistogram Python package).

The Python package's own `output_percentile_distribution` is no reference: its percentile
iterator steps 0.1, 0.19, 0.271, ... where Java's steps 0.1, 0.2, 0.3, ..., 0.5, 0.55, ..., and
its footer prints the standard deviation unscaled. `java_rows` steps as Java's
`PercentileIterator` does (percent levels; a level is reached at the first bucket whose
cumulative share is at least the level; one last step at 100 %), and `java_fixed` rounds as
Java's `String.format` does (the shortest decimal of the double, rounded half up).

The plotter (HdrHistogram's GoogleChartsExample/plotFiles.html) is JavaScript in a web page and
cannot run here; `plotter_points` applies its rule for reading a file: every line trimmed and
split at runs of spaces, a line kept when it does not start with `#` and has exactly four
fields, the first the value (y) and the fourth 1/(1-percentile) (x), both numbers."""

from __future__ import annotations

import math
import subprocess
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from conftest import measured_runs, rtsoak_binary
from hdrh.histogram import HdrHistogram

REPORTED = ("send_call", "delivery", "timer", "own_wake", "fanout", "handling", "member_refresh")
TICKS_PER_HALF_DISTANCE = 5
NS_PER_US = 1000.0


def exported(result: Path, tmp_path: Path) -> Path:
    out = tmp_path / "hgrm"
    completed = subprocess.run(
        [str(rtsoak_binary()), "report", "--format", "hgrm", "-o", str(out), str(result)],
        capture_output=True, text=True, timeout=60,
    )
    assert completed.returncode == 0, completed.stderr
    return out


def plotter_points(text: str) -> list[tuple[float, float]]:
    """(x, y) as HdrHistogram's plotter reads them from one file."""
    points = []
    for line in text.split("\n"):
        line = line.strip()
        fields = [f for f in line.split(" ") if f]
        if line[:1] != "#" and len(fields) == 4:
            try:
                points.append((float(fields[3]), float(fields[0])))
            except ValueError:
                continue  # the header's words are not numbers
    return points


def rows(text: str) -> list[list[str]]:
    """The data rows: every line that is neither the header, a `#` footer nor empty."""
    return [line.split() for line in text.splitlines()[2:] if line.strip() and not line.startswith("#")]


def test_one_file_per_transport_and_series_each_one_curve_for_the_plotter(real_result, real_data, tmp_path):
    out = exported(real_result, tmp_path)
    expected = {
        f"{run['transport']}.{series}.hgrm"
        for run in measured_runs(real_data)
        for series in REPORTED
        if run["series"].get(series, {}).get("summary", {}).get("count")
    }
    assert {p.name for p in out.iterdir()} == expected
    for path in sorted(out.iterdir()):
        text = path.read_text()
        points = plotter_points(text)
        data = rows(text)
        # Every row but the last (100 %, three columns) is a point of one curve: x rises.
        assert len(points) == len(data) - 1 >= 2, path.name
        xs = [x for x, _ in points]
        ys = [y for _, y in points]
        assert all(a < b for a, b in zip(xs, xs[1:])), f"{path.name}: x goes back: not one distribution"
        assert all(a <= b for a, b in zip(ys, ys[1:])), f"{path.name}: latency falls along the curve"
        assert len(data[-1]) == 3 and data[-1][1] == "1.000000000000", path.name


def java_fixed(value: float, decimals: int) -> str:
    """Java's `String.format("%.Nf", value)` (Locale.US): shortest decimal, rounded half up."""
    return format(Decimal(repr(value)).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP), "f")


def java_rows(histogram: HdrHistogram) -> list[list[str]]:
    """The data rows Java's outputPercentileDistribution(out, 5, 1000.0) prints."""
    total = histogram.get_total_count()
    digits = histogram.significant_figures
    steps, level = [], 0.0
    recorded = [(s.value_iterated_to, s.total_count_to_this_value) for s in histogram.get_recorded_iterator()]
    for value, count_to_here in recorded:
        while level <= 100.0 * count_to_here / total:
            steps.append((value, level, count_to_here))
            halvings = int(math.log(100.0 / (100.0 - level)) / math.log(2))
            level += 100.0 / (TICKS_PER_HALF_DISTANCE * 2 ** (halvings + 1))
            if count_to_here == total:
                break
    steps.append((recorded[-1][0], 100.0, total))
    rows = []
    for value, level, count in steps:
        row = [java_fixed(value / NS_PER_US, digits), java_fixed(level / 100, 12), str(count)]
        if level != 100.0:
            row.append(java_fixed(1 / (1 - level / 100), 2))
        rows.append(row)
    return rows


def test_every_file_is_what_java_prints_for_the_stored_histogram(real_result, real_data, tmp_path):
    out = exported(real_result, tmp_path)
    once = [run for run in measured_runs(real_data) if sum(r["transport"] == run["transport"] for r in real_data["runs"]) == 1]
    assert once, "every transport ran once in the real run"
    compared = 0
    for run in once:
        for series, data in run["series"].items():
            path = out / f"{run['transport']}.{series}.hgrm"
            if not path.is_file():
                continue
            histogram = HdrHistogram.decode(data["histogram"])
            digits = histogram.significant_figures
            text = path.read_text()
            assert rows(text) == java_rows(histogram), path.name
            footer = [line for line in text.splitlines() if line.startswith("#[")]
            assert footer[1] == (
                f"#[Max     = {java_fixed(histogram.get_max_value() / NS_PER_US, digits):>12}, "
                f"Total count    = {histogram.get_total_count():12d}]"
            ), path.name
            assert footer[2] == f"#[Buckets = {histogram.bucket_count:12d}, SubBuckets     = {histogram.sub_bucket_count:12d}]"
            mean = float(footer[0].split("=")[1].split(",")[0])
            assert math.isclose(mean, histogram.get_mean_value() / NS_PER_US, abs_tol=10**-digits), path.name
            compared += 1
    assert compared >= 2
