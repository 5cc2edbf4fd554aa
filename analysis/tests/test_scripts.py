"""Every analysis script runs on a real rtsoak result, draws its images, and prints figures that
agree with rtsoak's own summary of the same result: counts and over-threshold counts exactly,
maxima within HdrHistogram precision (0.1 %)."""

from __future__ import annotations

import copy
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from conftest import assert_images, edited_copy, measured_runs, parse_table, run_script, write_result

# The scripts' modules, for the tests that run a render in this process (wherever pytest runs).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

HEADLINE = ("send_call", "delivery")
HDR_PRECISION = 0.001
SCRIPTS = (
    "plot_histogram.py",
    "plot_percentiles.py",
    "plot_intervals.py",
    "plot_trend.py",
    "compare_results.py",
    "report.py",
    "plot_causes.py",
)


def summary(data, transport, series):
    run = next(r for r in data["runs"] if r["transport"] == transport)
    return run["series"][series]["summary"]


def us_to_ns(text: str) -> int:
    """The scripts print microseconds with three decimals: exact nanoseconds."""
    return round(float(text) * 1000.0)


def within_hdr_precision(value_ns: float, exact_ns: int) -> bool:
    return abs(value_ns - exact_ns) <= max(exact_ns * HDR_PRECISION, 1.0)


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_script_explains_itself_with_help(script):
    assert "usage:" in run_script(script, "--help").stdout


def test_the_real_run_measured_at_least_one_transport(real_data):
    assert measured_runs(real_data), "rtsoak measured no transport; the other tests would prove nothing"


def test_histogram_prints_rtsoak_counts_exactly_and_maxima_within_hdr_precision(real_result, real_data, tmp_path):
    rows = parse_table(run_script("plot_histogram.py", real_result, "-o", tmp_path).stdout)
    assert_images(tmp_path, "histogram")
    measured = measured_runs(real_data)
    assert len(rows) == len(measured) * len(HEADLINE)
    for row in rows:
        exact = summary(real_data, row["label"], row["series"])
        assert int(row["count"]) == exact["count"]
        assert int(row["over_threshold"]) == exact["over_threshold"]
        assert within_hdr_precision(us_to_ns(row["max_us"]), exact["max_ns"]), row


def test_percentiles_agree_with_rtsoak_summary(real_result, real_data, tmp_path):
    rows = parse_table(run_script("plot_percentiles.py", real_result, "-o", tmp_path).stdout)
    assert_images(tmp_path, "percentiles")
    assert rows, "no curve was plotted"
    for row in rows:
        exact = summary(real_data, row["label"], row["series"])
        assert int(row["count"]) == exact["count"]
        assert us_to_ns(row["max_us"]) == exact["max_ns"]
        assert within_hdr_precision(us_to_ns(row["hdr_max_us"]), exact["max_ns"])
        for column, key in (("p50_us", "p50_ns"), ("p99_us", "p99_ns"), ("p99.9_us", "p99_9_ns"), ("p99.99_us", "p99_99_ns")):
            assert within_hdr_precision(us_to_ns(row[column]), exact[key]), (row, column)


def test_interval_figures_add_up_to_the_run_summary(real_result, real_data, tmp_path):
    rows = parse_table(run_script("plot_intervals.py", real_result, "-o", tmp_path).stdout)
    assert_images(tmp_path, "intervals")
    for run in measured_runs(real_data):
        for series in HEADLINE:
            mine = [r for r in rows if r["label"] == run["transport"] and r["series"] == series]
            exact = run["series"][series]["summary"]
            with_series = [i for i in run["intervals"] if series in i["series"]]
            assert len(mine) == len(with_series) >= 2
            assert sum(int(r["count"]) for r in mine) == exact["count"]
            assert sum(int(r["over_threshold"]) for r in mine) == exact["over_threshold"]
            assert max(us_to_ns(r["max_us"]) for r in mine) == exact["max_ns"]


def thirty_nights(real_data, directory):
    """30 synthetic nights edited from the real result: night n has maxima x(1 + n/10), n more over."""
    start = datetime(2026, 1, 1, 2, 0, tzinfo=timezone.utc)
    paths = []
    for night in range(30):
        started_at = (start + timedelta(days=night)).strftime("%Y-%m-%dT%H:%M:%SZ")
        variant = edited_copy(real_data, started_at, 1 + night / 10, night)
        paths.append(write_result(variant, directory / f"night-{night:02d}"))
    return paths


