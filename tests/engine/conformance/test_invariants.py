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


def reservation(numa: dict[int, int], uid: str = "r1") -> model.ReservationSnapshot:
    return model.ReservationSnapshot(
        name=uid, uid=uid, node_name="n", phase=model.ReservationPhase.AVAILABLE,
        owners=(), allocatable={"cpu": sum(numa.values())}, allocate_once=False,
        numa_resources={z: {"cpu": c} for z, c in numa.items()},
    )  # fmt: skip


def test_an_owner_beyond_its_reservation_is_allowed_exactly_its_excess() -> None:
    """koord-scheduler gives an owner back in full (nodenumaresource/reservation.go), so
    what it holds beyond its reservation on a zone may be placed again: by that much."""
    owner = replace(held("a", set(), {0: 3000}), reservation_uid="r1", exclusive=False)
    before = node(owner)
    r = reservation({0: 1000})
    within = replace(before, allocations=(owner, held("b", set(), {0: 3000})))
    check_assumed(before, within, (r,))  # 6000 held of 4000: 2000 unseen upstream
    beyond = replace(before, allocations=(owner, held("b", set(), {0: 3001})))
    with pytest.raises(BrokenBooks, match="2000 of it unseen by upstream"):
        check_assumed(before, beyond, (r,))
    with pytest.raises(BrokenBooks, match="over-committed"):
        check_assumed(before, within)  # without the reservation: no allowance


def test_the_reservation_a_copy_took_from_gets_no_allowance() -> None:
    owner = replace(held("a", set(), {0: 3000}), reservation_uid="r1", exclusive=False)
    before = node(owner)
    copy = replace(held("b", set(), {0: 3000}), reservation_uid="r1", exclusive=False)
    with pytest.raises(BrokenBooks, match="over-committed"):
        check_assumed(before, replace(before, allocations=(owner, copy)), (reservation({0: 1000}),))
