"""Invariants of a node's books after an assume (issue 29): checked after every assume the
engine makes while the test suite runs (`tests/conftest.py` wraps `assume`).

What the assume added must keep the books sound, whatever the node held before:
- no NUMA zone is over-committed by Koordinator's books: a zone's Koordinator allocations
  stay within its allocatable amount (when they were within it before). Crane's
  topology-result is left out: it records whole cores for a pod that asked for fewer
  CPUs (`crane.reference.plugin.whole_cores`), as crane-scheduler writes it;
- a cpuset it holds exclusively shares no CPU with another exclusive holder's in the same
  books (koordlet's, or the kubelet's: each knows only its own; a kubelet that pins a pod
  on a Koordinator node does not see koordlet's cpusets, as in a real node);
- its cpuset lies inside the NUMA zones its allocation names (when the node publishes
  which CPU sits on which zone).
"""

from __future__ import annotations

from collections.abc import Iterable

from scheduler_api.engine import snapshot as model

KUBELET = model.AllocationSource.KUBELET


class BrokenBooks(AssertionError):
    """An assume left a node's books unsound."""


def _held(allocations: Iterable[model.PodAllocation], numa: int, resource: str) -> int:
    koordinator = (a for a in allocations if a.source is model.AllocationSource.KOORDINATOR)
    return sum(a.numa_resources.get(numa, {}).get(resource, 0) for a in koordinator)


def _exclusive(allocation: model.PodAllocation) -> bool:
    return bool(allocation.cpuset) and (allocation.exclusive or allocation.source is KUBELET)


def check_assumed(before: model.NodeSnapshot, after: model.NodeSnapshot) -> None:
    added = after.allocations[len(before.allocations) :]
    if after.allocations[: len(before.allocations)] != before.allocations:
        raise BrokenBooks(f"{after.name}: an assume changed what the node already held")
    # A copy placed from a reservation may over-commit a zone as koord-scheduler would:
    # tryAllocateFromReusable (koordinator v1.8.0 nodenumaresource/reservation.go) gives
    # back every matched reservation's owners' NUMA amounts, including resources the
    # reservation itself never reserved, and takes back only the nominated one's remains.
    from_reservation = any(a.reservation_uid for a in added)
    for zone in after.zones:
        if zone.numa_id < 0 or from_reservation:
            continue
        for resource, amounts in zone.resources.items():
            was = _held(before.allocations, zone.numa_id, resource)
            now = _held(after.allocations, zone.numa_id, resource)
            if was <= amounts.allocatable < now:
                raise BrokenBooks(
                    f"{after.name}: zone {zone.numa_id} over-committed on {resource} "
                    f"({now} held of {amounts.allocatable})"
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
