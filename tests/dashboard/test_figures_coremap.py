"""The core map builder: colours per state, one colour per pod, marks, hover, highlight."""

from __future__ import annotations

import plotly.graph_objects as go

from tests.factories import hyperthreaded
from topology.choices import CPUState
from topology.domain.cpu_classify import (
    Claim,
    CPUStateInputs,
    Holder,
    HolderKind,
    SharedClaim,
    classify_cpus,
)
from topology.figures.coremap import (
    POD_BASE,
    STATE_ORDER,
    core_map,
    cpu_colour,
    holder_colours,
    layout_cells,
    legend_entries,
)
from topology.figures.palette import POD_COLOURS

ZONES = {0: "node-0", 1: "node-1"}


def state():
    kubelet = Holder(HolderKind.KUBELET, "kubelet reservedSystemCPUs", "x")
    reservation = Holder(HolderKind.RESERVATION, "resv-web", "r", detail="2 of 4 CPUs allocated")
    inputs = CPUStateInputs(
        cpus=tuple(hyperthreaded(zones=2, cores_per_zone=4)),
        pods=(
            Claim(Holder(HolderKind.POD, "team/web-0", source="koordinator"), frozenset({1, 9})),
            Claim(Holder(HolderKind.POD, "team/db-0", source="kubelet"), frozenset({4, 12})),
        ),
        reserved=(Claim(kubelet, frozenset({0, 8})),),
        reservations=(Claim(reservation, frozenset({5, 13})),),
        shared={0: SharedClaim(2000, 2)},
    )
    return classify_cpus("koord-1", inputs)


def heatmap(figure: go.Figure) -> go.Heatmap:
    return figure.data[0]


def cell_of(figure: go.Figure, cpu_id: int) -> tuple[int, int]:
    for y, row in enumerate(heatmap(figure).hovertext):
        for x, text in enumerate(row):
            if text.startswith(f"<b>CPU {cpu_id}</b>"):
                return y, x
    raise AssertionError(f"CPU {cpu_id} is not drawn")


def colour_at(figure: go.Figure, y: int, x: int) -> str:
    """The colour the discrete colourscale paints category z[y][x] with."""
    trace = heatmap(figure)
    value = trace.z[y][x]
    count = trace.zmax + 0.5
    position = (value + 0.5) / count
    bands = trace.colorscale
    for (low, colour), (high, _) in zip(bands[::2], bands[1::2], strict=True):
        if low <= position <= high:
            return colour
    raise AssertionError(position)


def test_each_state_has_its_colour_from_choices():
    figure = core_map(state(), ZONES)
    assert colour_at(figure, *cell_of(figure, 0)) == CPUState.RESERVED.colour
    assert colour_at(figure, *cell_of(figure, 5)) == CPUState.RESERVATION.colour
    assert colour_at(figure, *cell_of(figure, 3)) == CPUState.SHARED.colour
    assert colour_at(figure, *cell_of(figure, 6)) == CPUState.FREE.colour


def test_each_pod_has_its_own_colour_and_code():
    result = state()
    figure = core_map(result, ZONES)
    web, db = colour_at(figure, *cell_of(figure, 1)), colour_at(figure, *cell_of(figure, 4))
    assert web != db and {web, db} <= set(POD_COLOURS)
    assert web not in {s.colour for s in STATE_ORDER}
    y, x = cell_of(figure, 1)
    assert heatmap(figure).text[y][x] == "A"  # colour is never the only signal
    assert heatmap(figure).z[y][x] >= POD_BASE


def test_cell_marks_name_every_state():
    figure = core_map(state(), ZONES)
    marks = {
        cpu: heatmap(figure).text[y][x]
        for cpu in (0, 3, 4, 5, 6)
        for y, x in [cell_of(figure, cpu)]
    }
    assert marks == {0: "x", 3: "s", 4: "B", 5: "r", 6: ""}


def test_hover_names_cpu_core_socket_zone_and_holder():
    figure = core_map(state(), ZONES)
    y, x = cell_of(figure, 9)
    hover = heatmap(figure).hovertext[y][x]
    assert "<b>CPU 9</b> · core 1 · socket 0 · zone node-0" in hover
    assert "held exclusively by a pod: [A] <b>team/web-0</b> (koordinator)" in hover
    y, x = cell_of(figure, 5)
    held = "held by a Reservation (for its owners): [r] <b>resv-web</b>"
    assert held in heatmap(figure).hovertext[y][x]
    assert "2 of 4 CPUs allocated" in heatmap(figure).hovertext[y][x]


def test_siblings_are_stacked_under_their_core_and_zones_are_separate_blocks():
    cells, columns, blocks = layout_cells(state())
    position = {cell.cpu.id: (cell.x, cell.y) for cell in cells}
    assert columns == 4
    assert position[1][0] == position[9][0] and position[9][1] == position[1][1] + 1
    assert [(numa, first, last) for numa, first, last in blocks] == [(0, 0, 1), (1, 3, 4)]


def test_wide_zones_wrap_into_balanced_bands():
    result = classify_cpus(
        "big", CPUStateInputs(cpus=tuple(hyperthreaded(zones=1, cores_per_zone=48)))
    )
    cells, columns, blocks = layout_cells(result)
    assert columns == 24 and blocks == [(0, 0, 3)]


def test_highlighted_cpus_are_outlined_listed_and_said_in_the_hover():
    figure = core_map(state(), ZONES, highlight={6, 14})
    assert figure.layout.meta["highlighted"] == [6, 14]
    outlines = [s for s in figure.layout.shapes if s.line.width == 3]
    assert len(outlines) == 2
    marker = figure.data[-1]
    assert marker.name == "would be picked (what-if)" and len(marker.x) == 2
    y, x = cell_of(figure, 6)
    assert "would be picked" in heatmap(figure).hovertext[y][x]
    assert figure.layout.showlegend is True


def test_no_highlight_no_extra_trace():
    figure = core_map(state(), ZONES)
    assert len(figure.data) == 1 and figure.layout.meta["highlighted"] == []


def test_legend_lists_pods_then_the_other_states_in_use():
    result = state()
    entries = legend_entries(result)
    assert [(e.code, e.label, e.cpus) for e in entries[:2]] == [
        ("A", "team/web-0", 2),
        ("B", "team/db-0", 2),
    ]
    others = {e.state: e.cpus for e in entries[2:]}
    assert others == {
        CPUState.FREE: 6,
        CPUState.SHARED: 2,
        CPUState.RESERVED: 2,
        CPUState.RESERVATION: 2,
    }
    colours = holder_colours(result)
    assert entries[0].colour == colours[result.holders[0]]
    assert cpu_colour(result.cpus[0], colours) == CPUState.RESERVED.colour
