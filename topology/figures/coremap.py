"""The per-NUMA core occupancy of one node, in the spirit of lstopo.

Zones hold sockets, sockets hold cores, cores hold their hyperthread siblings:
each zone is a block of rows; a column is a core and the rows under it are its
threads. Each logical CPU is one cell, coloured by its state (one colour per pod)
and marked with its holder's code, so that colour is never the only signal; the
hover names the CPU, core, socket, zone and holder.

`highlight` outlines CPUs (the what-if's would-be-picked cores) and adds a legend
entry for them.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from topology.choices import CPUState
from topology.domain.cpu_classify import CPU, Holder, HolderKind, NodeCPUState
from topology.figures.palette import AXIS, base_layout, pod_colour

MAX_COLUMNS = 32
ROW_HEIGHT = 22
HIGHLIGHT_COLOUR = "#111827"
# Fixed category indices; pods follow from POD_BASE in the order of their codes.
STATE_ORDER = (CPUState.FREE, CPUState.SHARED, CPUState.RESERVED, CPUState.RESERVATION)
POD_BASE = len(STATE_ORDER)


@dataclass(frozen=True)
class LegendEntry:
    code: str
    label: str
    colour: str
    cpus: int
    state: CPUState


@dataclass(frozen=True)
class Cell:
    cpu: CPU
    x: int
    y: int


WOULD_BE_PICKED = "would be picked (what-if)"  # the what-if's highlight


def _cores_by_zone(cpus: Iterable[CPU]) -> dict[int, list[list[CPU]]]:
    """zone → cores in (socket, core) order → sibling threads in id order."""
    grouped: dict[int, dict[tuple[int, int], list[CPU]]] = defaultdict(lambda: defaultdict(list))
    for cpu in cpus:
        grouped[cpu.numa][(cpu.socket, cpu.core)].append(cpu)
    return {
        numa: [sorted(grouped[numa][key], key=lambda c: c.id) for key in sorted(grouped[numa])]
        for numa in sorted(grouped)
    }


def layout_cells(state: NodeCPUState) -> tuple[list[Cell], int, list[tuple[int, int, int]]]:
    """Grid positions: (cells, columns, zone blocks as (numa, first row, last row))."""
    zones = _cores_by_zone(state.cpus)
    widest = max((len(cores) for cores in zones.values()), default=1)
    columns = math.ceil(widest / math.ceil(widest / MAX_COLUMNS))
    threads = max((len(core) for cores in zones.values() for core in cores), default=1)
    cells: list[Cell] = []
    blocks = []
    row = 0
    for numa, cores in zones.items():
        first = row
        for index, core in enumerate(cores):
            band, column = divmod(index, columns)
            for thread, cpu in enumerate(core):
                cells.append(Cell(cpu, column, first + band * threads + thread))
        row = first + math.ceil(len(cores) / columns) * threads
        blocks.append((numa, first, row - 1))
        row += 1  # an empty row between zones
    return cells, columns, blocks


def holder_colours(state: NodeCPUState) -> dict[Holder, str]:
    pods = [h for h in state.holders if h.kind is HolderKind.POD]
    return {holder: pod_colour(index) for index, holder in enumerate(pods)}


def cpu_colour(cpu: CPU, colours: Mapping[Holder, str]) -> str:
    if cpu.state is CPUState.EXCLUSIVE and cpu.holder in colours:
        return colours[cpu.holder]
    return cpu.state.colour


def cpu_mark(cpu: CPU) -> str:
    if cpu.state is CPUState.EXCLUSIVE and cpu.holder is not None:
        return cpu.holder.code
    return cpu.state.mark


def cpu_hover(
    cpu: CPU, zone_names: Mapping[int, str], highlighted: bool = False, label: str = ""
) -> str:
    """The CPU's hover text; `label` names a highlighted CPU (the what-if's pick else)."""
    zone = zone_names.get(cpu.numa, f"NUMA {cpu.numa}")
    lines = [f"<b>CPU {cpu.id}</b> · core {cpu.core} · socket {cpu.socket} · zone {zone}"]
    holder = cpu.holder
    if holder is None:
        lines.append(cpu.state.label)
    else:
        source = f" ({holder.source})" if holder.source else ""
        code = f"[{holder.code}] " if holder.code else ""
        lines.append(f"{cpu.state.label}: {code}<b>{holder.name}</b>{source}")
        if holder.detail:
            lines.append(holder.detail)
    lines += cpu.notes
    if highlighted:
        lines.append(f"<b>{label}</b>" if label else "<b>would be picked</b> (what-if)")
    return "<br>".join(lines)


def legend_entries(state: NodeCPUState) -> list[LegendEntry]:
    """What the HTML legend lists: one entry per pod, then one per other state in use."""
    colours = holder_colours(state)
    counts: dict[Holder | CPUState, int] = defaultdict(int)
    for cpu in state.cpus:
        key = cpu.holder if cpu.state is CPUState.EXCLUSIVE and cpu.holder else cpu.state
        counts[key] += 1
    entries = [
        LegendEntry(h.code, h.name, colours[h], counts[h], CPUState.EXCLUSIVE)
        for h in state.holders
        if h.kind is HolderKind.POD
    ]
    entries += [
        LegendEntry(s.mark, str(s.label), s.colour, counts[s], s) for s in STATE_ORDER if counts[s]
    ]
    return entries


def _colourscale(colours: Sequence[str]) -> list[list[object]]:
    """Discrete bands: category i (z = i) is painted colours[i] exactly."""
    count = len(colours)
    scale: list[list[object]] = []
    for index, colour in enumerate(colours):
        scale += [[index / count, colour], [(index + 1) / count, colour]]
    return scale


def _categories(state: NodeCPUState) -> tuple[dict[object, int], list[str]]:
    colours = holder_colours(state)
    index: dict[object, int] = {s: i for i, s in enumerate(STATE_ORDER)}
    palette = [s.colour for s in STATE_ORDER]
    for holder, colour in colours.items():
        index[holder] = len(palette)
        palette.append(colour)
    return index, palette


def core_map(
    state: NodeCPUState,
    zone_names: Mapping[int, str] | None = None,
    highlight: Iterable[int] = (),
    highlight_label: str = WOULD_BE_PICKED,
) -> go.Figure:
    """The core map of `state`; CPUs in `highlight` are outlined and listed in the legend
    as `highlight_label`."""
    names = dict(zone_names or {})
    picked = frozenset(highlight)
    cells, columns, blocks = layout_cells(state)
    rows = (blocks[-1][2] + 1) if blocks else 0
    index, palette = _categories(state)
    z = np.full((rows, columns), np.nan)
    text = np.full((rows, columns), "", dtype=object)
    hover = np.full((rows, columns), "", dtype=object)
    for cell in cells:
        cpu = cell.cpu
        key = cpu.holder if cpu.state is CPUState.EXCLUSIVE else cpu.state
        z[cell.y, cell.x] = index.get(key, 0)
        text[cell.y, cell.x] = cpu_mark(cpu)
        own = "" if highlight_label == WOULD_BE_PICKED else highlight_label
        hover[cell.y, cell.x] = cpu_hover(cpu, names, cpu.id in picked, own)
    cpus = go.Heatmap(
        z=z,
        text=text,
        hovertext=hover,
        hoverinfo="text",
        texttemplate="%{text}",
        textfont={"size": 10},
        colorscale=_colourscale(palette),
        zmin=-0.5,
        zmax=len(palette) - 0.5,
        showscale=False,
        xgap=2,
        ygap=2,
        name="CPUs",
    )
    marked = [c for c in cells if c.cpu.id in picked]
    frames, ticks, labels = _zone_frames(blocks, columns, names, cells)
    layout = base_layout(
        height=60 + ROW_HEIGHT * max(rows, 1),
        margin={"l": 150, "r": 10, "t": 10, "b": 10},
        showlegend=bool(picked),
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
        meta={"kind": "core-map", "node": state.node, "highlighted": sorted(picked)},
        shapes=frames + _outlines(marked),
        xaxis={"visible": False, "range": [-0.6, columns - 0.4]},
        yaxis={
            "autorange": "reversed",
            "showgrid": False,
            "zeroline": False,
            "color": AXIS,
            "tickvals": ticks,
            "ticktext": labels,
        },
    )
    return go.Figure(data=[cpus, *_highlight_trace(marked, highlight_label)], layout=layout)


def _zone_frames(
    blocks: Sequence[tuple[int, int, int]],
    columns: int,
    names: Mapping[int, str],
    cells: Sequence[Cell],
) -> tuple[list[dict[str, object]], list[float], list[str]]:
    """A frame around each zone, and a tick naming the zone and its sockets."""
    sockets: dict[int, set[int]] = defaultdict(set)
    for cell in cells:
        sockets[cell.cpu.numa].add(cell.cpu.socket)
    frames, ticks, labels = [], [], []
    for numa, first, last in blocks:
        frames.append(
            {
                "type": "rect",
                "x0": -0.55,
                "x1": columns - 0.45,
                "y0": first - 0.55,
                "y1": last + 0.55,
                "line": {"color": AXIS, "width": 1},
                "fillcolor": "rgba(0,0,0,0)",
                "layer": "below",
            }
        )
        socket_text = ", ".join(str(s) for s in sorted(sockets[numa]))
        ticks.append((first + last) / 2)
        labels.append(f"{names.get(numa, f'NUMA {numa}')} · socket {socket_text}")
    return frames, ticks, labels


def _outlines(cells: Sequence[Cell]) -> list[dict[str, object]]:
    return [
        {
            "type": "rect",
            "x0": cell.x - 0.5,
            "x1": cell.x + 0.5,
            "y0": cell.y - 0.5,
            "y1": cell.y + 0.5,
            "line": {"color": HIGHLIGHT_COLOUR, "width": 3},
            "fillcolor": "rgba(0,0,0,0)",
        }
        for cell in cells
    ]


def _highlight_trace(cells: Sequence[Cell], label: str = WOULD_BE_PICKED) -> list[go.Scatter]:
    """A legend entry (and a star in each cell's corner) for the highlighted CPUs."""
    if not cells:
        return []
    return [
        go.Scatter(
            x=[c.x + 0.32 for c in cells],
            y=[c.y - 0.3 for c in cells],
            mode="markers",
            marker={"symbol": "star", "size": 7, "color": HIGHLIGHT_COLOUR},
            name=label,
            hovertext=[f"CPU {c.cpu.id}: {label}" for c in cells],
            hoverinfo="text",
        )
    ]
