"""The stored mirror → engine snapshot, in a fixed number of queries whatever the size."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone

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
    reservation_option_fields,
    reservation_snapshot,
    zones_of,
)
from topology.adapters.rows import decode_columns, decoded_values
from topology.domain.dra_pools import newest_generation
from topology.domain.pod_phases import FINISHED_PHASES
from topology.models import (
    Cluster,
    Node,
    NodeCPUReservation,
    NodeTopology,
    Pod,
    Reservation,
    ResourceSliceDevice,
    Zone,
    ZoneResource,
    decode_cpus,
)
from topology.models import (
    PodAllocation as StoredAllocation,
)
from topology.parsers.cpulist import parse_cpulist
from topology.parsers.resource_slice import (
    DRA_CPU_CACHE_L3_ID,
    uncore_caches_for,
    uncore_caches_of,
)

# Plain rows, not model instances: at 5,000 nodes × 8 zones the ORM's per-row objects
# and prefetch bookkeeping cost seconds, while the engine only needs the values.
NODE_FIELDS = ("id", "name", "labels", "annotations", "allocatable", "unschedulable")
TOPOLOGY_FIELDS = (
    "node_id",
    "flavour",
    "topology_policies",
    "attributes",
    "cpu_table",
    "cpu_manager_policy",
    "cpu_manager_options",
    "kubelet_reserved_cpus",
    "koordlet",
    "crane_cpu_manager_policy",
    "crane_topology_policy",
)
RESERVATION_FIELDS = ("node_id", "resolved_cpus", "apply_policy", "resources")
POD_FIELDS = (
    "node_name",
    "namespace",
    "name",
    "uid",
    "labels",
    "annotations",
    "containers",
    "init_containers",
    "overhead",
    "owner_references",
    "priority",
    "resources",
)
ALLOCATION_FIELDS = (
    "node_name",
    "namespace",
    "pod_name",
    "pod_uid",
    "source",
    "cpuset",
    "numa_resources",
)
Row = dict[str, Any]


# The JSON columns a PodSpec reads: `stored_pod_specs` leaves them undecoded until asked.
POD_SPEC_JSON = ("labels", "annotations", "containers", "init_containers", "overhead",
                 "owner_references", "resources")  # fmt: skip


def stored_pod_specs(
    pods: QuerySet[Pod], extra: Sequence[str] = ()
) -> Iterator[tuple[Row, Callable[[], PodSpec]]]:
    """Each pod's row (`extra`, decoded) with a function that builds its engine PodSpec
    when called: one query, no model instances. 100k pods are read this way, and most
    of them are never judged (decoding and building every spec was most of the read)."""
    for row in decoded_values(pods, (*POD_FIELDS, *extra), raw=POD_SPEC_JSON):
        yield row, partial(_lazy_pod_spec, row)


def _lazy_pod_spec(row: Row) -> PodSpec:
    return _row_pod_spec(decode_columns(row, POD_SPEC_JSON))


def _row_pod_spec(row: Row) -> PodSpec:
    return pod_spec(
        namespace=row["namespace"],
        name=row["name"],
        uid=row["uid"],
        labels=row["labels"],
        annotations=row["annotations"],
        containers=row["containers"],
        init_containers=row["init_containers"],
        overhead=row["overhead"],
        owner_references=row["owner_references"],
        priority=row["priority"],
        resources=row["resources"],
    )


def _engine_allocation(row: Row, annotations: dict[str, str]) -> PodAllocation:
    return allocation(
        namespace=row["namespace"],
        name=row["pod_name"],
        uid=row["pod_uid"],
        source=row["source"],
        cpuset=parse_cpulist(row["cpuset"]) if row["cpuset"] else None,
        numa_resources=row["numa_resources"],
        pod_annotations=annotations,
    )


def _topology_fields(
    topology: Row | None, zones: list[ZoneParts], cpu_devices: list[dict[str, Any]]
) -> dict[str, Any]:
    """The NodeSnapshot fields that come from the node's NRT (empty without one), with
    the uncore caches of its CPUs that the DRA CPU driver's devices publish."""
    if topology is None:
        return {}
    koordlet = topology["koordlet"] or {}
    qos_exclusive = bool(koordlet.get("system_qos_exclusive"))
    cpus = decode_cpus(bytes(topology["cpu_table"]))
    return {
        "flavour": Flavour(topology["flavour"]),
        "topology_policies": tuple(topology["topology_policies"]),
        "nrt_attributes": topology["attributes"],
        "zones": zones_of(zones),
        "cpus": cpus,
        "uncore_caches": uncore_caches_for(cpus, uncore_caches_of(cpu_devices)),
        "cpu_manager_policy": topology["cpu_manager_policy"],
        "cpu_manager_options": topology["cpu_manager_options"],
        "kubelet_reserved_cpus": parse_cpulist(topology["kubelet_reserved_cpus"]),
        "system_qos_exclusive_cpus": parse_cpulist(
            koordlet.get("system_qos_cpus", "") if qos_exclusive else ""
        ),
        "crane_cpu_manager_policy": topology["crane_cpu_manager_policy"],
        "crane_topology_policy": topology["crane_topology_policy"],
    }


def _reservation_fields(reservation: Row | None) -> dict[str, Any]:
    if reservation is None:
        return {}
    return {
        "node_reserved_cpus": parse_cpulist(reservation["resolved_cpus"]),
        "node_reservation_apply_policy": reservation["apply_policy"],
        "node_reserved_resources": reservation["resources"],
    }


