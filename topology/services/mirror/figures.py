"""Recompute the derived per-node figures (NodeFigures) from the mirror with the engine,
and keep them over time (`services.observability.history`)."""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction
from django.utils import timezone

from scheduler_api.engine import (
    NodeCapacity,
    NodeSnapshot,
    ReservationSnapshot,
    TopologyManagerPolicy,
    ZoneCPUs,
    fragmentation,
    node_capacity,
    zone_cpus,
)
from topology.adapters import node_snapshots
from topology.adapters.mirror import reservation_snapshots
from topology.models import Cluster, Node, NodeFigures
from topology.services.observability.history import record_history


def _own_policy(node: Node) -> TopologyManagerPolicy | None:
    topology = getattr(node, "topology", None)
    if topology is None or not topology.tm_policy:
        return None
    return TopologyManagerPolicy(topology.tm_policy)


def zone_cpus_json(zones: dict[int, ZoneCPUs]) -> dict[str, dict[str, object]]:
    return {
        str(numa): {
            "capacity": z.capacity,
            "free": z.free,
            "exclusive": z.exclusive,
            "shared": z.shared,
            "reserved": dict(z.reserved) if z.reserved is not None else None,
        }
        for numa, z in zones.items()
    }


def zone_resources_json(node: NodeSnapshot) -> dict[str, dict[str, list[int | None]]]:
    """Each NUMA zone's resources as the NRT publishes them, for `/metrics`."""
    return {
        str(zone.numa_id): {
            name: [amounts.capacity, amounts.allocatable, amounts.available]
            for name, amounts in sorted(zone.resources.items())
        }
        for zone in node.zones
        if zone.numa_id >= 0
    }


def _figures_row(
    node: Node,
    snapshot: NodeSnapshot,
    capacity: NodeCapacity,
    reserved: frozenset[int],
    now: object,
) -> NodeFigures:
    return NodeFigures(
        node=node,
        computed_at=now,
        free_cpus_by_zone={str(k): v for k, v in sorted(capacity.free_cpus.items())},
        free_cpus_total=capacity.free_total,
        max_free_cpus_in_one_zone=capacity.max_free_in_one_zone,
        largest_exclusive_pod={str(k): v for k, v in capacity.largest_exclusive_pod.items()},
        largest_exclusive_pod_own_policy=capacity.largest_under_own_policy,
        zone_cpus=zone_cpus_json(zone_cpus(snapshot, reserved)),
        fragmentation=fragmentation(capacity.free_cpus),
        zone_resources=zone_resources_json(snapshot),
    )


def _reservation_cpus(reservations: Iterable[ReservationSnapshot]) -> dict[str, frozenset[int]]:
    """Each node's CPUs held by its Koordinator Reservations."""
    by_node: dict[str, frozenset[int]] = {}
    for reservation in reservations:
        if reservation.node_name and reservation.cpuset:
            held = by_node.get(reservation.node_name, frozenset())
            by_node[reservation.node_name] = held | reservation.cpuset
    return by_node


@transaction.atomic
def recompute_figures(*, cluster_id: int) -> int:
    """Replace every node's figures of the cluster and add them to its history; returns
    how many nodes were written.

    Idempotent: running it twice gives the same rows (only computed_at moves).
    """
    cluster = Cluster.objects.get(pk=cluster_id)
    nodes = {n.name: n for n in Node.objects.filter(cluster=cluster).select_related("topology")}
    reserved = _reservation_cpus(reservation_snapshots(cluster))
    now = timezone.now()
    rows = [
        _figures_row(
            nodes[s.name],
            s,
            node_capacity(s, _own_policy(nodes[s.name])),
            reserved.get(s.name, frozenset()),
            now,
        )  # fmt: skip
        for s in node_snapshots(cluster)
    ]
    NodeFigures.objects.filter(node__cluster=cluster).delete()
    NodeFigures.objects.bulk_create(rows)
    record_history(cluster, rows, now)
    return len(rows)
