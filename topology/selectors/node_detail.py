"""One node in full: zones, CPU states, pods with their allocations, policies, raw objects.

A fixed number of queries (about ten) whatever the node's size.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from django.shortcuts import get_object_or_404

from topology.choices import CPUState
from topology.models import (
    Cluster,
    Node,
    NodePolicy,
    NodeTopology,
    Pod,
    PodAllocation,
    Reservation,
    Zone,
)
from topology.parsers.quantity import format_resource_list
from topology.selectors.common import related_or_none
from topology.selectors.dra import NumaDevices, by_numa_node, node_dra_devices
from topology.selectors.overview import node_row, zones_of
from topology.selectors.types import Amounts, NodeRow, ZoneCell
from topology.services.mirror.cpu_state import NodeCPUState, node_cpu_state

KOORD_LABELS = (
    "node.koordinator.sh/numa-topology-policy",
    "node.koordinator.sh/numa-allocate-strategy",
    "node.koordinator.sh/cpu-bind-policy",
)


@dataclass(frozen=True)
class AllocationView:
    source: str
    cpuset: str
    zones: str  # "0: 4 cpu, 16 GiB; 1: …"


@dataclass(frozen=True)
class PodView:
    namespace: str
    name: str
    phase: str
    qos_class: str
    koord_qos: str
    cpu_request: int
    allocations: tuple[AllocationView, ...]
    code: str = ""
    colour: str = ""

    @property
    def full_name(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True)
class ZoneCountRow:
    """One zone in numbers: what the NRT publishes, what pods claim, what each CPU is."""

    cell: ZoneCell
    claimed: int  # millicores the published allocations place on the zone
    states: tuple[tuple[CPUState, int], ...]  # empty without per-CPU detail


@dataclass(frozen=True)
class NodeDetail:
    node: Node
    topology: NodeTopology | None
    row: NodeRow
    cpu_state: NodeCPUState
    zone_names: dict[int, str]
    pods: list[PodView]
    reservations: list[Reservation]
    policies: list[tuple[str, str]]
    desired: list[tuple[str, str]] = field(default_factory=list)
    raw: list[tuple[str, str]] = field(default_factory=list)
    zone_rows: list[ZoneCountRow] = field(default_factory=list)
    distances: list[tuple[str, list[str]]] = field(default_factory=list)
    devices: list[DeviceRow] = field(default_factory=list)
    # DRA devices (ResourceSlices) by NUMA node, beside the NRT zones: shown, not judged.
    dra: list[NumaDevices] = field(default_factory=list)


@dataclass(frozen=True)
class DeviceRow:
    """One device resource and what each NUMA zone publishes of it; None where a zone
    publishes none."""

    resource: str
    per_zone: tuple[Amounts | None, ...]


def device_rows(cells: Sequence[ZoneCell]) -> list[DeviceRow]:
    """Which zone each device sits on: the per-zone amounts of every device resource."""
    names = sorted({name for cell in cells for name in cell.resources if is_device(name)})
    return [DeviceRow(name, tuple(cell.resources.get(name) for cell in cells)) for name in names]


def is_device(resource: str) -> bool:
    """An extended resource as Kubernetes defines one (`IsExtendedResourceName`): a name
    with a domain other than kubernetes.io, which device plugins advertise (nvidia.com/gpu,
    a NIC's VFs). CPU, memory, hugepages and Koordinator's kubernetes.io/batch-* are not."""
    domain, slash, _ = resource.partition("/")
    return bool(slash) and domain != "kubernetes.io" and not resource.startswith("requests.")


def node_for_detail(cluster: Cluster, name: str) -> Node:
    queryset = Node.objects.filter(cluster=cluster).select_related(
        "topology", "figures", "cpu_reservation", "desired_policy"
    )
    return get_object_or_404(queryset, name=name)


def node_detail(cluster: Cluster, name: str) -> NodeDetail:
    node = node_for_detail(cluster, name)
    topology = related_or_none(node, "topology")
    row = node_row(node, zones_of([topology.pk] if topology is not None else []))
    state = node_cpu_state(node=node)
    allocations = list(PodAllocation.objects.filter(node=node).order_by("namespace", "pod_name"))
    pods = list(Pod.objects.filter(node=node).order_by("namespace", "name"))
    return NodeDetail(
        node=node,
        topology=topology,
        row=row,
        cpu_state=state,
        zone_names={cell.numa_id: cell.name for cell in row.zones},
        pods=pod_views(pods, allocations),
        reservations=list(Reservation.objects.filter(node=node).order_by("name")),
        policies=policies(node, topology),
        desired=desired_policy_rows(node),
        raw=raw_objects(node, topology),
        zone_rows=zone_rows(row.zones, state, claims_by_zone(allocations)),
        distances=distance_rows(topology),
        devices=device_rows(row.zones),
        dra=by_numa_node(node_dra_devices(cluster, node.name)),
    )


def distance_rows(topology: NodeTopology | None) -> list[tuple[str, list[str]]]:
    """The NUMA distance matrix the NRT publishes (zone costs), row by row; [] when it
    publishes none. A missing pair reads "—"."""
    if topology is None:
        return []
    zones = list(
        Zone.objects.filter(topology=topology, zone_type="Node")
        .order_by("numa_id", "name")
        .values_list("name", "costs")
    )
    if not any(costs for _, costs in zones):
        return []
    names = [name for name, _ in zones]
    return [
        (name, [str((costs or {}).get(other, "—")) for other in names]) for name, costs in zones
    ]


def zone_rows(
    cells: Iterable[ZoneCell], state: NodeCPUState, claims: dict[int, int]
) -> list[ZoneCountRow]:
    counts = state.zone_counts()
    empty = dict.fromkeys(CPUState, 0) if state.has_detail else {}
    return [
        ZoneCountRow(
            cell,
            claims.get(cell.numa_id, 0),
            tuple(counts.get(cell.numa_id, empty).items()),
        )
        for cell in cells
    ]


def _zones_text(numa_resources: dict[str, dict[str, int]]) -> str:
    parts = []
    for numa, resources in sorted(numa_resources.items(), key=lambda kv: int(kv[0])):
        amounts = []
        for resource, value in sorted(resources.items()):
            if resource == "cpu":
                amounts.append(f"{value / 1000:g} cpu")
            elif resource == "memory" or resource.startswith("hugepages-"):
                amounts.append(f"{value / 1024**3:g} GiB {resource}")
            else:
                amounts.append(f"{value} {resource}")
        parts.append(f"{numa}: " + ", ".join(amounts))
    return "; ".join(parts)


def pod_views(pods: Sequence[Pod], allocations: Iterable[PodAllocation]) -> list[PodView]:
    """Every pod on the node, plus allocations naming pods the mirror lacks."""
    by_pod: dict[tuple[str, str], list[AllocationView]] = defaultdict(list)
    for a in allocations:
        by_pod[(a.namespace, a.pod_name)].append(
            AllocationView(a.source, a.cpuset, _zones_text(a.numa_resources or {}))
        )
    views = [
        PodView(
            p.namespace,
            p.name,
            p.phase,
            p.qos_class,
            (p.labels or {}).get("koordinator.sh/qosClass", ""),
            sum(int((c.get("requests") or {}).get("cpu", 0)) for c in p.containers or []),
            tuple(by_pod.pop((p.namespace, p.name), ())),
        )
        for p in pods
    ]
    views += [
        PodView(ns, name, "not mirrored", "", "", 0, tuple(found))
        for (ns, name), found in sorted(by_pod.items())
    ]
    return views


def mark_pods(pods: Iterable[PodView], marks: dict[str, tuple[str, str]]) -> list[PodView]:
    """Give each pod the (code, colour) the core map drew it with; marked pods first."""
    marked = [
        replace(pod, code=marks[pod.full_name][0], colour=marks[pod.full_name][1])
        if pod.full_name in marks
        else pod
        for pod in pods
    ]
    return sorted(marked, key=lambda p: (not p.code, len(p.code), p.code, p.full_name))


def claims_by_zone(allocations: Iterable[PodAllocation]) -> dict[int, int]:
    """Millicores the published allocations place on each NUMA zone (any source)."""
    totals: dict[int, int] = defaultdict(int)
    for allocation in allocations:
        for numa, resources in (allocation.numa_resources or {}).items():
            totals[int(numa)] += int((resources or {}).get("cpu", 0))
    return dict(sorted(totals.items()))


def policies(node: Node, topology: NodeTopology | None) -> list[tuple[str, str]]:
    """The node's policies as each consumer resolves them, then the raw inputs."""
    rows: list[tuple[str, str]] = []
    if topology is not None:
        rows += [
            ("Topology Manager policy", topology.tm_policy),
            ("Topology Manager scope", topology.tm_scope),
            ("max NUMA nodes", str(topology.tm_max_numa_nodes)),
            ("Topology Manager options", _kv(topology.tm_options)),
            # the NRT's own strings, quoted: its legacy "None" policy is not Python's None
            ("NRT topologyPolicies", json.dumps(list(topology.topology_policies)) or "—"),
            ("NRT API version", topology.api_version),
        ]
        if topology.cpu_manager_policy:
            rows.append(("kubelet CPU manager (koordlet)", topology.cpu_manager_policy))
            rows.append(("kubelet CPU manager options", _kv(topology.cpu_manager_options)))
            rows.append(("kubelet reserved CPUs", topology.kubelet_reserved_cpus or "—"))
        if topology.crane_cpu_manager_policy or topology.crane_topology_policy:
            rows.append(("Crane cpuManagerPolicy", topology.crane_cpu_manager_policy or "—"))
            rows.append(("Crane topologyManagerPolicy", topology.crane_topology_policy or "—"))
            rows.append(("Crane reserved", _kv(_quantities(topology.crane_reserved))))
    rows += [(key, node.labels[key]) for key in KOORD_LABELS if key in (node.labels or {})]
    annotation = related_or_none(node, "cpu_reservation")
    if annotation is not None:
        rows.append(("node annotation reservation", annotation.raw))
        rows.append(("  resolved by koordlet", annotation.resolved_cpus or "—"))
    return rows


def desired_policy_rows(node: Node) -> list[tuple[str, str]]:
    desired = related_or_none(node, "desired_policy")
    if desired is None:
        return []
    names = NodePolicy.FIELDS
    values = [(n.replace("_", " "), getattr(desired, n)) for n in names]
    return [(n, str(v)) for n, v in values if v not in (None, "")]


def _kv(mapping: dict[str, object] | None) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted((mapping or {}).items())) or "—"


def _quantities(amounts: dict[str, object] | None) -> dict[str, str]:
    """Base-unit integers (millicores, bytes) as Kubernetes writes them ("2", "4Gi")."""
    return format_resource_list({k: int(str(v)) for k, v in (amounts or {}).items()})


def raw_objects(node: Node, topology: NodeTopology | None) -> list[tuple[str, str]]:
    meta = {"labels": node.labels, "annotations": node.annotations}
    meta |= {
        "capacity": _quantities(node.capacity),
        "allocatable": _quantities(node.allocatable),
    }
    title = "Node (as mirrored; quantities as Kubernetes serves them)"
    objects = [(title, json.dumps(meta, indent=2, sort_keys=True))]
    if topology is not None:
        objects.append(("NodeResourceTopology", json.dumps(topology.raw, indent=2)))
    return objects
