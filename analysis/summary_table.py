"""The comparison table of one result: rtsoak's own table plus percentiles and noise.

Owns: which columns the table has and how each is computed from a TransportData (exact figures
from the exact stats, percentiles from the merged histogram). Must never format HTML or plot.
"""

from __future__ import annotations

import sys

from rtsoak_results import Result, TransportData, format_us

COLUMNS = (
    ("transport", "transport"),
    ("messages", "messages"),
    ("sends_over", "sends > T"),
    ("longest_send_us", "longest send us"),
    ("send_p99_9_us", "send p99.9 us"),
    ("send_p99_99_us", "send p99.99 us"),
    ("deliveries_over", "deliveries > T"),
    ("longest_delivery_us", "longest delivery us"),
    ("delivery_p99_9_us", "delivery p99.9 us"),
    ("delivery_p99_99_us", "delivery p99.99 us"),
    ("lost", "lost"),
    ("noise", "noise"),
    ("rounds", "rounds"),
    ("status", "status"),
)


# A figure rtsoak does not have is "-", never 0.
MISSING = "-"


def percentile_us(series, quantile: float) -> str:
    """The percentile in us, or "-" where no sample or a histogram that does not decode leaves
    it unknown (said once on stderr)."""
    if not series.count:
        return MISSING
    if not series.percentiles_known:
        if series.source not in WARNED:
            WARNED.add(series.source)
            print(f"Warning: {series.source} {series.name}: a histogram does not decode; its percentiles are "
                  "shown as - (the exact counts, longest and over-threshold still stand)", file=sys.stderr)
        return MISSING
    return format_us(series.value_at_quantile_ns(quantile))


WARNED: set[str] = set()


def transport_row(transport: TransportData) -> dict:
    send, delivery = transport.get("send_call"), transport.get("delivery")
    row = {
        "transport": transport.label,
        "messages": transport.sent,
        "sends_over": send.over_threshold,
        "longest_send_us": format_us(send.max_ns) if send.count else MISSING,
        "send_p99_9_us": percentile_us(send, 0.999),
        "send_p99_99_us": percentile_us(send, 0.9999),
        "deliveries_over": delivery.over_threshold,
        "longest_delivery_us": format_us(delivery.max_ns) if delivery.count else MISSING,
        "delivery_p99_9_us": percentile_us(delivery, 0.999),
        "delivery_p99_99_us": percentile_us(delivery, 0.9999),
        "lost": transport.lost,
        "noise": transport.noise_label,
        "rounds": len(transport.runs),
        "status": transport.status_label,
    }
    if not transport.measured:
        # Nothing ran: every figure is unknown, as in rtsoak's own table.
        figures = {key for key, _ in COLUMNS} - {"transport", "rounds", "status"}
        row.update({key: MISSING for key in figures})
    return row


def result_rows(result: Result) -> list[dict]:
    """One row per transport (and ring setup) in the order run, including unsupported ones (their
    figures are "-")."""
    return [transport_row(t) for t in result.transports.values()]


def threshold_text(result: Result) -> str:
    return f"{result.threshold_ns / 1000:g} us" if result.threshold_ns is not None else "unknown"
