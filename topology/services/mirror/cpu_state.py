"""The state of every logical CPU of a node: exclusive to a pod, shared pool, reserved,
held by a Reservation, or free, with its holder.

The one entry point for the dashboard and the REST API is `node_cpu_state`; the
rules are in `cpu_classify` (pure). Only Koordinator nodes publish per-CPU detail
(koordlet's cpu-topology annotation); for the other flavours the result carries
no CPUs and a sentence saying why, and callers fall back to per-zone counts.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from django.core.exceptions import ObjectDoesNotExist

from topology.choices import CPUState, Flavour, ReservationPhase
from topology.domain.cpu_classify import (
    CPU,
    Claim,
    CPUStateInputs,
    Holder,
    HolderKind,
    NodeCPUState,
    SharedClaim,
    classify_cpus,
    pod_code,
)
from topology.domain.pod_phases import FINISHED_PHASES
from topology.models import Node, NodeTopology, PodAllocation, Reservation
from topology.parsers.cpulist import parse_cpulist

__all__ = [
    "CPU",
    "Holder",
    "HolderKind",
    "NodeCPUState",
    "node_cpu_state",
    "missing_detail_reason",
    "pod_code",
]

RESERVED_MARK = CPUState.RESERVED.mark

_UPSTREAM_WHY = (
    "This node publishes a plain NodeResourceTopology (topology.node.k8s.io), which "
    "reports amounts per NUMA zone only: it names no CPU ids, cores or sockets, so the "
    "cores each pod holds cannot be drawn. Per-zone counts are shown instead."
)
MISSING_DETAIL = {
    Flavour.UPSTREAM_V1ALPHA1: _UPSTREAM_WHY,
    Flavour.UPSTREAM_V1ALPHA2: _UPSTREAM_WHY,
    Flavour.CRANE: (
        "Crane's NodeResourceTopology (topology.crane.io) publishes per-zone capacity, "
        "allocatable and reserved CPU counts, and crane-scheduler's topology-result names "
        "zones, not CPUs, so the cores each pod holds cannot be drawn. Per-zone counts are "
        "shown instead."
    ),
    Flavour.KOORDINATOR: (
        "koordlet has not published its node.koordinator.sh/cpu-topology annotation on this "
        "node's NodeResourceTopology, so CPU ids, cores and sockets are unknown. Per-zone "
        "counts are shown instead."
    ),
}
NO_TOPOLOGY = (
    "No NodeResourceTopology is mirrored for this node, so neither its NUMA zones nor its "
    "CPUs are known."
)


def missing_detail_reason(topology: NodeTopology | None) -> str:
    """The sentence shown where the per-core map would be; "" when there is detail."""
    if topology is None:
        return NO_TOPOLOGY
    if topology.cpu_count:
        return ""
    return MISSING_DETAIL.get(topology.flavour, NO_TOPOLOGY)


def node_cpu_state(*, node: Node) -> NodeCPUState:
    """Every CPU of `node` with its state and holder.

    Two queries (allocations, Available reservations) beyond the node itself; pass
    the node with `select_related("topology", "cpu_reservation")` to avoid two more.
    """
    topology = _related(node, "topology")
    reason = missing_detail_reason(topology)  # type: ignore[arg-type]
    if reason or topology is None:
        return NodeCPUState(node.name, missing_detail=reason)
    allocations = [
        a
        for a in PodAllocation.objects.filter(node=node).select_related("pod")
        if a.pod is None or a.pod.phase not in FINISHED_PHASES
    ]
    reservations = Reservation.objects.filter(node=node, phase=ReservationPhase.AVAILABLE)
    inputs = CPUStateInputs(
        cpus=topology.cpus,
        pods=pod_claims(allocations),
        reserved=reserved_claims(node, topology),
        reservations=tuple(reservation_claims(reservations)),
        shared=shared_claims(allocations),
        notes=system_qos_notes(topology),
    )
    return classify_cpus(node.name, inputs)


def _related(obj: object, name: str) -> Any:
    """A reverse one-to-one, or None when its row does not exist."""
    try:
        return getattr(obj, name)
    except ObjectDoesNotExist:
        return None


def pod_claims(allocations: Iterable[PodAllocation]) -> tuple[Claim, ...]:
    """One claim per pod: its cpusets from every source that published one, merged."""
    cpus: dict[str, set[int]] = defaultdict(set)
    sources: dict[str, set[str]] = defaultdict(set)
    for allocation in allocations:
        if not allocation.cpuset:
            continue
        name = f"{allocation.namespace}/{allocation.pod_name}"
        cpus[name] |= parse_cpulist(allocation.cpuset)
        sources[name].add(allocation.source)
    return tuple(
        Claim(Holder(HolderKind.POD, name, source="+".join(sorted(sources[name]))), frozenset(c))
        for name, c in sorted(cpus.items())
    )


def reserved_claims(node: Node, topology: NodeTopology) -> tuple[Claim, ...]:
    claims = []
    if topology.kubelet_reserved_cpus:
        holder = Holder(
            HolderKind.KUBELET,
            "kubelet reservedSystemCPUs",
            RESERVED_MARK,
            detail=f"CPU manager policy {topology.cpu_manager_policy or 'unknown'}",
        )
        claims.append(Claim(holder, parse_cpulist(topology.kubelet_reserved_cpus)))
    annotation = _related(node, "cpu_reservation")
    cpulist = annotation and (annotation.resolved_cpus or annotation.reserved_cpus)  # type: ignore[attr-defined]
    if cpulist:
        holder = Holder(
            HolderKind.NODE_ANNOTATION,
            "node annotation node.koordinator.sh/reservation",
            RESERVED_MARK,
            detail=f"applyPolicy {annotation.apply_policy or 'Default'}",
        )
        claims.append(Claim(holder, parse_cpulist(cpulist)))
    qos = topology.koordlet or {}
    if qos.get("system_qos_exclusive") and qos.get("system_qos_cpus"):
        holder = Holder(HolderKind.SYSTEM_QOS, "system-QoS cpuset (exclusive)", RESERVED_MARK)
        claims.append(Claim(holder, parse_cpulist(qos["system_qos_cpus"])))
    return tuple(claims)


def reservation_claims(reservations: Iterable[Reservation]) -> Iterable[Claim]:
    for reservation in reservations:
        if not reservation.cpuset:
            continue
        allocated = reservation.allocated.get("cpu", 0) / 1000
        allocatable = reservation.allocatable.get("cpu", 0) / 1000
        holder = Holder(
            HolderKind.RESERVATION,
            reservation.name,
            CPUState.RESERVATION.mark,
            detail=f"{allocated:g} of {allocatable:g} CPUs allocated to its owners",
        )
        yield Claim(holder, parse_cpulist(reservation.cpuset))


def shared_claims(allocations: Iterable[PodAllocation]) -> dict[int, SharedClaim]:
    """Per NUMA zone: CPU requested by pods that published zones but no cpuset."""
    millicores: dict[int, int] = defaultdict(int)
    pods: dict[int, int] = defaultdict(int)
    for allocation in allocations:
        if allocation.cpuset:
            continue
        for numa, resources in (allocation.numa_resources or {}).items():
            cpu = int((resources or {}).get("cpu", 0))
            if cpu > 0:
                millicores[int(numa)] += cpu
                pods[int(numa)] += 1
    return {numa: SharedClaim(millicores[numa], pods[numa]) for numa in sorted(millicores)}


def system_qos_notes(topology: NodeTopology) -> dict[int, tuple[str, ...]]:
    """A non-exclusive system-QoS cpuset changes no state, but the hover says so."""
    qos = topology.koordlet or {}
    if qos.get("system_qos_exclusive") or not qos.get("system_qos_cpus"):
        return {}
    note = ("in the system-QoS cpuset (not exclusive: other pods share it)",)
    return dict.fromkeys(parse_cpulist(qos["system_qos_cpus"]), note)
