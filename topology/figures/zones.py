"""Per-zone bars of one node: capacity, allocatable and available for cpu, memory,
hugepages and devices, one small chart per resource (their units differ).

Each measure has its own colour *and* bar pattern; a value the NRT does not
publish (Crane's available) is left out and named in the hover, never drawn as 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from topology.figures import fmt
from topology.figures.palette import base_layout, pattern
from topology.selectors.types import ZoneCell, is_device, is_hugepages

MEASURES = (
    ("capacity", "#9aa3ad", ""),
    ("allocatable", "#0072b2", "/"),
    ("available", "#009e73", "."),
)
PER_ROW = 4


def charted_resources(zones: Sequence[ZoneCell]) -> list[str]:
    """cpu, memory, then hugepages and devices that some zone has; never batch resources."""
    names: set[str] = set()
    for zone in zones:
        for name, amounts in zone.resources.items():
            wanted = name in ("cpu", "memory") or is_device(name)
            if wanted or (is_hugepages(name) and amounts.capacity):
                names.add(name)
    first = [n for n in ("cpu", "memory") if n in names]
    return (
        first
        + sorted(n for n in names if is_hugepages(n))
        + sorted(n for n in names if is_device(n))
    )


def _bar(
    zones: Sequence[ZoneCell],
    resource: str,
    measure: tuple[str, str, str],
    axis: str,
    first: bool,
) -> go.Bar:
    name, colour, hatch = measure
    values: list[float | None] = []
    hover: list[str] = []
    for zone in zones:
        amounts = zone.resources.get(resource)
        value = getattr(amounts, name) if amounts else None
        values.append(None if value is None else fmt.scaled(resource, value))
        shown = fmt.amount(resource, value) if amounts else "not in this zone"
        hover.append(f"{zone.name} · {resource} {name}: {shown}")
    return go.Bar(
        name=name,
        x=[zone.name for zone in zones],
        y=values,
        xaxis=f"x{axis}",
        yaxis=f"y{axis}",
        hovertext=hover,
        hoverinfo="text",
        marker={"color": colour, "pattern": pattern(hatch)},
        legendgroup=name,
        showlegend=first,
    )


def _grid(count: int) -> tuple[int, int]:
    columns = max(1, min(PER_ROW, count))
    return columns, max(1, math.ceil(count / columns))


def _axes(position: int, count: int) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """x axis, y axis and title annotation of one small chart in a grid of `count`."""
    columns, rows = _grid(count)
    row, column = divmod(position, columns)
    gap_x, gap_y = 0.06, 0.3 / rows if rows > 1 else 0.0
    x0 = column / columns + (gap_x / 2 if column else 0)
    x1 = (column + 1) / columns - (gap_x / 2 if column < columns - 1 else 0)
    y1 = 1 - row / rows - (gap_y / 2 if row else 0)
    y0 = 1 - (row + 1) / rows + (gap_y / 2 if row < rows - 1 else 0)
    suffix = "" if position == 0 else str(position + 1)
    x_axis = {"domain": [x0, x1], "anchor": f"y{suffix}"}
    y_axis = {"domain": [y0, y1], "anchor": f"x{suffix}", "rangemode": "tozero"}
    title = {
        "x": (x0 + x1) / 2,
        "y": y1,
        "xref": "paper",
        "yref": "paper",
        "xanchor": "center",
        "yanchor": "bottom",
        "showarrow": False,
        "font": {"size": 13},
    }
    return x_axis, y_axis, title


def zone_bars(zones: Sequence[ZoneCell]) -> go.Figure:
    """One small grouped-bar chart per resource (their units differ), laid out in a grid.

    Axes are placed by hand rather than with make_subplots, which costs more than
    the rest of the node page.
    """
    resources = charted_resources(zones)
    traces, annotations = [], []
    layout = base_layout(
        height=70 + 200 * _grid(len(resources))[1],
        barmode="group",
        bargap=0.25,
        margin={"l": 40, "r": 10, "t": 40, "b": 30},
        legend={"orientation": "h", "y": -0.12, "x": 0},
        meta={"kind": "zone-bars", "resources": resources},
    )
    for position, resource in enumerate(resources):
        x_axis, y_axis, title = _axes(position, len(resources))
        suffix = "" if position == 0 else str(position + 1)
        layout[f"xaxis{suffix}"], layout[f"yaxis{suffix}"] = x_axis, y_axis
        annotations.append({**title, "text": f"{resource} ({fmt.unit(resource)})"})
        traces += [_bar(zones, resource, m, suffix, position == 0) for m in MEASURES]
    layout["annotations"] = annotations
    return go.Figure(data=traces, layout=layout)