def _node_snapshot(node: Row, parts: _NodeParts) -> NodeSnapshot:
    requested: dict[str, int] = {}
    annotations: dict[tuple[str, str], dict[str, str]] = {}
    for pod in parts.pods:
        add_requests(requested, _row_pod_spec(pod))
        annotations[pod["namespace"], pod["name"]] = pod["annotations"]
    return NodeSnapshot(
        name=node["name"],
        labels=node["labels"],
        annotations=node["annotations"],
        allocatable=node["allocatable"],
        requested=requested,
        allocations=tuple(
            _engine_allocation(a, annotations.get((a["namespace"], a["pod_name"]), {}))
            for a in parts.allocations
        ),
        unschedulable=node["unschedulable"],
        **_topology_fields(parts.topology, parts.zones, parts.cpu_devices),
        **_reservation_fields(parts.reservation),
    )


@dataclass
class _NodeParts:
    topology: Row | None = None
    reservation: Row | None = None
    zones: list[ZoneParts] = field(default_factory=list)
    pods: list[Row] = field(default_factory=list)
    allocations: list[Row] = field(default_factory=list)
    cpu_devices: list[dict[str, Any]] = field(default_factory=list)  # DRA CPU attributes


def _zone_parts_by_node(nodes: QuerySet[Node]) -> dict[int, list[ZoneParts]]:
    """Zones in insertion order (= NRT order), each with its resources by name."""
    zones = Zone.objects.filter(topology__node__in=nodes).order_by("id")
    resources: dict[int, list[tuple[str, int, int, int | None]]] = defaultdict(list)
    rows = ZoneResource.objects.filter(zone__in=zones.values("id")).order_by("zone_id", "name")
    for zone_id, *amounts in rows.values_list(
        "zone_id", "name", "capacity", "allocatable", "available"
    ):
        resources[zone_id].append(tuple(amounts))  # type: ignore[arg-type]
    by_node: dict[int, list[ZoneParts]] = defaultdict(list)
    fields = ("id", "topology__node_id", "name", "zone_type", "numa_id", "costs")
    for row in decoded_values(zones, fields):
        amounts = tuple(resources[row["id"]])
        parts = ZoneParts(row["name"], row["zone_type"], row["numa_id"], row["costs"], amounts)
        by_node[row["topology__node_id"]].append(parts)
    return by_node


def _node_parts(
    cluster: Cluster, nodes: QuerySet[Node], ids: dict[str, int]
) -> dict[int, _NodeParts]:
    """Everything under each node, in one query per table; `ids` maps node name → id."""
    parts: dict[int, _NodeParts] = defaultdict(_NodeParts)
    for row in decoded_values(NodeTopology.objects.filter(node__in=nodes), TOPOLOGY_FIELDS):
        parts[row["node_id"]].topology = row
    reserved = NodeCPUReservation.objects.filter(node__in=nodes)
    for row in decoded_values(reserved, RESERVATION_FIELDS):
        parts[row["node_id"]].reservation = row
    for node_id, zones in _zone_parts_by_node(nodes).items():
        parts[node_id].zones = zones
    pods = Pod.objects.filter(cluster=cluster, node_name__in=nodes.values("name")).exclude(
        phase__in=FINISHED_PHASES  # a pod the kubelet rejected is mirrored, holds nothing
    )
    for row in decoded_values(pods.order_by("namespace", "name"), POD_FIELDS):
        parts[ids[row["node_name"]]].pods.append(row)
    stored = StoredAllocation.objects.filter(cluster=cluster, node_name__in=nodes.values("name"))
    ordered = stored.order_by("namespace", "pod_name", "source")
    for row in decoded_values(ordered, ALLOCATION_FIELDS):
        parts[ids[row["node_name"]]].allocations.append(row)
    devices = ResourceSliceDevice.objects.filter(
        cluster=cluster,
        node_name__in=nodes.values("name"),
        attributes__has_key=DRA_CPU_CACHE_L3_ID,
    ).values_list("node_name", "attributes", "driver", "pool", "resource_slice__pool_generation")
    for node_name, attributes, *_ in newest_generation(list(devices), _pool, _generation):
        parts[ids[node_name]].cpu_devices.append(attributes)
    return parts


def _pool(device: tuple[Any, ...]) -> tuple[str, str]:
    return device[2], device[3]


def _generation(device: tuple[Any, ...]) -> int:
    return int(device[4])


def node_snapshots(cluster: Cluster, names: Iterable[str] | None = None) -> list[NodeSnapshot]:
    """Engine snapshots of the cluster's nodes (all, or those named), in name order."""
    nodes = Node.objects.filter(cluster=cluster)
    if names is not None:
        nodes = nodes.filter(name__in=list(names))
    rows = list(decoded_values(nodes.order_by("name"), NODE_FIELDS))
    parts = _node_parts(cluster, nodes, {row["name"]: row["id"] for row in rows})
    return [_node_snapshot(row, parts[row["id"]]) for row in rows]


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
        pre_allocation=stored.pre_allocation,
        **reservation_option_fields(stored.raw),
    )


def reservation_snapshots(cluster: Cluster) -> tuple[ReservationSnapshot, ...]:
    return tuple(_reservation_snapshot(r) for r in Reservation.objects.filter(cluster=cluster))


def cluster_snapshot(
    cluster: Cluster, *, data_as_of: datetime | None = None, names: Iterable[str] | None = None
) -> ClusterSnapshot:
    """The cluster's mirror as one immutable engine value; reading it changes nothing."""
    reservations = reservation_snapshots(cluster)
    return ClusterSnapshot(
        nodes=tuple(node_snapshots(cluster, names)),
        reservations=reservations,
        taken_at=timezone.now(),
        data_as_of=data_as_of if data_as_of is not None else cluster.last_imported_at,
    )
