"""Warning events about pods (`parsers.event`), a batch at a time, one row per Event.

Rows are keyed (namespace, name) as the API server keys the Event. They are only ever
upserted here: an Event the server expires or deletes stays mirrored as evidence
(`removal.RETAINED_KINDS`), and `services.mirror.events.prune_pod_events` bounds them.
"""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import Any

from django.db import transaction

from topology.models import Cluster, PodEvent
from topology.parsers.event import EventRecord
from topology.services.mirror.hashing import record_hash
from topology.services.mirror.writers.bulk import bulk_insert, bulk_update
from topology.services.mirror.writers.common import (
    BatchResult,
    assign,
    latest_by_key,
    namespaced,
    row_to_write,
)

EVENT_FIELDS = [
    "uid",
    "resource_version",
    "observed_at",
    "content_hash",
    "pod_name",
    "pod_uid",
    "reason",
    "message",
    "source",
    "count",
    "first_seen",
    "last_seen",
]

Key = tuple[str, str]


@transaction.atomic(savepoint=False)
def write_pod_events(cluster: Cluster, records: list[EventRecord], now: datetime) -> BatchResult:
    """Upsert events (keys: (namespace, name)); an unchanged one writes nothing."""
    latest = latest_by_key(records, lambda r: (r.namespace, r.name))
    existing = _stored(cluster, list(latest))
    result = BatchResult()
    created: list[PodEvent] = []
    updated: list[PodEvent] = []
    for key, record in latest.items():
        digest = record_hash(record)
        new = partial(PodEvent, cluster=cluster, namespace=key[0], name=key[1])
        row = row_to_write(result, key, existing.get(key), digest, new, created, updated)
        if row is not None:
            assign(row, _values(record, now, digest))
    bulk_insert(created)
    bulk_update(updated, EVENT_FIELDS)
    return result


def _stored(cluster: Cluster, keys: list[Key]) -> dict[Key, PodEvent]:
    """The rows these keys already have, with just what deciding an update needs."""
    if not keys:
        return {}
    rows = (
        PodEvent.objects.filter(namespaced(keys), cluster=cluster)
        .order_by()
        .only("id", "namespace", "name", "content_hash")
    )
    return {(row.namespace, row.name): row for row in rows}


def _values(record: EventRecord, now: datetime, digest: str) -> dict[str, Any]:
    return {
        "uid": record.uid,
        "resource_version": record.resource_version,
        "observed_at": now,
        "content_hash": digest,
        "pod_name": record.pod_name,
        "pod_uid": record.pod_uid,
        "reason": record.reason,
        "message": record.message,
        "source": record.source,
        "count": record.count,
        "first_seen": record.first_seen,
        "last_seen": record.last_seen,
    }
