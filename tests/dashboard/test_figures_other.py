"""Zone bars and the L3 ways chart."""

from __future__ import annotations

from topology.choices import ResctrlClass
from topology.domain.resctrl import ResctrlValues, effective_class, group_schemata
from topology.figures.qos import OVERLAP, l3_ways
from topology.figures.zones import charted_resources, zone_bars
from topology.selectors.types import Amounts, ZoneCell

GIB = 1024**3


def zones(available: int | None = 20000) -> list[ZoneCell]:
    resources = {
        "cpu": Amounts(32000, 30000, available),
        "memory": Amounts(64 * GIB, 60 * GIB, None),
        "hugepages-1Gi": Amounts(8 * GIB, 8 * GIB, 4 * GIB),
        "hugepages-2Mi": Amounts(0, 0, 0),
        "nvidia.com/gpu": Amounts(2, 2, 1),
        "kubernetes.io/batch-cpu": Amounts(1000, 1000, 1000),
    }
    return [ZoneCell(0, "node-0", resources), ZoneCell(1, "node-1", {"cpu": resources["cpu"]})]


def test_charts_cpu_memory_used_hugepages_and_devices_only():
    assert charted_resources(zones()) == ["cpu", "memory", "hugepages-1Gi", "nvidia.com/gpu"]


def test_each_measure_has_a_colour_and_a_pattern_and_units_are_readable():
    figure = zone_bars(zones())
    cpu = [t for t in figure.data if t.xaxis == "x"]
    assert [t.name for t in cpu] == ["capacity", "allocatable", "available"]
    assert len({t.marker.color for t in cpu}) == 3
    assert len({t.marker.pattern.shape for t in cpu}) == 3
    assert list(cpu[0].y) == [32.0, 32.0]
    assert figure.layout.meta["resources"][0] == "cpu"


def test_an_unpublished_value_is_left_out_and_said_so():
    figure = zone_bars(zones())
    memory_available = [t for t in figure.data if t.xaxis == "x2" and t.name == "available"][0]
    assert memory_available.y[0] is None
    assert "n/p" in memory_available.hovertext[0]
    gpu_capacity = [t for t in figure.data if t.xaxis == "x4" and t.name == "capacity"][0]
    assert "not in this zone" in gpu_capacity.hovertext[1]


def test_l3_ways_show_each_group_and_where_ls_and_be_overlap():
    classes = {c: effective_class(c, []) for c in ResctrlClass.values}
    classes[ResctrlClass.LS] = effective_class(
        ResctrlClass.LS, [("c", ResctrlValues(True, 10, 100, 100))]
    )
    schemata = group_schemata(classes, "7ff", "GenuineIntel", [0])
    figure = l3_ways(list(classes.values()), schemata, 11)
    rows = {trace.name: list(trace.base) for trace in figure.data}
    assert rows["LSR"] == list(range(11))
    assert rows["LS"] == list(range(2, 11))
    assert rows["BE"] == [0, 1, 2, 3]
    overlap = figure.data[-1]
    assert overlap.y[0] == OVERLAP and list(overlap.base) == [2, 3]
    assert figure.layout.meta["overlap"] == [2, 3]
    assert "MB 100" in figure.data[0].y[0]