def test_trend_plots_thirty_nights_with_the_edited_figures(real_data, tmp_path):
    paths = thirty_nights(real_data, tmp_path / "nights")
    rows = parse_table(run_script("plot_trend.py", *reversed(paths), "--baseline", paths[3], "-o", tmp_path).stdout)
    assert_images(tmp_path, "trend")
    measured = measured_runs(real_data)
    assert len(rows) == 30 * len(measured) * len(HEADLINE)
    for night in (0, 17, 29):
        night_rows = [r for r in rows if r["started_at"].startswith(f"2026-01-{night + 1:02d}")]
        for row in night_rows:
            exact = summary(real_data, row["transport"], row["series"])
            over = exact["over_threshold"] + night
            assert int(row["over_threshold"]) == over
            # Printed to one decimal: half a unit in the last place, and the float error of a tie.
            assert float(row["per_million"]) == pytest.approx(over * 1e6 / exact["count"], abs=0.05 + 1e-9)
            assert us_to_ns(row["max_us"]) == int(exact["max_ns"] * (1 + night / 10))


def test_trend_rows_come_in_time_order_whatever_the_argument_order(real_data, tmp_path):
    paths = thirty_nights(real_data, tmp_path / "nights")[:5]
    rows = parse_table(run_script("plot_trend.py", paths[3], paths[0], paths[4], "-o", tmp_path).stdout)
    for transport, series in {(r["transport"], r["series"]) for r in rows}:
        stamps = [r["started_at"] for r in rows if (r["transport"], r["series"]) == (transport, series)]
        assert len(stamps) == 3 and stamps == sorted(stamps)


def test_compare_shows_baseline_and_new_side_by_side(real_result, real_data, tmp_path):
    new = write_result(edited_copy(real_data, real_data["started_at"], 2.0, 5), tmp_path / "new")
    rows = parse_table(run_script("compare_results.py", real_result, new, "-o", tmp_path).stdout, max_columns=5)
    assert_images(tmp_path, "compare")
    for run in measured_runs(real_data):
        exact = run["series"]["delivery"]["summary"]
        figure = {r["figure"]: r for r in rows if r["transport"] == run["transport"]}
        assert int(figure["messages"]["baseline"]) == int(figure["messages"]["new"]) == run["integrity"]["sent"]
        assert int(figure["deliveries_over"]["baseline"]) == exact["over_threshold"]
        assert int(figure["deliveries_over"]["new"]) == exact["over_threshold"] + 5
        assert us_to_ns(figure["longest_delivery_us"]["new"]) == int(exact["max_ns"] * 2)
        assert figure["deliveries_over"]["change"].startswith("+5")


def test_report_is_one_phone_readable_page_with_the_table_and_every_plot(real_result, real_data, tmp_path):
    completed = run_script("report.py", real_result, "--baseline", real_result, "-o", tmp_path / "report")
    page = (tmp_path / "report" / "report.html").read_text()
    assert 'name="viewport"' in page and "max-width: 100%" in page and "@media (max-width: 600px)" in page
    for name in ("histogram", "percentiles", "intervals", "compare"):
        assert_images(tmp_path / "report", name)
        assert f'src="{name}.png"' in page
    rows = {r["transport"]: r for r in parse_table(completed.stdout, max_columns=None)}
    for run in measured_runs(real_data):
        send = run["series"]["send_call"]["summary"]
        row = rows[run["transport"]]
        assert int(row["messages"]) == run["integrity"]["sent"]
        assert int(row["sends_over"]) == send["over_threshold"]
        assert us_to_ns(row["longest_send_us"]) == send["max_ns"]
        assert us_to_ns(row["send_p99_9_us"]) == pytest.approx(send["p99_9_ns"], rel=HDR_PRECISION)
        assert int(row["lost"]) == run["integrity"]["lost"]
        assert f">{run['transport']}<" in page


def with_rounds(real_data, rounds: int) -> dict:
    """The real result as if compare had run every transport `rounds` times (same figures each)."""
    data = copy.deepcopy(real_data)
    data["runs"] = []
    for number in range(1, rounds + 1):
        for run in copy.deepcopy(real_data["runs"]):
            run["round"] = number
            data["runs"].append(run)
    return data


