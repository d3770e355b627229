"""The overview's figures: nodes × NUMA zones by free share, and the free-block distribution."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from topology.choices import Flavour
from topology.figures import fmt
from topology.figures.palette import AXIS, FREE_SCALE, NOT_COMPUTED, base_layout, pattern
from topology.selectors.types import Amounts, Bucket, NodeRow, ZoneCell

CELL_HEIGHT = 26
NOT_COMPUTED_TEXT = "free for an exclusive pod: not computed yet"
AVAILABLE_NOTES = {
    Flavour.CRANE: "Crane publishes no per-zone available",
    Flavour.KOORDINATOR: "koordlet publishes available = allocatable",
}


def _resource_line(name: str, amounts: Amounts) -> str:
    show = fmt.formatter(name)
    used = amounts.used
    return (
        f"{name}: capacity {show(amounts.capacity)} · allocatable {show(amounts.allocatable)}"
        f" · NRT available {show(amounts.available)} · used {show(used)}"
        f" · reserved {show(amounts.reserved)}"
    )


def zone_hover(row: NodeRow, cell: ZoneCell) -> str:
    """Everything a platform engineer asks of one zone: free, used, reserved, memory, devices."""
    lines = [f"<b>{row.name}</b> · zone {cell.name} (NUMA {cell.numa_id})"]
    cpu = cell.cpu
    if cell.free_exclusive_cpus is None:
        lines.append(NOT_COMPUTED_TEXT)
    else:
        of = f" of {fmt.cores(cpu.allocatable)} allocatable" if cpu else ""
        lines.append(f"free for an exclusive pod: <b>{cell.free_exclusive_cpus}</b> CPUs{of}")
    for name in ("cpu", "memory"):
        if name in cell.resources:
            lines.append(_resource_line(name, cell.resources[name]))
    for name, amounts in {**cell.hugepages(), **cell.devices()}.items():
        lines.append(_resource_line(name, amounts))
    note = AVAILABLE_NOTES.get(row.flavour)  # type: ignore[call-overload]
    if note:
        lines.append(f"<i>{note}</i>")
    return "<br>".join(lines)


def _colour_bar(zone_rows: int) -> dict[str, object]:
    """The free-share scale. With one or two zone rows the plot is too short for plotly's
    default ticks (they overlap): three ticks, and a title beside the bar."""
    bar: dict[str, object] = {"title": {"text": "free share"}, "thickness": 10, "len": 0.9}
    if zone_rows <= 2:
        bar |= {
            "tickvals": [0, 0.5, 1],
            "ticktext": ["0%", "50%", "100%"],
            "title": {"text": "free share", "side": "right"},
            "len": 1,
        }
    return bar


def _grids(rows: Sequence[NodeRow], height: int) -> dict[str, np.ndarray]:
    """z, text and hover per cell, for the computed layer and the not-computed layer.

    numpy arrays, not lists: plotly checks lists element by element, arrays at once.
    """
    shape = (height, len(rows))
    grids = {
        "share": np.full(shape, np.nan),
        "pending": np.full(shape, np.nan),
        "text": np.full(shape, "", dtype=object),
        "hover": np.full(shape, "", dtype=object),
        "pending_text": np.full(shape, "", dtype=object),
        "pending_hover": np.full(shape, "", dtype=object),
    }
    for x, row in enumerate(rows):
        for cell in row.zones:
            y, share = cell.numa_id, cell.free_share
            if share is None:
                grids["pending"][y, x] = 1
                grids["pending_text"][y, x] = "?"
                grids["pending_hover"][y, x] = zone_hover(row, cell)
            else:
                grids["share"][y, x] = share
                grids["text"][y, x] = str(cell.free_exclusive_cpus)
                grids["hover"][y, x] = zone_hover(row, cell)
    return grids


def zone_heatmap(rows: Sequence[NodeRow]) -> go.Figure:
    """Columns are nodes, rows NUMA ids; colour and number show free exclusive CPUs.

    Zones whose figures are not computed yet are a separate grey layer marked "?",
    never a zero. Clicking a column opens the node (see dashboard.js).
    """
    names = [row.name for row in rows]
    height = max((cell.numa_id for row in rows for cell in row.zones), default=0) + 1
    grids = _grids(rows, height)
    common = {"x": names, "y": list(range(height)), "xgap": 2, "ygap": 2, "hoverinfo": "text"}
    common |= {"texttemplate": "%{text}"}
    free = (
        go.Heatmap(
            z=grids["share"],
            text=grids["text"],
            hovertext=grids["hover"],
            zmin=0,
            zmax=1,
            colorscale=[list(stop) for stop in FREE_SCALE],
            colorbar=_colour_bar(height),
            name="free exclusive CPUs",
            **common,
        ),
    )
    pending = (
        go.Heatmap(
            z=grids["pending"],
            text=grids["pending_text"],
            hovertext=grids["pending_hover"],
            colorscale=[[0, NOT_COMPUTED], [1, NOT_COMPUTED]],
            showscale=False,
            name="not computed yet",
            **common,
        ),
    )
    layout = base_layout(
        height=150 + CELL_HEIGHT * height,
        margin={"l": 70, "r": 10, "t": 10, "b": 110},
        meta={"kind": "zone-heatmap", "nodes": names},
        xaxis={"type": "category", "tickangle": -60, "tickfont": {"size": 10}, "color": AXIS},
        yaxis={
            "tickvals": list(range(height)),
            "ticktext": [f"NUMA {i}" for i in range(height)],
            "autorange": "reversed",
            "color": AXIS,
            "showgrid": False,
        },
    )
    return go.Figure(data=[*free, *pending], layout=layout)


def free_distribution(buckets: Sequence[Bucket]) -> go.Figure:
    """How many matching nodes have their largest free block in each size bucket."""
    bar = go.Bar(
        x=[b.label for b in buckets],
        y=[b.nodes for b in buckets],
        text=[str(b.nodes) for b in buckets],
        textposition="outside",
        marker={
            "color": ["#2171b5" if b.computed else NOT_COMPUTED for b in buckets],
            "pattern": pattern(["" if b.computed else "/" for b in buckets]),
        },
        hovertemplate="%{x} free CPUs in one zone: %{y} nodes<extra></extra>",
        cliponaxis=False,
    )
    layout = base_layout(
        height=190,
        margin={"l": 40, "r": 10, "t": 24, "b": 40},
        meta={"kind": "free-distribution"},
        xaxis={"title": {"text": "largest block of free exclusive CPUs in one zone"}},
        yaxis={"title": {"text": "nodes"}, "rangemode": "tozero"},
    )
    return go.Figure(data=[bar], layout=layout)
