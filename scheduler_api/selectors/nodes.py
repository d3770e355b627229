"""Nodes for the API: flat rows with values() for lists, one node in full for details."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import F, Prefetch, QuerySet

from topology.models import Cluster, Node, PodAllocation, Zone, ZoneResource
from topology.services.mirror.cpu_state import CPU, node_cpu_state

# The list's columns, read in one query: no model instances, no per-row relations.
NODE_ROW_COLUMNS = ("name", "labels", "unschedulable", "allocatable", "observed_at")
NODE_ROW_EXPRESSIONS = {
    "flavour": F("topology__flavour"),
    "policy": F("topology__tm_policy"),
    "scope": F("topology__tm_scope"),
    "cpu_count": F("topology__cpu_count"),
    "figures_computed_at": F("figures__computed_at"),
    "free_cpus_total": F("figures__free_cpus_total"),
    "max_free_cpus_in_one_zone": F("figures__max_free_cpus_in_one_zone"),
    "largest_exclusive_pod": F("figures__largest_exclusive_pod_own_policy"),
    "free_cpus_by_zone": F("figures__free_cpus_by_zone"),
}


def node_rows(cluster: Cluster) -> QuerySet[Node, dict[str, Any]]:
    return (
        Node.objects.filter(cluster=cluster)
        .order_by("name")
        .values(*NODE_ROW_COLUMNS, **NODE_ROW_EXPRESSIONS)
    )


def node_details(cluster: Cluster) -> QuerySet[Node]:
    """Nodes with every one-to-one they have, minus the raw NRT and the CPU table."""
    return (
        Node.objects.filter(cluster=cluster)
        .select_related("topology", "figures", "cpu_reservation", "desired_policy")
        .defer("topology__raw", "topology__cpu_table", "cpu_reservation__raw")
        .order_by("name")
    )


def nodes_with_topology(cluster: Cluster) -> QuerySet[Node]:
    """What `nodes/{node}/topology` shows: zones with resources, allocations on the node."""
    zones = Zone.objects.order_by("numa_id", "name").prefetch_related(
        Prefetch("resources", queryset=ZoneResource.objects.order_by("name"))
    )
    allocations = PodAllocation.objects.defer("raw").order_by("namespace", "pod_name", "source")
    return (
        Node.objects.filter(cluster=cluster)
        .select_related("topology", "cpu_reservation")
        .defer("topology__raw")
        .prefetch_related(
            Prefetch("topology__zones", queryset=zones),
            Prefetch("allocations", queryset=allocations),
        )
    )


@dataclass(frozen=True)
class NodeTopologyData:
    node: str
    flavour: str | None
    policy: str | None
    scope: str | None
    max_numa_nodes: int | None
    cpu_topology_source: str | None
    zones: list[Zone]
    cpus: tuple[CPU, ...]
    cpu_detail_missing: str
    conflicts: tuple[str, ...]
    allocations: list[PodAllocation]


def node_topology_view(node: Node) -> NodeTopologyData:
    """From a node of `nodes_with_topology`; the CPU states cost two more queries."""
    topology = getattr(node, "topology", None)
    state = node_cpu_state(node=node)
    return NodeTopologyData(
        node=node.name,
        flavour=topology.flavour if topology else None,
        policy=topology.tm_policy if topology else None,
        scope=topology.tm_scope if topology else None,
        max_numa_nodes=topology.tm_max_numa_nodes if topology else None,
        cpu_topology_source=topology.cpu_topology_source if topology else None,
        zones=list(topology.zones.all()) if topology else [],
        cpus=state.cpus,
        cpu_detail_missing=state.missing_detail,
        conflicts=state.conflicts,
        allocations=list(node.allocations.all()),
    )