def test_rounds_of_a_transport_merge_their_histograms_and_counts(real_data, tmp_path):
    path = write_result(with_rounds(real_data, 3), tmp_path / "rounds")
    rows = parse_table(run_script("plot_histogram.py", path, "-o", tmp_path).stdout)
    for row in rows:
        exact = summary(real_data, row["label"], row["series"])
        assert int(row["count"]) == 3 * exact["count"]
        assert int(row["over_threshold"]) == 3 * exact["over_threshold"]
        assert within_hdr_precision(us_to_ns(row["max_us"]), exact["max_ns"])


def test_intervals_label_each_round_of_a_transport(real_data, tmp_path):
    path = write_result(with_rounds(real_data, 2), tmp_path / "rounds")
    stdout = run_script("plot_intervals.py", path, "-o", tmp_path).stdout
    transport = measured_runs(real_data)[0]["transport"]
    assert f"{transport} round 1" in stdout and f"{transport} round 2" in stdout


def test_scripts_tolerate_noise_fields_unknown_fields_and_absent_series(real_data, tmp_path):
    data = copy.deepcopy(real_data)
    data["something_new"] = {"added": "later"}
    for run in data["runs"]:
        run["noise"] = {"enabled": True, "kind": "future"}
        if run["status"] == "unsupported":
            continue  # a run that never ran has no series to edit
        run["series"]["noise_send_call"] = copy.deepcopy(run["series"]["send_call"])
        run["series"].pop("delivery")
        for interval in run["intervals"]:
            interval["series"].pop("delivery", None)
    path = write_result(data, tmp_path / "noisy")
    for script in ("plot_histogram.py", "plot_percentiles.py", "plot_intervals.py", "plot_trend.py"):
        run_script(script, path, "-o", tmp_path)
    run_script("compare_results.py", path, path, "-o", tmp_path)
    rows = parse_table(run_script("report.py", path, "-o", tmp_path / "report").stdout)
    ran = [row for row in rows if not row["status"].startswith("unsupported")]
    assert ran and all(row["noise"] == "on" for row in ran)
    assert all(int(row["deliveries_over"]) == 0 for row in ran)


def test_a_missing_file_is_refused_with_what_to_do(tmp_path):
    completed = run_script("plot_histogram.py", tmp_path / "nothing.json", expect_code=2)
    assert "cannot read it" in completed.stderr and "pass a result.json" in completed.stderr
    assert "Traceback" not in completed.stderr


def test_an_unknown_schema_version_is_refused(real_data, tmp_path):
    data = dict(real_data, schema_version=99)
    completed = run_script("report.py", write_result(data, tmp_path / "future"), "-o", tmp_path, expect_code=2)
    assert "schema_version 99" in completed.stderr
    assert not (tmp_path / "report.html").exists()


def test_a_damaged_histogram_is_refused_naming_the_transport_and_series(real_data, tmp_path):
    data = copy.deepcopy(real_data)
    run = measured_runs(data)[0]
    run["series"]["delivery"]["histogram"] = "not a histogram"
    completed = run_script("plot_histogram.py", write_result(data, tmp_path / "damaged"), "-o", tmp_path, expect_code=2)
    assert f"{run['transport']}: the delivery histogram cannot be decoded" in completed.stderr
    assert "regenerate it with rtsoak" in completed.stderr and "Traceback" not in completed.stderr
    assert not (tmp_path / "histogram.png").exists()


def test_a_file_that_is_not_json_is_refused(tmp_path):
    bad = tmp_path / "result.json"
    bad.write_text("{ half a result")
    completed = run_script("plot_percentiles.py", bad, expect_code=2)
    assert "not JSON" in completed.stderr


def draw_in_process(module_name, *args):
    """Run a script's render in this process, so what it drew can be read from plotting.DRAWN."""
    import importlib

    module = importlib.import_module(module_name)
    module.render(*args)
    return importlib.import_module("plotting").DRAWN


