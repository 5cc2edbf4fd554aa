"""Loading, decoding and merging rtsoak result JSON (docs/result-schema.md), for the plot scripts.

Owns: reading a result file, checking its schema version (1 and 2; version 1 wrote a ring-setup
comparison's transport as "name (setup)", read back as the name and the setup), grouping runs by
transport and ring setup (merging the histograms of compare rounds, never averaging
percentiles), and the figures derived from a histogram. Exact figures (counts, min, max, over-threshold) come from the exact stats rtsoak
keeps beside each histogram; percentiles come from the merged histogram, with the same rule as
rtsoak (the value at rank ceil(q * count), capped by the exact maximum).

Must never: hand-decode a histogram (hdrh does that), guess a missing field, or fail on a field
or series it does not know (newer results add some: noise, rounds, noise series).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from pathlib import Path

import numpy as np
from hdrh.histogram import HdrHistogram

# The result schema versions these scripts read; 3 is the one rtsoak writes.
SCHEMA_VERSIONS = (1, 2, 3)
SCHEMA_VERSION = SCHEMA_VERSIONS[-1]
NS_PER_US = 1000.0

# The two headline series, in the order the plots show them, with their readable names.
HEADLINE_SERIES = ("send_call", "delivery")
SERIES_TITLES = {
    "send_call": "send call",
    "fanout": "fan-out",
    "timer": "timer (publisher wake-up)",
    "delivery": "delivery",
    "other_delivery": "other publishers' delivery",
    "noise_send_call": "noise publisher send call",
}


class ResultError(Exception):
    """A result file that cannot be read; the message says which file, what is wrong and what to do."""


def series_title(name: str) -> str:
    return SERIES_TITLES.get(name, name.replace("_", " "))


def ns_to_us(value_ns: float) -> float:
    return value_ns / NS_PER_US


@dataclass
class SeriesData:
    """One latency series of one transport, merged over every round of that transport."""

    name: str
    source: str = ""  # "file: transport", for error messages
    histograms_b64: list[str] = field(default_factory=list)
    count: int = 0
    min_ns: int | None = None
    max_ns: int = 0
    over_threshold: int = 0

    def add_run_series(self, series: dict) -> None:
        summary = series.get("summary", {})
        count = int(summary.get("count", 0))
        self.count += count
        self.over_threshold += int(summary.get("over_threshold", 0))
        if count:
            self.max_ns = max(self.max_ns, int(summary.get("max_ns", 0)))
            min_ns = int(summary.get("min_ns", 0))
            self.min_ns = min_ns if self.min_ns is None else min(self.min_ns, min_ns)
        if series.get("histogram"):
            self.histograms_b64.append(series["histogram"])

    @cached_property
    def percentiles_known(self) -> bool:
        """True when every round's histogram decodes: only then are its percentiles the series'
        percentiles (the exact count, longest and over-threshold stand either way)."""
        try:
            for encoded in self.histograms_b64:
                HdrHistogram.decode(encoded)
        except Exception:  # hdrh raises bare Exceptions, zlib and base64 errors alike
            return False
        return True

    @cached_property
    def histogram(self) -> HdrHistogram | None:
        """The merged histogram of every round (None when no round recorded one)."""
        merged = None
        for encoded in self.histograms_b64:
            try:
                decoded = HdrHistogram.decode(encoded)
            except Exception as error:  # hdrh raises bare Exceptions, zlib and base64 errors alike
                raise ResultError(
                    f"{self.source}: the {self.name} histogram cannot be decoded ({error}); "
                    "the result is damaged: regenerate it with rtsoak"
                ) from error
            if merged is None:
                merged = decoded
            else:
                merged.add(decoded)
        return merged

    @cached_property
    def recorded(self) -> tuple[np.ndarray, np.ndarray]:
        """(values_ns, counts) of every non-empty histogram bucket; values are the bucket's top."""
        if self.histogram is None:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        pairs = [
            (item.value_iterated_to, item.count_at_value_iterated_to)
            for item in self.histogram.get_recorded_iterator()
        ]
        if not pairs:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        values, counts = zip(*pairs)
        return np.array(values, dtype=np.int64), np.array(counts, dtype=np.int64)

    @property
    def histogram_count(self) -> int:
        return int(self.recorded[1].sum())

    @property
    def histogram_max_ns(self) -> int:
        """The histogram's maximum: the top of the highest bucket (within 0.1 % of the exact one)."""
        values, _ = self.recorded
        return int(values[-1]) if len(values) else 0

    def value_at_quantiles_ns(self, quantiles) -> np.ndarray:
        """Latency at each quantile (0..1), rtsoak's rule: rank ceil(q*n), capped by the exact max."""
        values, counts = self.recorded
        quantiles = np.asarray(quantiles, dtype=float)
        if not len(values):
            return np.zeros_like(quantiles)
        cumulative = np.cumsum(counts)
        ranks = np.maximum(np.ceil(np.minimum(quantiles, 1.0) * cumulative[-1]), 1)
        found = values[np.minimum(np.searchsorted(cumulative, ranks), len(values) - 1)]
        cap = self.max_ns if self.max_ns else values[-1]
        return np.minimum(found, cap)

    def value_at_quantile_ns(self, quantile: float) -> int:
        return int(self.value_at_quantiles_ns([quantile])[0])


