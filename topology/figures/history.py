"""The overview's trend chart and the node page's sparklines (issue 33): the figures
over time (`services.observability.history`), zoomable, exportable as PNG from the
chart's toolbar."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from topology.figures.palette import AXIS, base_layout, pod_colour

SHOWN_POLICIES = ("single-numa-node", "restricted")  # the largest pod under each, drawn


def trend_chart(samples: Sequence[Mapping[str, Any]]) -> go.Figure:
    """Free exclusive CPUs, the largest free block and the largest exclusive pod per
    policy (CPUs, left axis), fragmentation (%, right axis), against time."""
    times = [sample["taken_at"] for sample in samples]
    lines = [
        ("free exclusive CPUs", [s["free_cpus_total"] for s in samples], "y"),
        ("largest free block (CPUs)", [s["largest_free_block"] for s in samples], "y"),
        *(
            (f"largest pod, {policy} (CPUs)",
             [s["largest_pod_by_policy"].get(policy) for s in samples], "y")
            for policy in SHOWN_POLICIES
        ),
        ("fragmentation (%)", [round(100 * s["fragmentation"], 1) for s in samples], "y2"),
    ]  # fmt: skip
    traces = [
        go.Scatter(
            x=times,
            y=values,
            name=name,
            mode="lines",
            yaxis=axis,
            line={"color": pod_colour(index), "dash": "dot" if axis == "y2" else "solid"},
        )  # fmt: skip
        for index, (name, values, axis) in enumerate(lines)
    ]
    layout = base_layout(
        height=320,
        meta={"kind": "trend", "points": len(samples)},
        showlegend=True,
        legend={"orientation": "h", "y": 1.12, "x": 0},
        xaxis={"color": AXIS, "rangeslider": {"visible": True}, "type": "date"},
        yaxis={"title": "CPUs", "color": AXIS, "rangemode": "tozero"},
        yaxis2={
            "title": "fragmentation (%)",
            "overlaying": "y",
            "side": "right",
            "range": [0, 100],
            "color": AXIS,
        },  # fmt: skip
        margin={"l": 60, "r": 60, "t": 40, "b": 40},
    )
    return go.Figure(data=traces, layout=layout)


def zone_sparklines(samples: Sequence[Mapping[str, Any]]) -> go.Figure:
    """One small line per NUMA zone: its free exclusive CPUs each hour."""
    zones = sorted({int(numa) for s in samples for numa in s["free_cpus_by_zone"]})
    traces = [
        go.Scatter(
            x=[s["hour"] for s in samples],
            y=[s["free_cpus_by_zone"].get(str(numa)) for s in samples],
            name=f"NUMA {numa}",
            mode="lines",
            line={"color": pod_colour(numa), "width": 1.5},
        )  # fmt: skip
        for numa in zones
    ]
    layout = base_layout(
        height=220,
        meta={"kind": "zone-sparklines", "zones": zones},
        showlegend=True,
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
        xaxis={"color": AXIS, "type": "date"},
        yaxis={"title": "free CPUs", "color": AXIS, "rangemode": "tozero"},
        margin={"l": 50, "r": 10, "t": 50, "b": 30},
    )
    return go.Figure(data=traces, layout=layout)