def test_every_figure_says_where_its_figures_came_from_and_what_they_are_worth(real_result, real_data, tmp_path):
    from rtsoak_results import load_result

    result = load_result(str(real_result))
    drawn = {}
    drawn.update(draw_in_process("plot_histogram", [result], list(HEADLINE), tmp_path))
    drawn.update(draw_in_process("plot_percentiles", [result], list(HEADLINE), tmp_path))
    drawn.update(draw_in_process("plot_intervals", result, list(HEADLINE), tmp_path))
    drawn.update(draw_in_process("compare_results", result, result, tmp_path))
    host, plan = real_data["host"], real_data["plan"]
    rt = "PREEMPT_RT" if host["preempt_rt"] else "NOT a PREEMPT_RT kernel"
    for name in ("histogram", "percentiles", "intervals", "compare"):
        caption = drawn[name]["caption"]
        assert f"Linux {host['kernel_release']}" in caption, (name, caption)
        assert rt in caption, (name, caption)
        assert f"period {plan['period_ns'] / 1000:g} us" in caption, (name, caption)
        assert f"{plan['duration_ns'] / 1e9:g} s per transport" in caption, (name, caption)
        if real_data["caveats"]:
            # Version 2 records each caveat as {severity, kind, text}, most serious first.
            first = real_data["caveats"][0]
            assert f"caveat: {first['text']}" in caption, (name, caption)
        # The caption is text in the SVG, so it travels with the figure.
        assert rt in (tmp_path / f"{name}.svg").read_text(), name


def test_latency_axes_start_near_the_data_not_at_drained_nanoseconds(real_result, real_data, tmp_path):
    from rtsoak_results import load_result

    result = load_result(str(real_result))
    drawn = draw_in_process("plot_histogram", [result], list(HEADLINE), tmp_path)
    for axes, name in zip(drawn["histogram"]["axes"], HEADLINE):
        lows = [
            run["series"][name]["summary"]["p50_ns"] / 1000.0 for run in measured_runs(real_data) if name in run["series"]
        ]
        low, high = axes["xlim"]
        assert low >= min(lows) / 100, f"{name}: the axis starts at {low} us, two decades below every median"
        assert axes["xlabel"].startswith("latency (us, log scale")
    drawn = draw_in_process("plot_percentiles", [result], list(HEADLINE), tmp_path)
    for axes, name in zip(drawn["percentiles"]["axes"], HEADLINE):
        lows = [
            run["series"][name]["summary"]["p50_ns"] / 1000.0 for run in measured_runs(real_data) if name in run["series"]
        ]
        assert axes["ylim"][0] >= min(lows) / 100, (name, axes["ylim"])


def test_trend_dates_and_compare_legends_never_collide(real_data, tmp_path):
    from rtsoak_results import load_result, load_results

    paths = thirty_nights(real_data, tmp_path / "nights")
    drawn = draw_in_process("plot_trend", load_results([str(p) for p in paths]), None, tmp_path)
    for axes in drawn["trend"]["axes"]:
        assert not axes["xticklabels_collide"], axes["xticklabels"]
        assert len(axes["xticklabels"]) <= 9, axes["xticklabels"]
    new = write_result(edited_copy(real_data, real_data["started_at"], 2.0, 5), tmp_path / "new")
    drawn = draw_in_process("compare_results", load_result(str(paths[0])), load_result(str(new)), tmp_path)
    bar_axes = [a for a in drawn["compare"]["axes"] if "longest" in a["title"]]
    assert bar_axes
    legend = drawn["compare"]["legend"]
    assert legend["entries"] and not legend["covers"], legend


def ring_setup_comparison(data: dict) -> dict:
    """A ring-setup comparison made from a real result: each run twice, as `defer-taskrun` and
    `none`, so the labels are as long as they get (`eventfd-multishot (defer-taskrun)`)."""
    variant = copy.deepcopy(data)
    variant["plan"]["ring_setup_variants"] = ["defer-taskrun", "none"]
    runs = []
    for setup in ("defer-taskrun", "none"):
        for run in data["runs"]:
            run = copy.deepcopy(run)
            run["ring_setup_requested"] = setup
            runs.append(run)
    variant["runs"] = runs
    return variant


def test_compare_bar_labels_of_a_ring_setup_comparison_do_not_overlap(real_data, tmp_path):
    from rtsoak_results import load_result

    path = write_result(ring_setup_comparison(real_data), tmp_path / "setups")
    result = load_result(str(path))
    drawn = draw_in_process("compare_results", result, result, tmp_path)
    bar_axes = [a for a in drawn["compare"]["axes"] if "longest" in a["title"]]
    assert bar_axes
    for axes in bar_axes:
        assert any("(defer-taskrun)" in label for label in axes["xticklabels"]), axes["xticklabels"]
        assert not axes["xticklabels_collide"], axes["xticklabels"]


