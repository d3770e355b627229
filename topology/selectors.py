"""Reads of the mirror used by views and commands."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, QuerySet

from topology.models import Cluster, Node


@dataclass(frozen=True)
class ZoneCPU:
    name: str
    allocatable_millis: int
    available_millis: int | None


def clusters_with_counts() -> QuerySet[Cluster]:
    return Cluster.objects.annotate(
        node_count=Count("nodes", distinct=True), pod_count=Count("pods", distinct=True)
    )


def nodes_for_overview(cluster: Cluster) -> QuerySet[Node]:
    return (
        Node.objects.filter(cluster=cluster)
        .select_related("topology")
        .prefetch_related("topology__zones__resources")
        .order_by("name")
    )


def zone_cpu(node: Node) -> list[ZoneCPU]:
    """CPU per NUMA zone, from prefetched rows (no extra queries)."""
    topology = getattr(node, "topology", None)
    if topology is None:
        return []
    result = []
    for zone in topology.zones.all():
        if zone.numa_id is None:
            continue
        for resource in zone.resources.all():
            if resource.name == "cpu":
                result.append(ZoneCPU(zone.name, resource.allocatable, resource.available))
    return result
