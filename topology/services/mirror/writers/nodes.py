"""Nodes, with Koordinator's CPU reservation annotation, written a batch at a time."""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import Any

from django.db import transaction
from django.db.models import OuterRef, Subquery

from topology.models import (
    Cluster,
    Node,
    NodeCPUReservation,
    NodeTopology,
    Pod,
    PodAllocation,
    Reservation,
)
from topology.parsers.cpulist import format_cpulist
from topology.parsers.node import NodeRecord, NodeReservationRecord
from topology.policies import resolve_policy
from topology.services.mirror.hashing import record_hash
from topology.services.mirror.writers.bulk import bulk_insert, bulk_update
from topology.services.mirror.writers.common import (
    BatchResult,
    assign,
    latest_by_key,
    row_to_write,
)

NODE_FIELDS = [
    "uid",
    "resource_version",
    "observed_at",
    "content_hash",
    "labels",
    "annotations",
    "capacity",
    "allocatable",
    "unschedulable",
]
_RESERVATION_FIELDS = ["resources", "reserved_cpus", "apply_policy", "raw"]


@transaction.atomic(savepoint=False)
def write_nodes(cluster: Cluster, records: list[NodeRecord], now: datetime) -> BatchResult:
    """Upsert Nodes; an unchanged content hash writes nothing. Keys are node names."""
    latest = latest_by_key(records, lambda r: r.name)
    existing = {
        n.name: n for n in Node.objects.filter(cluster=cluster, name__in=list(latest)).order_by()
    }
    result = BatchResult()
    created: list[Node] = []
    updated: list[Node] = []
    reservations: list[tuple[Node, NodeReservationRecord | None]] = []
    for name, record in latest.items():
        digest = record_hash(record)
        node = row_to_write(
            result, (name,), existing.get(name), digest,
            partial(Node, cluster=cluster, name=name), created, updated,
        )  # fmt: skip
        if node is None:
            continue
        assign(node, _node_values(record, now, digest))
        reservations.append((node, record.reservation))
    bulk_insert(created)
    bulk_update(updated, NODE_FIELDS)
    _write_node_reservations(reservations)
    link_to_nodes(cluster, [node.name for node in created])
    _refresh_koordinator_policies(updated)
    return result


def _node_values(record: NodeRecord, now: datetime, digest: str) -> dict[str, Any]:
    return {
        "uid": record.uid,
        "resource_version": record.resource_version,
        "observed_at": now,
        "content_hash": digest,
        "labels": record.labels,
        "annotations": record.annotations,
        "capacity": record.capacity,
        "allocatable": record.allocatable,
        "unschedulable": record.unschedulable,
    }


def _write_node_reservations(items: list[tuple[Node, NodeReservationRecord | None]]) -> None:
    """Replace the annotation's fields; `resolved_cpus` comes from koordlet's NRT and stays."""
    NodeCPUReservation.objects.filter(
        node__in=[node for node, reservation in items if reservation is None]
    ).delete()
    rows = [
        NodeCPUReservation(
            node=node,
            resources=reservation.resources,
            reserved_cpus=format_cpulist(reservation.reserved_cpus or ()),
            apply_policy=reservation.apply_policy,
            raw=reservation.raw,
        )
        for node, reservation in items
        if reservation is not None
    ]
    NodeCPUReservation.objects.bulk_create(
        rows, update_conflicts=True, unique_fields=["node"], update_fields=_RESERVATION_FIELDS
    )


def link_to_nodes(cluster: Cluster, names: list[str]) -> None:
    """Objects that named these nodes before they were mirrored now point at them."""
    if not names:
        return
    node_id = Subquery(
        Node.objects.filter(cluster=cluster, name=OuterRef("node_name")).values("pk")[:1]
    )
    for model in (Pod, PodAllocation, Reservation):
        model.objects.filter(cluster=cluster, node_name__in=names, node__isnull=True).update(
            node=node_id
        )


def _refresh_koordinator_policies(nodes: list[Node]) -> None:
    """The Koordinator policy label lives on the Node and beats the NRT value."""
    by_id = {node.pk: node for node in nodes}
    changed = []
    for topology in NodeTopology.objects.filter(node__in=nodes).only(
        "id",
        "node_id",
        "flavour",
        "topology_policies",
        "attributes",
        "crane_topology_policy",
        "tm_policy",
        "tm_scope",
    ):
        resolved = resolve_policy(
            topology.flavour,
            topology_policies=topology.topology_policies,
            attributes=topology.attributes,
            crane_topology_policy=topology.crane_topology_policy,
            node_labels=by_id[topology.node_id].labels,
        )
        if (topology.tm_policy, topology.tm_scope) != (resolved.policy, resolved.scope):
            topology.tm_policy, topology.tm_scope = resolved.policy, resolved.scope
            changed.append(topology)
    bulk_update(changed, ["tm_policy", "tm_scope"])