@pytest.mark.parametrize("script", ("plot_histogram", "plot_percentiles", "plot_intervals"))
def test_one_legend_per_figure_covers_no_curve_and_no_label(script, real_data, tmp_path):
    from rtsoak_results import load_result

    # The two-setup comparison draws twice the curves: the crowded case.
    path = write_result(ring_setup_comparison(real_data), tmp_path / "setups")
    name = script.removeprefix("plot_")
    result = load_result(str(path))
    drawn = draw_in_process(script, result if script == "plot_intervals" else [result], list(HEADLINE), tmp_path)
    for axes in drawn[name]["axes"]:
        assert not axes["legend"], (name, axes["title"], "a legend inside the axes")
    legend = drawn[name]["legend"]
    assert legend["entries"], name
    # Not over any axes (its curves, ticks, tick labels, axis labels or title), nor the title.
    assert not legend["covers"], (name, legend["covers"])


def test_causes_add_up_to_the_explainers_counts_and_say_what_they_are(explained_result, tmp_path):
    import json
    import os

    from rtsoak_results import cause_words, load_result

    data = json.loads(explained_result.read_text())
    if os.geteuid() != 0:
        assert all(r["explanation"]["tracing"].get("unavailable") for r in measured_runs(data))
        run_script("plot_causes.py", explained_result, "-o", tmp_path, expect_code=2)
        return
    completed = run_script("plot_causes.py", explained_result, "-o", tmp_path)
    assert_images(tmp_path, "causes")
    rows = {}
    for line in completed.stdout.splitlines()[1:]:
        words = line.split()
        label, series, count, share = words[0], words[1], int(words[-3]), float(words[-2])
        rows.setdefault((label, series), []).append((" ".join(words[2:-3]), count, share))
    for run in measured_runs(data):
        for name in HEADLINE:
            blame = run["explanation"]["series"][name]
            printed = rows[(run["transport"], name)]
            # Every cause and the unexplained, exactly as the result counts them.
            assert sum(count for _, count, _ in printed) == blame["kept"], printed
            by_cause = dict((cause, count) for cause, count, _ in printed)
            assert by_cause["unexplained"] == blame["unexplained"]
            for cause in blame["causes"]:
                assert by_cause[cause_words(cause["cause"])] == cause["count"], cause
            for cause, count, share in printed:
                assert abs(share - 100.0 * count / max(blame["kept"], 1)) < 0.06, (cause, share)
    drawn = draw_in_process("plot_causes", [load_result(str(explained_result))], list(HEADLINE), tmp_path)
    axes = drawn["causes"]["axes"][0]
    assert axes["title"].startswith("Why the spikes happened")
    assert axes["xlabel"] == "share of the kept spikes (%)"
    legend = " ".join(axes["legend"]).replace("\n", " ")
    for run in measured_runs(data):
        for name in HEADLINE:
            causes = run["explanation"]["series"][name]["causes"]
            if causes:
                assert cause_words(causes[0]["cause"]) in legend, (causes[0], legend)
    assert data["host"]["kernel_release"] in drawn["causes"]["caption"]


def test_a_lock_cause_reads_as_rtsoak_words_it_from_its_id_or_an_older_builds_words():
    from rtsoak_results import cause_words

    for lock, words in [
        ("sleeping_spinlock", "sleeping spinlock (rt_mutex)"),
        ("sleeping spinlock (rt_mutex)", "sleeping spinlock (rt_mutex)"),
        ("pi_futex", "PI futex (rt_mutex)"),
        ("PI futex (rt_mutex)", "PI futex (rt_mutex)"),
        ("rt_mutex", "rt_mutex"),
        ("rw_semaphore", "rw_semaphore"),
        ("other", "lock"),
        ("ww_mutex", "ww_mutex"),
    ]:
        assert cause_words({"kind": "lock", "lock": lock}) == f"blocked on a {words}"


def test_causes_refuse_a_result_whose_spikes_were_not_explained(real_data, tmp_path):
    data = copy.deepcopy(real_data)
    for run in data["runs"]:
        run.pop("explanation", None)
    completed = run_script("plot_causes.py", write_result(data, tmp_path / "r"), "-o", tmp_path, expect_code=2)
    assert "no run has an explanation" in completed.stderr
    assert "--explain" in completed.stderr


def ring_setup_variants(data: dict, setups: list[str]) -> dict:
    """A ring-setup comparison made of a real result: each run once per setup, as rtsoak writes
    it (the registry name in transport, the setup in ring_setup_requested)."""
    variant = copy.deepcopy(data)
    variant["plan"]["ring_setup_variants"] = setups
    variant["runs"] = [dict(copy.deepcopy(run), ring_setup_requested=setup) for run in data["runs"] for setup in setups]
    return variant