@dataclass
class TransportData:
    """Every run of one transport (and ring setup, in a ring-setup comparison) in one result (one
    per compare round), merged."""

    transport: str
    ring_setup: str | None = None  # the setup the runs asked for, in a ring-setup comparison
    rounds: list = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)
    sent: int = 0
    delivered: int = 0
    lost: int = 0
    noise: list[bool] = field(default_factory=list)
    series: dict[str, SeriesData] = field(default_factory=dict)
    runs: list[dict] = field(default_factory=list)

    def add_run(self, run: dict, source: str) -> None:
        self.runs.append(run)
        self.rounds.append(run.get("round"))
        self.statuses.append(str(run.get("status", "unknown")))
        integrity = run.get("integrity") or {}
        self.sent += int(integrity.get("sent", 0))
        self.delivered += int(integrity.get("delivered", 0))
        self.lost += int(integrity.get("lost", 0))
        noise = run.get("noise")
        if isinstance(noise, dict) and "enabled" in noise:
            self.noise.append(bool(noise["enabled"]))
        for name, series in (run.get("series") or {}).items():
            self.series.setdefault(name, SeriesData(name, f"{source}: {self.label}")).add_run_series(series)

    @property
    def label(self) -> str:
        """The row's name as rtsoak's table shows it: `eventfd`, or `eventfd (none)`."""
        return f"{self.transport} ({self.ring_setup})" if self.ring_setup else self.transport

    def get(self, name: str) -> SeriesData:
        """The series, or an empty one when no run recorded it (absent series plot as empty)."""
        return self.series.get(name) or SeriesData(name)

    @property
    def noise_label(self) -> str:
        if not self.noise:
            return "n/a"
        if all(self.noise):
            return "on"
        return "off" if not any(self.noise) else "mixed"

    @property
    def status_label(self) -> str:
        distinct = sorted(set(self.statuses))
        return distinct[0] if len(distinct) == 1 else ",".join(distinct)

    @property
    def measured(self) -> bool:
        """Whether any run of this transport measured anything (unsupported runs did not)."""
        return self.sent > 0 or any(s.count for s in self.series.values())


