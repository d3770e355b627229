"""Invariants of a node's books after an assume (issue 29): checked after every assume the
engine makes while the test suite runs (`tests/conftest.py` wraps `assume`).

What the assume added must keep the books sound, whatever the node held before:
- no NUMA zone is over-committed by Koordinator's books: a zone's Koordinator allocations
  stay within its allocatable amount (when they were within it before), plus what
  koord-scheduler itself does not see of reservation owners (`owners_beyond_reservations`). Crane's
  topology-result is left out: it records whole cores for a pod that asked for fewer
  CPUs (`crane.reference.plugin.whole_cores`), as crane-scheduler writes it;
- a cpuset it holds exclusively shares no CPU with another exclusive holder's in the same
  books (koordlet's, or the kubelet's: each knows only its own; a kubelet that pins a pod
  on a Koordinator node does not see koordlet's cpusets, as in a real node);
- its cpuset lies inside the NUMA zones its allocation names (when the node publishes
  which CPU sits on which zone).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from scheduler_api.engine import snapshot as model
from scheduler_api.engine.koordinator.reference.reservation import (
    assigned_pod_uids,
    is_matchable,
)

KUBELET = model.AllocationSource.KUBELET


class BrokenBooks(AssertionError):
    """An assume left a node's books unsound."""


def _held(allocations: Iterable[model.PodAllocation], numa: int, resource: str) -> int:
    koordinator = (a for a in allocations if a.source is model.AllocationSource.KOORDINATOR)
    return sum(a.numa_resources.get(numa, {}).get(resource, 0) for a in koordinator)


def _exclusive(allocation: model.PodAllocation) -> bool:
    return bool(allocation.cpuset) and (allocation.exclusive or allocation.source is KUBELET)


def owners_beyond_reservations(
    node: model.NodeSnapshot,
    reservations: Iterable[model.ReservationSnapshot],
    taken_from: str = "",
) -> dict[tuple[int, str], int]:
    """What koord-scheduler does not see of the node's zones, per (zone, resource): what
    each matchable reservation's owners hold there beyond what it reserved there.

    koordinator v1.8.0 nodenumaresource/reservation.go gives back a reservation's
    owners in full: mergeReservationAllocations counts an unmatched one's `used` as
    allocatable - remained (= its owners' amounts, never capped at what it reserved),
    and tryAllocateFromReservation / tryAllocateIgnoreReservation add a matched one's
    owners (mergedMatchedAllocated) likewise. An owner that took more on a zone than its
    reservation reserved there (an Aligned reservation lets it take the rest from the
    node) so drops out of the scheduler's books by that excess, and a later pod may be
    placed on it: upstream over-commits the zone by exactly that much. The reservation
    a placed copy took from (`taken_from`) is left out: its owners count in full then.
    """
    excess: dict[tuple[int, str], int] = {}
    for r in reservations:
        if r.uid == taken_from or not is_matchable(node, r):
            continue
        owners = assigned_pod_uids(node, r)
        held: dict[tuple[int, str], int] = {}
        for a in node.allocations:
            if a.uid in owners and a.source is model.AllocationSource.KOORDINATOR:
                for numa, amounts in a.numa_resources.items():
                    for resource, amount in amounts.items():
                        held[numa, resource] = held.get((numa, resource), 0) + amount
        for (numa, resource), amount in held.items():
            reserved = r.numa_resources.get(numa, {}).get(resource, 0)
            if amount > reserved:
                excess[numa, resource] = excess.get((numa, resource), 0) + amount - reserved
    return excess


def check_assumed(
    before: model.NodeSnapshot,
    after: model.NodeSnapshot,
    reservations: Sequence[model.ReservationSnapshot] = (),
) -> None:
    added = after.allocations[len(before.allocations) :]
    if after.allocations[: len(before.allocations)] != before.allocations:
        raise BrokenBooks(f"{after.name}: an assume changed what the node already held")
    taken_from = next((a.reservation_uid for a in added if a.reservation_uid), "")
    unseen = owners_beyond_reservations(before, reservations, taken_from)
    for zone in after.zones:
        if zone.numa_id < 0:
            continue
        for resource, amounts in zone.resources.items():
            limit = amounts.allocatable + unseen.get((zone.numa_id, resource), 0)
            was = _held(before.allocations, zone.numa_id, resource)
            now = _held(after.allocations, zone.numa_id, resource)
            if was <= limit < now:
                unseen_here = limit - amounts.allocatable
                aside = f", {unseen_here} of it unseen by upstream" if unseen_here else ""
                raise BrokenBooks(
                    f"{after.name}: zone {zone.numa_id} over-committed on {resource} "
                    f"({now} held of {amounts.allocatable}{aside})"
                )
    numa_of = {cpu: numa for cpu, _core, _socket, numa in after.cpus}
    for allocation in added:
        if _exclusive(allocation):
            for other in after.allocations:
                if other is allocation or not _exclusive(other):
                    continue
                if other.source is not allocation.source:
                    continue  # another bookkeeper's: it does not know of this one
                if other.uid == allocation.uid:
                    continue  # the kubelet pinning what the same pod's scheduler chose
                shared = allocation.cpuset & other.cpuset
                if shared:
                    raise BrokenBooks(
                        f"{after.name}: {allocation.name} and {other.name} both hold "
                        f"cpus {sorted(shared)}"
                    )
        zones = set(allocation.numa_resources)
        outside = {cpu for cpu in allocation.cpuset if cpu in numa_of and numa_of[cpu] not in zones}
        if zones and outside:
            raise BrokenBooks(
                f"{after.name}: {allocation.name} holds cpus {sorted(outside)} outside its "
                f"NUMA zones {sorted(zones)}"
            )