def test_a_plain_result_and_a_ring_setup_comparison_pair_by_what_they_measured(real_data, tmp_path):
    plain = write_result(real_data, tmp_path / "plain")
    setups = write_result(ring_setup_variants(real_data, ["defer-taskrun", "coop-taskrun"]), tmp_path / "setups")
    stdout = run_script("compare_results.py", plain, setups, "-o", tmp_path).stdout
    transport = measured_runs(real_data)[0]["transport"]

    def messages(label):
        """(baseline, new) of the messages row of `label` (a label holds a space)."""
        line = next(line for line in stdout.splitlines() if line.startswith(f"{label} ") and " messages " in line)
        return tuple(line[len(label):].split()[1:3])

    # The plain result ran with the plan's defer-taskrun: its row meets that setup's row.
    baseline, new = messages(f"{transport} (defer-taskrun)")
    assert baseline != "-" and baseline == new, (baseline, new)
    baseline, new = messages(f"{transport} (coop-taskrun)")
    assert baseline == "-" and new != "-", (baseline, new)


def test_a_version_1_result_reads_its_ring_setup_label_back_as_name_and_setup(real_data, tmp_path):
    from rtsoak_results import load_result

    old = ring_setup_variants(real_data, ["none"])
    old["schema_version"] = 1
    for run in old["runs"]:
        run["transport"] = f"{run['transport']} (none)"
    result = load_result(str(write_result(old, tmp_path / "v1")))
    transport = measured_runs(real_data)[0]["transport"]
    row = result.transports[f"{transport} (none)"]
    assert (row.transport, row.ring_setup) == (transport, "none")


def test_the_report_shows_a_dash_for_what_was_not_measured_or_does_not_decode(real_data, tmp_path):
    data = copy.deepcopy(real_data)
    run = measured_runs(data)[0]
    run["series"]["delivery"]["histogram"] = "bm90IGEgaGlzdG9ncmFt"
    data["runs"].append({"transport": "doorbell", "status": "unsupported", "reason": "needs IORING_MSG_DOORBELL",
                         "round": 1, "integrity": {"sent": 0}, "series": {}, "intervals": []})
    from summary_table import result_rows, transport_row
    from rtsoak_results import load_result

    result = load_result(str(write_result(data, tmp_path / "damaged")))
    rows = {row["transport"]: row for row in result_rows(result)}
    assert all(rows["doorbell"][key] == "-" for key in ("messages", "longest_send_us", "delivery_p99_9_us", "lost"))
    damaged = rows[run["transport"]]
    assert damaged["delivery_p99_9_us"] == "-" and damaged["delivery_p99_99_us"] == "-", damaged
    assert damaged["longest_delivery_us"] != "-", "the exact longest still stands"
    assert transport_row(result.transports["doorbell"])["status"] == "unsupported"


def test_the_report_tells_the_story_top_down_and_its_headline_fits_the_page(real_result, real_data, tmp_path):
    run_script("report.py", real_result, "-o", tmp_path / "report")
    page = (tmp_path / "report" / "report.html").read_text()
    order = ['class="verdict', 'class="headline"', "The decision", "What these figures are worth", "<h2>Plots",
             "<h2>Details"]
    positions = [page.find(marker) for marker in order]
    assert all(p >= 0 for p in positions) and positions == sorted(positions), positions
    for sentence in [s["sentence"] for s in real_data["decision"]["series"]]:
        assert sentence.split(":")[0] in page
    # The headline has nine columns whose headers wrap; at the page's 0.85em (about 7 px per
    # character) a row of at most 110 characters fits the 1100 px body without scrolling.
    import re
    headline = page[page.find('class="headline"'):page.find("</table>", page.find('class="headline"'))]
    for row in re.findall(r"<tr>(.*?)</tr>", headline):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
        if cells:
            assert len(cells) == 9 and sum(len(c) for c in cells) + 2 * 9 <= 110, cells


def drawn_colors(drawn: dict) -> dict[str, str]:
    """Transport name -> colour of every legend entry of a figure that names a transport."""
    import plotting

    colors = {}
    for label, color in drawn["legend"]["colors"].items():
        if label.startswith(("threshold", "baseline", "new")):
            continue
        colors.setdefault(plotting.transport_name(label), set()).add(color)
    return colors


