"""The overview heatmap and distribution, from plain rows."""

from __future__ import annotations

import math
from datetime import UTC, datetime

from topology.figures.overview import free_distribution, zone_heatmap, zone_hover
from topology.figures.palette import NOT_COMPUTED
from topology.selectors.types import Amounts, Bucket, FiguresView, NodeRow, ZoneCell

NOW = datetime(2024, 6, 4, tzinfo=UTC)
GIB = 1024**3


def cell(numa: int, free: int | None, available: int | None = 22000) -> ZoneCell:
    resources = {
        "cpu": Amounts(32000, 30000, available),
        "memory": Amounts(64 * GIB, 60 * GIB, 40 * GIB),
        "nvidia.com/gpu": Amounts(2, 2, 1),
    }
    return ZoneCell(numa, f"node-{numa}", resources, free)


def figures() -> FiguresView:
    return FiguresView(NOW, 30, 22, 22)


ROWS = [
    NodeRow("a", "upstream-v1alpha2", zones=(cell(0, 22), cell(1, 8)), figures=figures()),
    NodeRow("b", "crane", zones=(cell(0, None, available=None),)),
    NodeRow("c"),
]


def test_columns_are_nodes_and_rows_numa_zones():
    figure = zone_heatmap(ROWS)
    trace = figure.data[0]
    assert list(trace.x) == ["a", "b", "c"] and list(trace.y) == [0, 1]
    assert figure.layout.meta["nodes"] == ["a", "b", "c"]


def test_colour_is_the_free_share_and_the_number_is_written_in_the_cell():
    trace = zone_heatmap(ROWS).data[0]
    assert trace.z[0][0] == 22 * 1000 / 30000
    assert trace.text[0][0] == "22" and trace.text[1][0] == "8"
    assert trace.zmin == 0 and trace.zmax == 1


def empty(value) -> bool:
    return value is None or math.isnan(value)


def test_zones_without_figures_are_marked_not_computed_never_zero():
    figure = zone_heatmap(ROWS)
    free, pending = figure.data
    assert empty(free.z[0][1]) and pending.z[0][1] == 1 and free.text[0][1] == ""
    assert pending.text[0][1] == "?"
    assert pending.colorscale[0][1] == NOT_COMPUTED
    assert "not computed yet" in pending.hovertext[0][1]


def test_missing_zones_are_empty():
    free, pending = zone_heatmap(ROWS).data
    assert empty(free.z[1][1]) and empty(pending.z[1][1])
    assert free.hovertext[1][2] == "" and pending.hovertext[1][2] == ""


def test_hover_shows_free_used_reserved_memory_and_devices():
    text = zone_hover(ROWS[0], ROWS[0].zones[0])
    assert "free for an exclusive pod: <b>22</b> CPUs of 30 allocatable" in text
    assert "cpu: capacity 32 · allocatable 30 · NRT available 22 · used 8 · reserved 2" in text
    assert "memory: capacity 64.0 GiB" in text and "used 20.0 GiB" in text
    assert "nvidia.com/gpu: capacity 2 · allocatable 2 · NRT available 1 · used 1" in text


def test_hover_says_when_a_flavour_publishes_no_available():
    text = zone_hover(ROWS[1], ROWS[1].zones[0])
    assert "available n/p" in text and "used n/p" in text
    assert "Crane publishes no per-zone available" in text


def test_distribution_marks_the_not_computed_bucket_apart():
    buckets = [Bucket("0", 1), Bucket("1–3", 4), Bucket("not computed yet", 2, computed=False)]
    bar = free_distribution(buckets).data[0]
    assert list(bar.y) == [1, 4, 2] and list(bar.text) == ["1", "4", "2"]
    assert bar.marker.color[2] == NOT_COMPUTED and bar.marker.pattern.shape[2] == "/"


def test_a_single_zone_row_gets_a_colour_bar_with_three_ticks():
    """Issue 27: the colour bar collapsed into overlapping labels with one zone row."""
    from topology.figures.overview import _colour_bar

    short = _colour_bar(1)
    assert short["tickvals"] == [0, 0.5, 1] and short["title"]["side"] == "right"
    assert "tickvals" not in _colour_bar(8)