@dataclass
class Result:
    path: Path
    data: dict

    @property
    def label(self) -> str:
        """A short name: the result directory's name (rtsoak names it by time and command)."""
        if self.path.name == "result.json" and self.path.parent.name:
            return self.path.parent.name
        return self.path.stem

    @property
    def started_at(self) -> datetime:
        return parse_time(self.data.get("started_at"), self.path)

    @property
    def threshold_ns(self) -> int | None:
        value = (self.data.get("plan") or {}).get("threshold_ns")
        return int(value) if value is not None else None

    def context(self, dated: bool = True) -> str:
        """Where the figures came from, for a figure's caption: host, kernel (and whether it is
        PREEMPT_RT), period, time per transport, rtsoak version and (`dated`) date."""
        host = self.data.get("host") or {}
        plan = self.data.get("plan") or {}
        tool = self.data.get("tool") or {}
        rt = "PREEMPT_RT" if host.get("preempt_rt") else "NOT a PREEMPT_RT kernel"
        period_us = ns_to_us(plan.get("period_ns") or 0)
        seconds = (plan.get("duration_ns") or 0) / 1e9
        rounds = plan.get("rounds") or 1
        per = f"{seconds:g} s per transport" + (f" in {rounds} rounds" if rounds > 1 else "")
        return (
            f"{host.get('hostname', '?')}: Linux {host.get('kernel_release', '?')} "
            f"{host.get('arch', '')}, {rt}; period {period_us:g} us, {per}; profile "
            f"{plan.get('profile', '?')}; rtsoak {tool.get('version', '?')}"
            + (f", {str(self.data.get('started_at', '?'))[:16]}" if dated else "")
        )

    @property
    def caveats(self) -> list[str]:
        """The caveats' sentences, most serious first (version 2 records each with its severity
        and kind; version 1 held the sentences alone)."""
        return [str(c.get("text", "")) if isinstance(c, dict) else str(c) for c in self.data.get("caveats") or []]

    @property
    def runs(self) -> list[dict]:
        return list(self.data.get("runs") or [])

    @cached_property
    def transports(self) -> dict[str, TransportData]:
        """Runs grouped by transport and ring setup in the order first run, keyed by the row's
        label; rounds of a transport merged."""
        grouped: dict[str, TransportData] = {}
        for run in self.runs:
            data = TransportData(str(run.get("transport", "?")), run.get("ring_setup_requested"))
            grouped.setdefault(data.label, data).add_run(run, str(self.path))
        return grouped

    def measured_key(self, transport: TransportData) -> tuple[str, str]:
        """What a row measured, for pairing rows of two results: the transport and its ring
        setup, the plan's own where the result compared only one (as rtsoak diff pairs)."""
        plan_setup = str((self.data.get("plan") or {}).get("ring_setup", ""))
        return transport.transport, transport.ring_setup or plan_setup

    def measured_transports(self) -> list[TransportData]:
        return [t for t in self.transports.values() if t.measured]


def parse_time(text, path) -> datetime:
    if not isinstance(text, str):
        raise ResultError(f"{path}: started_at is missing; pass a result written by rtsoak run or compare")
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as error:
        raise ResultError(f"{path}: started_at {text!r} is not an RFC 3339 time ({error}); fix or regenerate the result") from error


def load_result(path_text: str) -> Result:
    """Read a result.json (or a result directory holding one) and check its schema version."""
    path = Path(path_text)
    if path.is_dir():
        path = path / "result.json"
    try:
        text = path.read_text()
    except OSError as error:
        raise ResultError(f"{path}: cannot read it ({error.strerror}); pass a result.json or the directory rtsoak saved it in") from error
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ResultError(f"{path}: not JSON ({error}); pass the result.json rtsoak wrote") from error
    if not isinstance(data, dict) or "schema_version" not in data:
        raise ResultError(f"{path}: no schema_version, so not an rtsoak result; pass the result.json rtsoak wrote")
    if data["schema_version"] not in SCHEMA_VERSIONS:
        raise ResultError(
            f"{path}: schema_version {data['schema_version']} is not one of {list(SCHEMA_VERSIONS)}, the versions "
            "these scripts read; use the analysis scripts of the rtsoak version that wrote it"
        )
    if not isinstance(data.get("runs"), list):
        raise ResultError(f"{path}: runs is missing or not a list; regenerate the result with rtsoak")
    if data["schema_version"] == 1:
        upgrade_from_v1(data)
    return Result(path, data)


# A task's role as a cause names it (version 3 writes the role; these are rtsoak's words).
ROLE_WORDS = {
    "rt_publisher": "the RT publisher",
    "rt_subscriber": "the RT subscriber",
    "noise_publisher": "a noise publisher",
    "noise_subscriber": "a noise subscriber",
    "burst": "a burst thread",
    "load_generator": "a load generator",
    "rtsoak": "an rtsoak process",
    "interrupt_thread": "an interrupt thread",
    "kernel_thread": "a kernel thread",
    "idle": "the idle task",
    "other": "a task outside rtsoak",
}


