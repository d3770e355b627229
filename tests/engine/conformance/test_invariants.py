"""The books invariant catches what it is for (issue 29)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from scheduler_api.engine import snapshot as model
from tests.engine.conformance.invariants import BrokenBooks, check_assumed

GI = 2**30


def node(*allocations: model.PodAllocation) -> model.NodeSnapshot:
    zones = tuple(
        model.Zone(n, f"node-{n}", {"cpu": model.ResourceAmounts(4000, 4000, 4000)}) for n in (0, 1)
    )
    cpus = tuple((cpu, cpu, 0, cpu // 4) for cpu in range(8))
    return model.NodeSnapshot(name="n", zones=zones, cpus=cpus, allocations=allocations)


def held(uid: str, cpus: set[int], numa: dict[int, int]) -> model.PodAllocation:
    return model.PodAllocation(
        "ns", uid, uid, model.AllocationSource.KOORDINATOR, cpuset=frozenset(cpus),
        numa_resources={z: {"cpu": c} for z, c in numa.items()}, exclusive=True,
    )  # fmt: skip


def test_sound_books_pass() -> None:
    before = node(held("a", {0, 1}, {0: 2000}))
    check_assumed(
        before, replace(before, allocations=(*before.allocations, held("b", {2}, {0: 1000})))
    )


@pytest.mark.parametrize(
    ("added", "message"),
    [
        (held("b", {1, 2}, {0: 2000}), "both hold cpus"),
        (held("b", {4}, {0: 1000}), "outside its NUMA zones"),
        (held("b", {2, 3}, {0: 3000}), "over-committed"),
    ],
)
def test_broken_books_are_caught(added: model.PodAllocation, message: str) -> None:
    before = node(held("a", {0, 1}, {0: 2000}))
    with pytest.raises(BrokenBooks, match=message):
        check_assumed(before, replace(before, allocations=(*before.allocations, added)))
