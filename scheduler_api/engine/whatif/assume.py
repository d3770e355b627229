"""Assume a placed pod: the node as the next scheduling cycle would see it.

Each system keeps its own books, and the next pod must see the previous one there:
scheduler-plugins debits the chosen NUMA zone (as the NRT reads once the exporter
has seen the pod start; its OverReserve cache debits every zone until then), Crane
and Koordinator read the per-NUMA amounts their own annotation publishes, and the
kubelet's pinned CPUs leave the free pool. Every system also sees the node-level
requests grow by the pod's. A pod Koordinator nominated to a reservation is that
reservation's owner from then on (`book_reservation`): the next replica sees what it took,
and an allocateOnce reservation used up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from scheduler_api.engine.koordinator.reference.pod import koord_exclusive_policy
from scheduler_api.engine.koordinator.reference.reservation import book_owner
from scheduler_api.engine.model.kubernetes import pod_request
from scheduler_api.engine.model.results import PlacementResult
from scheduler_api.engine.model.snapshot import (
    AllocationSource,
    NodeSnapshot,
    PodAllocation,
    PodSpec,
    QoSClass,
    ReservationSnapshot,
    ResourceAmounts,
    TopologyManagerScope,
    Zone,
    reservation_uid_of,
)
from scheduler_api.engine.schedulerplugins.reference.common import (
    effective_request,
    is_numa_affine,
    resolve_topology_manager,
)
from scheduler_api.engine.schedulerplugins.reference.match import container_zones
from scheduler_api.engine.whatif.systems import Scheduler, reads_pod_level_requests

Debits = dict[int, dict[str, int]]


def _add(base: Mapping[str, int], extra: Mapping[str, int]) -> dict[str, int]:
    total = dict(base)
    for name, amount in extra.items():
        total[name] = total.get(name, 0) + amount
    return total


def _debit(debits: Debits, numa: int, requests: Mapping[str, int], qos: QoSClass) -> None:
    """What kubelet hands out exclusively: everything for Guaranteed, devices otherwise."""
    into = debits.setdefault(numa, {})
    for name, amount in requests.items():
        if amount and (qos is QoSClass.GUARANTEED or not is_numa_affine(name)):
            into[name] = into.get(name, 0) + amount


def nrt_debits(node: NodeSnapshot, pod: PodSpec, verdict: PlacementResult) -> Debits:
    """Per-NUMA amounts scheduler-plugins' reserve step takes off the chosen zones."""
    if not verdict.numa_zones:
        return {}
    debits: Debits = {}
    scope = resolve_topology_manager(node.topology_policies, node.nrt_attributes).scope
    if scope is TopologyManagerScope.POD:
        _debit(debits, verdict.numa_zones[0], effective_request(pod), pod.qos_class)
        return debits
    chosen = container_zones(node, pod)
    if isinstance(chosen, PlacementResult):
        return {}
    for container, numa in zip(pod.containers, chosen, strict=True):
        _debit(debits, numa, container.requests, pod.qos_class)
    return debits


def _debited_zone(zone: Zone, debit: Mapping[str, int]) -> Zone:
    resources = dict(zone.resources)
    for name, amount in debit.items():
        if name in resources:
            held = resources[name]
            resources[name] = ResourceAmounts(
                held.capacity, held.allocatable, max(held.available - amount, 0)
            )
    return replace(zone, resources=resources)


def debit_zones(node: NodeSnapshot, debits: Debits) -> tuple[Zone, ...]:
    return tuple(
        _debited_zone(zone, debits[zone.numa_id]) if zone.numa_id in debits else zone
        for zone in node.zones
    )


def assumed_allocation(
    pod: PodSpec, uid: str, system: Scheduler, verdict: PlacementResult
) -> PodAllocation | None:
    """The allocation a placed pod leaves in its scheduler's books (None: nothing kept)."""
    if system is Scheduler.CRANE and verdict.numa_resources:
        return PodAllocation(
            pod.namespace, pod.name, uid, AllocationSource.CRANE,
            numa_resources=verdict.numa_resources,
        )  # fmt: skip
    if system is Scheduler.KOORDINATOR and (verdict.cpuset or verdict.numa_resources):
        return PodAllocation(
            pod.namespace, pod.name, uid, AllocationSource.KOORDINATOR,
            cpuset=verdict.cpuset or frozenset(), numa_resources=verdict.numa_resources,
            exclusive=bool(verdict.cpuset), cpu_exclusive_policy=koord_exclusive_policy(pod),
            reservation_uid=reservation_uid_of(verdict.annotations),
        )  # fmt: skip
    return None


def assume(
    node: NodeSnapshot,
    pod: PodSpec,
    verdict: PlacementResult,
    system: Scheduler,
    *,
    uid: str,
    pinned: frozenset[int] | None = None,
) -> NodeSnapshot:
    """`node` after `pod` (placed as `verdict` says, with the assumed `uid`) is bound."""
    # what the scheduler's own NodeInfo adds for the pod (spec.resources as it reads them)
    request = pod_request(pod, pod_level=reads_pod_level_requests(system))
    requested = _add(_add(node.requested, request), {"pods": 1})
    zones = node.zones
    if system is Scheduler.SCHEDULER_PLUGINS:
        zones = debit_zones(node, nrt_debits(node, pod, verdict))
    allocations = list(node.allocations)
    held = assumed_allocation(pod, uid, system, verdict)
    if held is not None:
        allocations.append(held)
    if pinned:
        allocations.append(
            PodAllocation(pod.namespace, pod.name, uid, AllocationSource.KUBELET, cpuset=pinned)
        )
    return replace(node, requested=requested, zones=zones, allocations=tuple(allocations))


def book_reservation(
    reservations: Sequence[ReservationSnapshot],
    pod: PodSpec,
    verdict: PlacementResult,
    system: Scheduler,
    *,
    uid: str,
) -> tuple[ReservationSnapshot, ...] | None:
    """`reservations` after `pod` (bound as `uid`) became the owner of the reservation its
    verdict's reservation-allocated annotation names (koord-scheduler's Reserve assumes
    it into the reservation cache); None when it names none of them."""
    named = reservation_uid_of(verdict.annotations) if system is Scheduler.KOORDINATOR else ""
    if not named or not any(r.uid == named for r in reservations):
        return None
    return tuple(book_owner(r, pod, uid) if r.uid == named else r for r in reservations)
