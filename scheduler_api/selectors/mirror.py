"""Pods, reservations and desired policies of one cluster; a fixed query count per list."""

from __future__ import annotations

from django.db.models import Exists, OuterRef, Prefetch, QuerySet

from topology.models import Cluster, NodeCPUReservation, NodePolicy, Pod, PodAllocation, Reservation


def pods_of(cluster: Cluster) -> QuerySet[Pod]:
    """Pods with their allocations; `has_exclusive_cpus`: some source published a cpuset."""
    pinned = PodAllocation.objects.filter(pod=OuterRef("pk")).exclude(cpuset="")
    allocations = PodAllocation.objects.defer("raw").order_by("source")
    return (
        Pod.objects.filter(cluster=cluster)
        .annotate(has_exclusive_cpus=Exists(pinned))
        .prefetch_related(Prefetch("allocations", queryset=allocations))
        .order_by("namespace", "name")
    )


def reservations_of(cluster: Cluster) -> QuerySet[Reservation]:
    # raw: the creation time a TTL counts from (`expired`, `expires_at`)
    return Reservation.objects.filter(cluster=cluster).order_by("name")


def node_reservations_of(cluster: Cluster) -> QuerySet[NodeCPUReservation]:
    """The `node.koordinator.sh/reservation` annotation of each node that carries one."""
    return (
        NodeCPUReservation.objects.filter(node__cluster=cluster)
        .select_related("node")
        .only("node__name", "resources", "reserved_cpus", "apply_policy", "resolved_cpus")
        .order_by("node__name")
    )


def node_policies_of(cluster: Cluster) -> QuerySet[NodePolicy]:
    return (
        NodePolicy.objects.filter(node__cluster=cluster)
        .select_related("node")
        .defer("node__labels", "node__annotations", "node__capacity", "node__allocatable")
        .order_by("node__name")
    )
