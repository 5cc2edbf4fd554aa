"""The comparison table of one result: rtsoak's own table plus percentiles and noise.

Owns: which columns the table has and how each is computed from a TransportData (exact figures
from the exact stats, percentiles from the merged histogram). Must never format HTML or plot.
"""

from __future__ import annotations

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


def transport_row(transport: TransportData) -> dict:
    send, delivery = transport.get("send_call"), transport.get("delivery")
    return {
        "transport": transport.transport,
        "messages": transport.sent,
        "sends_over": send.over_threshold,
        "longest_send_us": format_us(send.max_ns),
        "send_p99_9_us": format_us(send.value_at_quantile_ns(0.999)),
        "send_p99_99_us": format_us(send.value_at_quantile_ns(0.9999)),
        "deliveries_over": delivery.over_threshold,
        "longest_delivery_us": format_us(delivery.max_ns),
        "delivery_p99_9_us": format_us(delivery.value_at_quantile_ns(0.999)),
        "delivery_p99_99_us": format_us(delivery.value_at_quantile_ns(0.9999)),
        "lost": transport.lost,
        "noise": transport.noise_label,
        "rounds": len(transport.runs),
        "status": transport.status_label,
    }


def result_rows(result: Result) -> list[dict]:
    """One row per transport in the order run, including unsupported ones (their figures are 0)."""
    return [transport_row(t) for t in result.transports.values()]


def threshold_text(result: Result) -> str:
    return f"{result.threshold_ns / 1000:g} us" if result.threshold_ns is not None else "unknown"
