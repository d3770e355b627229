"""DRA ResourceSlices and ResourceClaims, a batch at a time, with their device rows.

A slice's (or claim's) device rows are replaced whole when it changes: a slice holds
at most 128 devices, a claim's allocation at most 32.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from functools import partial
from typing import Any, TypeVar

from django.db import models, transaction

from topology.models import (
    Cluster,
    ResourceClaim,
    ResourceClaimDevice,
    ResourceSlice,
    ResourceSliceDevice,
)
from topology.parsers.resource_slice import ResourceClaimRecord, ResourceSliceRecord
from topology.services.mirror.hashing import record_hash
from topology.services.mirror.writers.bulk import bulk_insert, bulk_update
from topology.services.mirror.writers.common import (
    BatchResult,
    assign,
    latest_by_key,
    namespaced,
    row_to_write,
)

SLICE_FIELDS = [
    "uid",
    "resource_version",
    "observed_at",
    "content_hash",
    "api_version",
    "driver",
    "pool",
    "pool_generation",
    "pool_slice_count",
    "node_name",
    "node_selection",
]
CLAIM_FIELDS = [
    "uid",
    "resource_version",
    "observed_at",
    "content_hash",
    "api_version",
    "reserved_for",
]
R = TypeVar("R", ResourceSliceRecord, ResourceClaimRecord)
M = TypeVar("M", ResourceSlice, ResourceClaim)


@transaction.atomic(savepoint=False)
def write_resource_slices(
    cluster: Cluster, records: list[ResourceSliceRecord], now: datetime
) -> BatchResult:
    """Upsert ResourceSlices (keys: names) and replace the devices of those written."""
    latest = latest_by_key(records, lambda r: (r.name,))
    stored = ResourceSlice.objects.filter(cluster=cluster, name__in=[k[0] for k in latest])
    existing = {(row.name,): row for row in stored.order_by().only("id", "name", "content_hash")}
    new = partial(ResourceSlice, cluster=cluster)
    result, written = _upsert(latest, existing, new, _slice_values, now, SLICE_FIELDS)
    ResourceSliceDevice.objects.filter(resource_slice__in=[row for row, _ in written]).delete()
    bulk_insert(
        [device for row, record in written for device in _slice_devices(cluster, row, record)]
    )
    return result


@transaction.atomic(savepoint=False)
def write_resource_claims(
    cluster: Cluster, records: list[ResourceClaimRecord], now: datetime
) -> BatchResult:
    """Upsert ResourceClaims (keys: namespace, name) and replace their allocated devices."""
    latest = latest_by_key(records, lambda r: (r.namespace, r.name))
    stored = ResourceClaim.objects.filter(namespaced(latest), cluster=cluster)  # type: ignore[arg-type]
    fields = ("id", "namespace", "name", "content_hash")
    existing = {(row.namespace, row.name): row for row in stored.order_by().only(*fields)}
    new = partial(ResourceClaim, cluster=cluster)
    result, written = _upsert(latest, existing, new, _claim_values, now, CLAIM_FIELDS)
    ResourceClaimDevice.objects.filter(claim__in=[row for row, _ in written]).delete()
    bulk_insert(
        [device for row, record in written for device in _claim_devices(cluster, row, record)]
    )
    return result


def _upsert(
    latest: dict[tuple[str, ...], R],
    existing: dict[tuple[str, ...], M],
    new: Callable[..., M],
    values: Callable[[R, datetime, str], dict[str, Any]],
    now: datetime,
    fields: list[str],
) -> tuple[BatchResult, list[tuple[M, R]]]:
    """Rows created or updated (content hash changed), with the records they came from."""
    result = BatchResult()
    created: list[M] = []
    updated: list[M] = []
    written: list[tuple[M, R]] = []
    for key, record in latest.items():
        digest = record_hash(record)
        row = row_to_write(
            result,
            key,
            existing.get(key),
            digest,
            partial(new, **_identity(record)),
            created,
            updated,
        )
        if row is not None:
            assign(row, values(record, now, digest))
            written.append((row, record))
    bulk_insert(created)
    bulk_update(updated, fields)
    return result, written


def _identity(record: ResourceSliceRecord | ResourceClaimRecord) -> dict[str, str]:
    if isinstance(record, ResourceClaimRecord):
        return {"namespace": record.namespace, "name": record.name}
    return {"name": record.name}


def _observed(
    record: ResourceSliceRecord | ResourceClaimRecord, now: datetime, digest: str
) -> dict[str, Any]:
    return {
        "uid": record.uid,
        "resource_version": record.resource_version,
        "observed_at": now,
        "content_hash": digest,
        "api_version": record.api_version,
    }


def _slice_values(record: ResourceSliceRecord, now: datetime, digest: str) -> dict[str, Any]:
    return _observed(record, now, digest) | {
        "driver": record.driver,
        "pool": record.pool,
        "pool_generation": record.pool_generation,
        "pool_slice_count": record.pool_slice_count,
        "node_name": record.node_name,
        "node_selection": record.node_selection,
    }


def _claim_values(record: ResourceClaimRecord, now: datetime, digest: str) -> dict[str, Any]:
    consumers = [
        {"resource": c.resource, "name": c.name, "uid": c.uid} for c in record.reserved_for
    ]
    return _observed(record, now, digest) | {"reserved_for": consumers}


def _slice_devices(
    cluster: Cluster, row: ResourceSlice, record: ResourceSliceRecord
) -> Iterable[models.Model]:
    for device in record.devices:
        yield ResourceSliceDevice(
            resource_slice=row,
            cluster=cluster,
            node_name=device.node_name,
            driver=record.driver,
            pool=record.pool,
            name=device.name,
            numa_node=device.numa_node,
            numa_attribute=device.numa_attribute,
            attributes=device.attributes,
            capacity=device.capacity,
        )


def _claim_devices(
    cluster: Cluster, row: ResourceClaim, record: ResourceClaimRecord
) -> Iterable[models.Model]:
    for device in record.allocated:
        yield ResourceClaimDevice(
            claim=row,
            cluster=cluster,
            request=device.request,
            driver=device.driver,
            pool=device.pool,
            device=device.device,
        )
