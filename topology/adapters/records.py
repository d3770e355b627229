"""Parsed records (straight from kubectl dumps) → engine snapshot, with no database."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from operator import attrgetter
from typing import Any

from scheduler_api.engine import (
    ClusterSnapshot,
    Flavour,
    NodeSnapshot,
    PodAllocation,
    PodSpec,
    ReservationSnapshot,
)
from topology.adapters.parts import (
    ZoneParts,
    add_requests,
    allocation,
    pod_spec,
    reservation_snapshot,
    zones_of,
)
from topology.domain.dra_pools import newest_generation
from topology.parsers import MirroredKind, parse_object
from topology.parsers.node import NodeRecord
from topology.parsers.nrt import TopologyRecord
from topology.parsers.pod import PodRecord
from topology.parsers.reservation import ReservationRecord
from topology.parsers.resource_slice import (
    ResourceSliceRecord,
    uncore_caches_for,
    uncore_caches_of,
)


def pod_spec_of(record: PodRecord, raw: dict[str, Any] | None = None) -> PodSpec:
    """A parsed pod as the engine sees it; `raw` (the manifest) adds quantity formats."""
    return pod_spec(
        namespace=record.namespace,
        name=record.name,
        uid=record.uid,
        labels=record.labels,
        annotations=record.annotations,
        containers=[c.as_dict() for c in record.containers],
        init_containers=[c.as_dict() for c in record.init_containers],
        overhead=record.overhead,
        owner_references=record.owner_references,
        priority=record.priority,
        resources=record.resources,
        raw_spec=(raw or {}).get("spec") if isinstance((raw or {}).get("spec"), dict) else None,
    )


def _zone_parts(topology: TopologyRecord) -> list[ZoneParts]:
    return [
        ZoneParts(
            z.name,
            z.zone_type,
            z.numa_id,
            z.costs,
            tuple((r.name, r.capacity, r.allocatable, r.available) for r in z.resources),
        )
        for z in topology.zones
    ]


def _allocations(pods: Sequence[PodRecord], topology: TopologyRecord | None) -> list[PodAllocation]:
    found = [
        allocation(
            namespace=p.namespace, name=p.name, uid=p.uid, source=a.source,
            cpuset=a.cpuset, numa_resources=a.numa_resources, pod_annotations=p.annotations,
        )
        for p in pods
        for a in p.allocations
    ]  # fmt: skip
    koordlet = topology.koordlet if topology else None
    for alloc in koordlet.pod_cpu_allocs if koordlet else ():
        found.append(
            allocation(
                namespace=alloc.namespace, name=alloc.name, uid=alloc.uid,
                source="kubelet", cpuset=alloc.cpuset, numa_resources={},
            )
        )  # fmt: skip
    return found


def node_snapshot_of(
    node: NodeRecord,
    topology: TopologyRecord | None,
    pods: Sequence[PodRecord],
    slices: Sequence[ResourceSliceRecord] = (),
) -> NodeSnapshot:
    requested: dict[str, int] = {}
    for pod in pods:
        add_requests(requested, pod_spec_of(pod))
    koordlet = topology.koordlet if topology else None
    resolved = koordlet.node_reservation if koordlet else None
    annotated = node.reservation
    counted = newest_generation(slices, _pool, attrgetter("pool_generation"))
    devices = (device.attributes for s in counted for device in s.devices)
    return NodeSnapshot(
        name=node.name,
        flavour=Flavour(topology.flavour) if topology else None,
        labels=node.labels,
        annotations=node.annotations,
        allocatable=node.allocatable,
        requested=requested,
        topology_policies=tuple(topology.topology_policies) if topology else (),
        nrt_attributes=topology.attributes if topology else {},
        zones=zones_of(_zone_parts(topology)) if topology else (),
        cpus=koordlet.cpus if koordlet else (),
        uncore_caches=uncore_caches_for(koordlet.cpus, uncore_caches_of(devices))
        if koordlet
        else {},
        cpu_manager_policy=koordlet.cpu_manager_policy if koordlet else "",
        cpu_manager_options=koordlet.cpu_manager_options if koordlet else {},
        kubelet_reserved_cpus=koordlet.kubelet_reserved_cpus if koordlet else frozenset(),
        node_reserved_cpus=(resolved.reserved_cpus or frozenset()) if resolved else frozenset(),
        node_reservation_apply_policy=annotated.apply_policy if annotated else "",
        node_reserved_resources=annotated.resources if annotated else {},
        system_qos_exclusive_cpus=(
            koordlet.system_qos_cpus if koordlet and koordlet.system_qos_exclusive else frozenset()
        ),
        allocations=tuple(_allocations(pods, topology)),
        crane_cpu_manager_policy=topology.crane_cpu_manager_policy if topology else "",
        crane_topology_policy=topology.crane_topology_policy if topology else "",
        unschedulable=node.unschedulable,
    )


def _pool(record: ResourceSliceRecord) -> tuple[str, str]:
    return record.driver, record.pool


def reservation_snapshot_of(record: ReservationRecord) -> ReservationSnapshot:
    alloc = record.allocation
    return reservation_snapshot(
        name=record.name,
        uid=record.uid,
        node_name=record.node_name,
        phase=record.phase,
        owners=record.owners,
        allocatable=record.allocatable,
        allocated=record.allocated,
        allocate_once=record.allocate_once,
        allocate_policy=record.allocate_policy,
        unschedulable=record.unschedulable,
        cpuset=(alloc.cpuset or frozenset()) if alloc else frozenset(),
        numa_resources=alloc.numa_resources if alloc else {},
        current_owners=record.current_owners,
        labels=record.options.labels,
        restricted_options=record.options.restricted_options,
        pre_allocation=record.pre_allocation,
        pre_allocation_mode=record.options.pre_allocation_mode,
        pre_allocation_multiple=record.options.pre_allocation_multiple,
    )


def snapshot_from_objects(
    objects: Iterable[dict[str, Any]], *, taken_at: datetime | None = None
) -> ClusterSnapshot:
    """A snapshot straight from Kubernetes objects; raises ObjectParseError on a bad one.

    Pods bound to nodes count towards those nodes; finished pods are ignored, as
    the scheduler ignores them. The data age is unknown (a dump says not when).
    """
    nodes: dict[str, NodeRecord] = {}
    topologies: dict[str, TopologyRecord] = {}
    pods: dict[str, list[PodRecord]] = defaultdict(list)
    reservations: list[ReservationSnapshot] = []
    slices: dict[str, list[ResourceSliceRecord]] = defaultdict(list)
    for obj in objects:
        parsed = parse_object(obj)
        if parsed is None:
            continue
        record = parsed.record
        if parsed.kind is MirroredKind.NODE and isinstance(record, NodeRecord):
            nodes[record.name] = record
        elif parsed.kind is MirroredKind.TOPOLOGY and isinstance(record, TopologyRecord):
            topologies[record.name] = record
        elif isinstance(record, PodRecord) and record.holds_resources:
            pods[record.node_name].append(record)
        elif isinstance(record, ReservationRecord):
            reservations.append(reservation_snapshot_of(record))
        elif isinstance(record, ResourceSliceRecord) and record.node_name:
            slices[record.node_name].append(record)
    snapshots = tuple(
        node_snapshot_of(n, topologies.get(n.name), pods.get(n.name, []), slices.get(n.name, []))
        for n in sorted(nodes.values(), key=lambda n: n.name)
    )
    return ClusterSnapshot(snapshots, tuple(reservations), taken_at or datetime.now(UTC))