def test_each_transport_keeps_one_colour_of_its_own_in_every_plot(real_result, real_data, tmp_path):
    import plotting
    from rtsoak_results import load_result

    result = load_result(str(real_result))
    draw_in_process("plot_histogram", [result], list(HEADLINE), tmp_path)
    draw_in_process("plot_percentiles", [result], list(HEADLINE), tmp_path)
    draw_in_process("plot_intervals", result, list(HEADLINE), tmp_path)
    drawn = draw_in_process("compare_results", result, result, tmp_path)
    seen: dict[str, set] = {}
    for name in ("histogram", "percentiles", "intervals", "compare"):
        for transport, colors in drawn_colors(drawn[name]).items():
            seen.setdefault(transport, set()).update(colors)
    measured = {run["transport"] for run in measured_runs(real_data)}
    assert measured <= set(seen), (measured, seen)
    for transport, colors in seen.items():
        assert len(colors) == 1, f"{transport} is drawn in {colors}"
    used = [next(iter(colors)) for colors in seen.values()]
    assert len(set(used)) == len(used), f"two transports share a colour: {seen}"
    # Every transport rtsoak registers has a colour of its own in the fixed map (the real run
    # lists the unsupported ones too), none of them the threshold's red.
    registered = {run["transport"] for run in real_data["runs"]}
    assert registered <= set(plotting.TRANSPORT_COLORS), registered - set(plotting.TRANSPORT_COLORS)
    assert len(set(plotting.TRANSPORT_COLORS.values())) == len(plotting.TRANSPORT_COLORS)
    assert "tab:red" not in plotting.TRANSPORT_COLORS.values()


