"""Fragmentation and what each NUMA zone's CPUs are doing (issue 33), defined once in
the engine and read by the figures, the metrics and the charts."""

from __future__ import annotations

import pytest

from scheduler_api.engine import (
    AllocationSource,
    Flavour,
    NodeSnapshot,
    PodAllocation,
    ResourceAmounts,
    Zone,
    cluster_fragmentation,
    fragmentation,
    zone_cpus,
)


@pytest.mark.parametrize(
    ("free", "expected"),
    [
        pytest.param({0: 8, 1: 0}, 0.0, id="one-zone-holds-all"),
        pytest.param({0: 4, 1: 4}, 0.5, id="two-even-zones"),
        pytest.param({0: 2, 1: 2, 2: 2, 3: 2}, 0.75, id="four-thin-zones"),
        pytest.param({0: 6, 1: 2}, 0.25, id="the-readme-example"),
        pytest.param({0: 0, 1: 0}, 0.0, id="nothing-free"),
    ],
)
def test_fragmentation(free: dict[int, int], expected: float) -> None:
    assert fragmentation(free) == pytest.approx(expected)


def test_cluster_fragmentation_weighs_nodes_by_their_free_cpus() -> None:
    assert cluster_fragmentation([(6, 8), (4, 4)]) == pytest.approx(1 - 10 / 12)
    assert cluster_fragmentation([]) == 0.0


def node_with_cpus() -> NodeSnapshot:
    rows = tuple((cpu, cpu // 2, 0, cpu // 8) for cpu in range(16))  # 2 zones of 8 CPUs
    pinned = PodAllocation("ns", "p", "uid-p", AllocationSource.KOORDINATOR,
                           cpuset=frozenset({2, 3, 10}))  # fmt: skip
    return NodeSnapshot(
        name="n", flavour=Flavour.KOORDINATOR, allocatable={"cpu": 16000},
        cpus=rows, allocations=(pinned,), kubelet_reserved_cpus=frozenset({0}),
        node_reserved_cpus=frozenset({1, 8}),
    )  # fmt: skip


def test_each_cpu_is_counted_once_reserved_before_pinned() -> None:
    zones = zone_cpus(node_with_cpus(), reservation_cpus=frozenset({4, 2}))
    zone0, zone1 = zones[0], zones[1]
    assert zone0.reserved == {"kubelet": 1, "node": 1, "system-qos": 0, "reservation": 2}
    assert (zone0.exclusive, zone0.shared, zone0.capacity) == (1, 3, 8)  # CPU 2 is reserved
    assert zone1.reserved == {"kubelet": 0, "node": 1, "system-qos": 0, "reservation": 0}
    assert (zone1.exclusive, zone1.shared) == (1, 6)
    for zone in zones.values():
        assert zone.exclusive + zone.shared + sum(zone.reserved.values()) == zone.capacity


def test_without_cpu_detail_only_capacity_and_free_are_known() -> None:
    zone = Zone(0, "node-0", {"cpu": ResourceAmounts(8000, 8000, 5000)})
    node = NodeSnapshot(name="n", flavour=Flavour.UPSTREAM_V1ALPHA2, allocatable={}, zones=(zone,))
    (only,) = zone_cpus(node).values()
    assert (only.capacity, only.free, only.exclusive, only.reserved) == (8, 5, None, None)
