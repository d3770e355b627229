"""Koordinator Reservations, a batch at a time."""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import Any

from django.db import transaction

from topology.models import Cluster, Node, Reservation
from topology.parsers.cpulist import format_cpulist
from topology.parsers.reservation import ReservationRecord
from topology.services.mirror.hashing import record_hash
from topology.services.mirror.writers.bulk import bulk_insert, bulk_update
from topology.services.mirror.writers.common import (
    BatchResult,
    assign,
    latest_by_key,
    row_to_write,
)

RESERVATION_FIELDS = [
    "uid",
    "resource_version",
    "observed_at",
    "content_hash",
    "node",
    "node_name",
    "template_namespace",
    "template_labels",
    "containers",
    "owners",
    "ttl_seconds",
    "expires",
    "allocate_once",
    "allocate_policy",
    "unschedulable",
    "pre_allocation",
    "phase",
    "allocatable",
    "allocated",
    "current_owners",
    "cpuset",
    "numa_resources",
    "raw",
]


@transaction.atomic(savepoint=False)
def write_reservations(
    cluster: Cluster, records: list[ReservationRecord], now: datetime
) -> BatchResult:
    """Upsert Reservations (keys: names), linked to their node when it is mirrored."""
    latest = latest_by_key(records, lambda r: r.name)
    existing = {
        r.name: r
        for r in Reservation.objects.filter(cluster=cluster, name__in=list(latest))
        .order_by()
        .only("id", "name", "content_hash")
    }
    node_ids = dict(
        Node.objects.filter(
            cluster=cluster, name__in={r.node_name for r in latest.values() if r.node_name}
        )
        .order_by()
        .values_list("name", "pk")
    )
    result = BatchResult()
    created: list[Reservation] = []
    updated: list[Reservation] = []
    for name, record in latest.items():
        digest = record_hash(record)
        reservation = row_to_write(
            result, (name,), existing.get(name), digest,
            partial(Reservation, cluster=cluster, name=name), created, updated,
        )  # fmt: skip
        if reservation is None:
            continue
        assign(reservation, _values(record, node_ids.get(record.node_name), now, digest))
    bulk_insert(created)
    bulk_update(updated, RESERVATION_FIELDS)
    return result


def _values(
    record: ReservationRecord, node_id: int | None, now: datetime, digest: str
) -> dict[str, Any]:
    allocation = record.allocation
    return {
        "uid": record.uid,
        "resource_version": record.resource_version,
        "observed_at": now,
        "content_hash": digest,
        "node_id": node_id if record.node_name else None,
        "node_name": record.node_name,
        "template_namespace": record.template_namespace,
        "template_labels": record.template_labels,
        "containers": [c.as_dict() for c in record.containers],
        "owners": record.owners,
        "ttl_seconds": record.ttl_seconds,
        "expires": record.expires,
        "allocate_once": record.allocate_once,
        "allocate_policy": record.allocate_policy,
        "unschedulable": record.unschedulable,
        "pre_allocation": record.pre_allocation,
        "phase": record.phase,
        "allocatable": record.allocatable,
        "allocated": record.allocated,
        "current_owners": record.current_owners,
        "cpuset": format_cpulist(allocation.cpuset or ()) if allocation else "",
        "numa_resources": {str(k): v for k, v in allocation.numa_resources.items()}
        if allocation
        else {},
        "raw": record.raw,
    }