def one_interval(data: dict, drop_outliers: bool = False) -> dict:
    """The real result as a default profile's 10 s run writes it: one interval per run (its
    intervals' counters added, as rtsoak merges them); with `drop_outliers`, an outlier list that
    did not keep every spike."""
    variant = copy.deepcopy(data)
    for run in measured_runs(variant):
        intervals = run["intervals"]
        merged = {"index": 0, "start_ns": 0, "length_ns": sum(int(i["length_ns"]) for i in intervals), "series": {}}
        for name in {n for i in intervals for n in i["series"]}:
            parts = [i["series"][name]["stats"] for i in intervals if name in i["series"]]
            merged["series"][name] = {"stats": {
                "count": sum(p["count"] for p in parts),
                "min_ns": min(p["min_ns"] for p in parts),
                "max_ns": max(p["max_ns"] for p in parts),
                "over_threshold": sum(p["over_threshold"] for p in parts),
            }}
        run["intervals"] = [merged]
        if drop_outliers:
            for series in run["series"].values():
                series["outliers"] = series["outliers"][: len(series["outliers"]) // 2]
                series["outliers_dropped"] = 1
    return variant


def test_a_run_of_one_interval_is_binned_finer_from_its_spikes_own_times(real_data, tmp_path):
    from rtsoak_results import load_result

    path = write_result(one_interval(real_data), tmp_path / "one")
    rows = parse_table(run_script("plot_intervals.py", path, "-o", tmp_path).stdout)
    assert {r["interval"] for r in rows} == {"0"}, "the table still lists the one interval"
    drawn = draw_in_process("plot_intervals", load_result(str(path)), list(HEADLINE), tmp_path)
    over_axes = [a for a in drawn["intervals"]["axes"] if "over threshold" in a["title"]]
    spikes = [a for a in drawn["intervals"]["axes"] if "every kept spike" in a["title"]]
    assert len(over_axes) == len(spikes) == 2
    for axes in over_axes:
        assert "from the spikes' own times" in axes["title"], axes["title"]
        assert "per interval" not in axes["ylabel"], axes["ylabel"]
    # The counts per finer bin add up to the run's over-threshold count.
    import plot_intervals

    result = load_result(str(path))
    for _, _, run, _ in plot_intervals.run_labels(result):
        times, _, complete = plot_intervals.spikes(run, "delivery")
        assert complete and len(times) == run["series"]["delivery"]["summary"]["over_threshold"]
    # Without the whole spike list, the interval stays the time line, and the title says so.
    path = write_result(one_interval(real_data, drop_outliers=True), tmp_path / "dropped")
    drawn = draw_in_process("plot_intervals", load_result(str(path)), list(HEADLINE), tmp_path)
    over_axes = [a for a in drawn["intervals"]["axes"] if "over threshold" in a["title"]]
    for axes in over_axes:
        assert "the result keeps no finer time line" in axes["title"], axes["title"]


def tail_model(xi: float, sigma_us: float, maxima_us: list[float]) -> dict:
    """A tail model as rtsoak records it, with its return levels recomputed from xi and sigma."""
    model = {
        "threshold_ns": 100_000, "thresholds_tried": [], "xi": xi, "xi_low": xi - 0.3, "xi_high": xi + 0.3,
        "sigma_ns": sigma_us * 1000, "exceedances": len(maxima_us), "clusters": len(maxima_us),
        "extremal_index": 1.0, "run_length_samples": 4, "samples": 20_000, "span_ns": 10_000_000_000,
        "period_ns": 500_000, "fit_test": {"anderson_darling": 0.4, "p_value": 0.5, "resamples": 99},
        "over_threshold": {"threshold_ns": 100_000, "clusters": len(maxima_us), "probability_per_hour": 1.0,
                           "low": 1.0, "high": 1.0, "soak_to_rule_out_s": 1.0},
        "cluster_maxima_ns": [int(m * 1000) for m in maxima_us],
    }
    import plot_tail

    levels = []
    for span, span_s in (("hour", 3600), ("day", 86400), ("year", 31_536_000)):
        level = plot_tail.return_level_ns(model, span_s * 1e9 / model["period_ns"])
        levels.append({"span": span, "span_s": span_s, "level_ns": level, "low_ns": level * 0.8,
                       "high_ns": level * 2, "extrapolation": span_s / 10})
    model["return_levels"] = levels
    return model


def test_the_tail_plot_draws_no_fit_that_rtsoak_refused_and_says_why(real_data, tmp_path):
    from rtsoak_results import load_result

    data = copy.deepcopy(real_data)
    maxima = [100 + 3 * k for k in range(40)] + [900, 2500]
    heavy = tail_model(1.3, 40.0, maxima)
    reason = "the shape's 95 % interval reaches 1.9 (xi 1.30, bound 1): find the cause of the largest spikes"
    for other in data["runs"]:
        other["tail"] = {}
    run = measured_runs(data)[0]
    run["tail"] = {
        "send_call": dict(tail_model(0.1, 10.0, maxima[:40]), status="estimated"),
        "delivery": {"status": "heavy-tail", "reason": reason, "model": heavy},
        "timer": {"status": "not-estimable", "reason": "too few clusters: soak longer"},
    }
    path = write_result(data, tmp_path / "tail")
    stdout = run_script("plot_tail.py", path, "-o", tmp_path).stdout
    assert "delivery: heavy-tail" in stdout and "timer: not-estimable" in stdout
    assert_images(tmp_path, "tail")
    drawn = draw_in_process("plot_tail", [load_result(str(path))], tmp_path)["tail"]["axes"]
    estimated, estimated_qq, refused, refusal = drawn
    assert "(estimated)" in estimated["title"] and "fit" in estimated["lines"]
    assert "refused: heavy-tail" in refused["title"]
    assert "fit" not in refused["lines"] and "95 % interval" not in refused["lines"]
    # Its axis ends near the data, never at the 10^19 us a refused heavy tail extrapolates to.
    assert refused["ylim"][1] < 10 * max(maxima), refused["ylim"]
    assert heavy["return_levels"][2]["level_ns"] / 1000 > 1e6, "the refused year level is absurd indeed"
    assert any(reason[:40] in " ".join(text.split()) for text in refusal["texts"]), refusal["texts"]


def test_one_caveat_block_per_page(real_result, real_data, tmp_path):
    first = real_data["caveats"][0]["text"] if real_data["caveats"] else None
    run_script("report.py", real_result, "--baseline", real_result, "-o", tmp_path / "report")
    page = (tmp_path / "report" / "report.html").read_text()
    for name in ("histogram", "percentiles", "intervals", "compare"):
        svg = (tmp_path / "report" / f"{name}.svg").read_text()
        assert "caveat:" not in svg, f"{name} repeats the caveats the page shows"
        assert real_data["host"]["kernel_release"] in svg, f"{name} no longer says where it came from"
    if first:
        import html

        assert page.count(html.escape(first)) == 1, "the page shows each caveat once"
        # A figure made on its own is its own page: its caption carries the caveats, once each.
        run_script("plot_percentiles.py", real_result, "-o", tmp_path / "alone")
        svg = (tmp_path / "alone" / "percentiles.svg").read_text()
        assert svg.count("caveat:") == min(len(real_data["caveats"]), 3)