# A lock's kind as a cause names it, where its id is not already its word (results written
# before the ids hold the words themselves, and a kind these scripts do not know is shown as is).
LOCK_WORDS = {
    "sleeping_spinlock": "sleeping spinlock (rt_mutex)",
    "pi_futex": "PI futex (rt_mutex)",
    "other": "lock",
}


def cause_words(cause) -> str:
    """A cause in words, as rtsoak's report says it: version 3 writes an object with a `kind`
    (null for the unexplained spikes), version 2 the sentence itself."""
    if cause is None:
        return "unexplained"
    if isinstance(cause, str):
        return cause
    kind = cause["kind"]
    if kind == "lock":
        text = f"blocked on a {LOCK_WORDS.get(cause['lock'], cause['lock'])}"
        if cause.get("caller"):
            text += f" in {cause['caller']}"
        holder = cause.get("holder")
        if holder:
            text += f" held by {ROLE_WORDS[holder['role']]}"
            if holder.get("boosted_to"):
                text += f" boosted to {holder['boosted_to']}"
            if holder.get("preempted_by"):
                text += f" and preempted by {task_words(holder['preempted_by'])}"
        return text
    simple = {
        "preempted": lambda c: f"preempted by {task_words(c['by'])}",
        "waiting_for_cpu": lambda c: f"woken while its CPU ran {task_words(c['by'])}",
        "idle_wakeup": lambda c: "woken onto its idle CPU and slow to run (idle exit, wakeup IPI)",
        "blocked": lambda c: (
            f"waiting in the kernel until woken by {task_words(c['woken_by'])}" if c.get("woken_by") else "waiting in the kernel"
        ),
        "interrupt": lambda c: f"interrupt handler {c['name']} on its CPU",
        "softirq": lambda c: f"softirq {c['action']} on its CPU",
        "unknown": lambda c: c["text"],
    }
    return simple[kind](cause)


def task_words(task: dict) -> str:
    """`a burst thread (FIFO 50)`, `a kernel thread ktimers/1 (FIFO 98)`."""
    name = f" {task['name']}" if task.get("name") else ""
    return f"{ROLE_WORDS[task['role']]}{name} ({task['priority']})"


def upgrade_from_v1(data: dict) -> None:
    """Version 1 wrote a ring-setup comparison's transport as "futex (defer-taskrun)" beside
    ring_setup_requested; version 2 keeps the registry name alone."""
    for run in data["runs"]:
        setup, name = run.get("ring_setup_requested"), run.get("transport")
        suffix = f" ({setup})"
        if setup and isinstance(name, str) and name.endswith(suffix):
            run["transport"] = name[: -len(suffix)]


def load_results(paths) -> list[Result]:
    return [load_result(p) for p in paths]


def run_label(transport: TransportData, result: Result, several_results: bool) -> str:
    """The legend label of a transport: its name, plus the result's label when plotting several."""
    return f"{transport.label} @ {result.label}" if several_results else transport.label


def format_us(value_ns) -> str:
    """Microseconds with nanosecond precision: exact, and comparable to rtsoak's table."""
    return f"{value_ns / NS_PER_US:.3f}"


def format_table(headers: list[str], rows: list[list], left_columns: int = 2) -> str:
    """A plain text table, columns separated by two spaces; the first left_columns are names."""
    cells = [headers] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = []
    for row in cells:
        parts = [c.ljust(w) if i < left_columns else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)


def percentile_label(quantile: float) -> str:
    """0.999 -> '99.9%'."""
    text = f"{quantile * 100:.6f}".rstrip("0").rstrip(".")
    return f"{text}%"


def quantile_position(quantile: float) -> float:
    """x position of a quantile in the HdrHistogram percentile plot: 1 / (1 - q)."""
    return math.inf if quantile >= 1 else 1.0 / (1.0 - quantile)
