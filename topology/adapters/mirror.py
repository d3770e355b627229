"""The stored mirror → engine snapshot, in a fixed number of queries whatever the size."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime

from django.db.models import Prefetch, QuerySet
from django.utils import timezone

from scheduler_api.engine.snapshot import (
    ClusterSnapshot,
    Flavour,
    NodeSnapshot,
    PodAllocation,
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
from topology.models import (
    Cluster,
    Node,
    NodeCPUReservation,
    NodeTopology,
    Pod,
    Reservation,
    Zone,
)
from topology.models import (
    PodAllocation as StoredAllocation,
)
from topology.parsers.cpulist import parse_cpulist


def _zone_parts(topology: NodeTopology) -> list[ZoneParts]:
    ordered = sorted(topology.zones.all(), key=lambda z: z.id)  # insertion order = NRT order
    return [
        ZoneParts(
            z.name,
            z.zone_type,
            z.numa_id,
            z.costs,
            tuple((r.name, r.capacity, r.allocatable, r.available) for r in z.resources.all()),
        )
        for z in ordered
    ]


def stored_pod_spec(pod: Pod):  # noqa: ANN201 - PodSpec, kept short for readability
    return pod_spec(
        namespace=pod.namespace,
        name=pod.name,
        uid=pod.uid,
        labels=pod.labels,
        annotations=pod.annotations,
        containers=pod.containers,
        init_containers=pod.init_containers,
        overhead=pod.overhead,
        owner_references=pod.owner_references,
        priority=pod.priority,
    )


def _engine_allocation(stored: StoredAllocation, annotations: dict[str, str]) -> PodAllocation:
    return allocation(
        namespace=stored.namespace,
        name=stored.pod_name,
        uid=stored.pod_uid,
        source=stored.source,
        cpuset=parse_cpulist(stored.cpuset) if stored.cpuset else None,
        numa_resources=stored.numa_resources,
        pod_annotations=annotations,
    )


def _node_snapshot(
    node: Node, pods: list[Pod], allocations: list[StoredAllocation]
) -> NodeSnapshot:
    topology: NodeTopology | None = getattr(node, "topology", None)
    reservation: NodeCPUReservation | None = getattr(node, "cpu_reservation", None)
    requested: dict[str, int] = {}
    for pod in pods:
        add_requests(requested, stored_pod_spec(pod))
    annotations = {(p.namespace, p.name): p.annotations for p in pods}
    koordlet = topology.koordlet if topology else {}
    qos_exclusive = bool(koordlet.get("system_qos_exclusive"))
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
        cpus=topology.cpus if topology else (),
        cpu_manager_policy=topology.cpu_manager_policy if topology else "",
        cpu_manager_options=topology.cpu_manager_options if topology else {},
        kubelet_reserved_cpus=parse_cpulist(topology.kubelet_reserved_cpus if topology else ""),
        node_reserved_cpus=parse_cpulist(reservation.resolved_cpus if reservation else ""),
        node_reservation_apply_policy=reservation.apply_policy if reservation else "",
        node_reserved_resources=reservation.resources if reservation else {},
        system_qos_exclusive_cpus=parse_cpulist(
            koordlet.get("system_qos_cpus", "") if qos_exclusive else ""
        ),
        allocations=tuple(
            _engine_allocation(a, annotations.get((a.namespace, a.pod_name), {}))
            for a in allocations
        ),
        crane_cpu_manager_policy=topology.crane_cpu_manager_policy if topology else "",
        crane_topology_policy=topology.crane_topology_policy if topology else "",
        unschedulable=node.unschedulable,
    )


def _nodes(cluster: Cluster, names: Iterable[str] | None) -> QuerySet[Node]:
    zones = Zone.objects.prefetch_related("resources")
    nodes = (
        Node.objects.filter(cluster=cluster)
        .select_related("topology", "cpu_reservation")
        .prefetch_related(Prefetch("topology__zones", queryset=zones))
        .order_by("name")
    )
    return nodes if names is None else nodes.filter(name__in=list(names))


def node_snapshots(cluster: Cluster, names: Iterable[str] | None = None) -> list[NodeSnapshot]:
    """Engine snapshots of the cluster's nodes (all, or those named), in name order."""
    nodes = list(_nodes(cluster, names))
    node_names = [n.name for n in nodes]
    pods: dict[str, list[Pod]] = defaultdict(list)
    for pod in Pod.objects.filter(cluster=cluster, node_name__in=node_names):
        pods[pod.node_name].append(pod)
    allocations: dict[str, list[StoredAllocation]] = defaultdict(list)
    for stored in StoredAllocation.objects.filter(cluster=cluster, node_name__in=node_names):
        allocations[stored.node_name].append(stored)
    return [_node_snapshot(n, pods[n.name], allocations[n.name]) for n in nodes]


def _reservation_snapshot(stored: Reservation) -> ReservationSnapshot:
    return reservation_snapshot(
        name=stored.name,
        uid=stored.uid,
        node_name=stored.node_name,
        phase=stored.phase,
        owners=stored.owners,
        allocatable=stored.allocatable,
        allocated=stored.allocated,
        allocate_once=stored.allocate_once,
        allocate_policy=stored.allocate_policy,
        unschedulable=stored.unschedulable,
        cpuset=parse_cpulist(stored.cpuset),
        numa_resources=stored.numa_resources,
        current_owners=stored.current_owners,
    )


def cluster_snapshot(
    cluster: Cluster, *, data_as_of: datetime | None = None, names: Iterable[str] | None = None
) -> ClusterSnapshot:
    """The cluster's mirror as one immutable engine value; reading it changes nothing."""
    reservations = tuple(
        _reservation_snapshot(r) for r in Reservation.objects.filter(cluster=cluster)
    )
    return ClusterSnapshot(
        nodes=tuple(node_snapshots(cluster, names)),
        reservations=reservations,
        taken_at=timezone.now(),
        data_as_of=data_as_of if data_as_of is not None else cluster.last_imported_at,
    )
