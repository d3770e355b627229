"""Pods and the CPU / NUMA allocations their annotations publish, a batch at a time."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.db.models import OuterRef, Subquery

from topology.choices import AllocationSource
from topology.models import Cluster, Node, Pod, PodAllocation
from topology.parsers.cpulist import format_cpulist
from topology.parsers.pod import PodRecord
from topology.services.mirror.hashing import EncodedRecord, encode_record
from topology.services.mirror.writers.bulk import on_postgresql
from topology.services.mirror.writers.common import (
    POD_SOURCES,
    BatchResult,
    Outcome,
    latest_by_key,
    namespaced,
)
from topology.services.mirror.writers.rows import (
    JsonText,
    copy_text,
    insert_prepared,
    insert_rows,
    update_rows,
)

PodKey = tuple[str, str]
# The record's fields whose JSON text a row takes (`_record_values`): all a caller that
# brings its own EncodedRecord must encode (see `hashing.encode_columns`).
POD_JSON_FIELDS = (
    "labels",
    "annotations",
    "owner_references",
    "containers",
    "init_containers",
    "overhead",
    "status",
    "resources",
)
# The columns a pod's record alone gives, besides its key (`_record_values`).
_RECORD_POD_COLUMNS = (
    "node_name",
    "uid",
    "resource_version",
    "content_hash",
    "phase",
    "qos_class",
    "scheduler_name",
    "priority",
    "created_at",
    *POD_JSON_FIELDS,
)
# The columns written from a record, after (cluster_id, namespace, name) which an update
# leaves alone; the node's id first.
POD_COLUMNS = ("node_id", "observed_at", *_RECORD_POD_COLUMNS)
_KEY_COLUMNS = ("cluster_id", "namespace", "name")
# A new pod's columns whose COPY text comes from its record alone (`pod_row_text`), and
# the ones the writer adds to them.
PREPARED_POD_COLUMNS = ("namespace", "name", *_RECORD_POD_COLUMNS)
_WRITER_POD_COLUMNS = ("cluster_id", "node_id", "observed_at")
_ALLOCATION_COLUMNS = (
    "cluster_id",
    "node_id",
    "node_name",
    "pod_id",
    "namespace",
    "pod_name",
    "pod_uid",
    "source",
    "cpuset",
    "numa_resources",
    "raw",
)


@dataclass
class _Changes:
    """What a batch writes: new rows, updated rows (by id), and the records behind them."""

    created: list[tuple[PodKey, PodRecord, tuple[Any, ...]]] = field(default_factory=list)
    # New pods whose COPY text the sync's parsing thread made: (record, node id, text).
    prepared: list[tuple[PodRecord, int | None, str]] = field(default_factory=list)
    updated: list[tuple[int, PodRecord, tuple[Any, ...]]] = field(default_factory=list)

    @property
    def new(self) -> int:
        return len(self.created) + len(self.prepared)


@transaction.atomic(savepoint=False)
def write_pods(
    cluster: Cluster,
    records: list[PodRecord],
    now: datetime,
    *,
    absent: Collection[tuple[str, ...]] = (),
    encodings: Mapping[tuple[str, ...], EncodedRecord] | None = None,
    node_ids: Mapping[str, int] | None = None,
) -> BatchResult:
    """Upsert pods (keys: (namespace, name)) and replace the allocations they publish.

    Rows are plain tuples, never model instances: a cold resync writes 100,000 pods.
    `absent`, `encodings` and `node_ids`: see write_records.
    """
    latest = latest_by_key(records, lambda r: (r.namespace, r.name))
    existing = _stored_hashes(cluster, [key for key in latest if key not in absent])
    names = {r.node_name for r in latest.values() if r.node_name}
    node_ids = _node_ids(cluster, names, node_ids or {})
    result = BatchResult()
    changes = _Changes()
    encodings = encodings or {}
    copy_text_ok = on_postgresql()
    for key, record in latest.items():
        encoded = encodings.get(key) or encode_record(record)
        found = existing.get(key)
        if found is not None and found[1] == encoded.digest:
            result.outcomes[key] = Outcome.UNCHANGED
            continue
        node_id = node_ids.get(record.node_name)
        if found is None and encoded.row is not None and copy_text_ok:
            changes.prepared.append((record, node_id, encoded.row))
            result.outcomes[key] = Outcome.CREATED
            continue
        row = _pod_row(record, node_id, now, encoded)
        if found is None:
            changes.created.append((key, record, row))
            result.outcomes[key] = Outcome.CREATED
        else:
            changes.updated.append((found[0], record, row))
            result.outcomes[key] = Outcome.UPDATED
    written = _write_rows(cluster, changes, now)
    _replace_pod_allocations(cluster, written, absent)
    _link_allocations(cluster, written[: changes.new])
    return result


def _stored_hashes(cluster: Cluster, keys: list[PodKey]) -> dict[PodKey, tuple[int, str]]:
    """(namespace, name) → (id, content hash) of the pods already mirrored."""
    if not keys:
        return {}
    rows = (
        Pod.objects.filter(namespaced(keys), cluster=cluster)
        .order_by()
        .values_list("namespace", "name", "id", "content_hash")
    )
    return {(namespace, name): (pk, digest) for namespace, name, pk, digest in rows}


def _node_ids(cluster: Cluster, names: set[str], known: Mapping[str, int]) -> dict[str, int]:
    """Node name → id; names `known` lacks are looked up (none, usually, in a list)."""
    found = {name: known[name] for name in names if name in known}
    rest = names - found.keys()
    if rest:
        found.update(mirrored_node_ids(cluster, rest))
    return found


def mirrored_node_ids(cluster: Cluster, names: Collection[str] | None = None) -> dict[str, int]:
    """Node name → id of the cluster's mirrored Nodes (of these names, if given)."""
    rows = Node.objects.filter(cluster=cluster).order_by()
    if names is not None:
        rows = rows.filter(name__in=list(names))
    return dict(rows.values_list("name", "pk"))


def _write_rows(
    cluster: Cluster, changes: _Changes, now: datetime
) -> list[tuple[int, PodRecord, int | None]]:
    """Insert and update; returns (pod id, record, node id) of every pod written, the
    created ones first."""
    created_ids = insert_rows(
        Pod,
        _KEY_COLUMNS + POD_COLUMNS,
        [(cluster.pk, key[0], key[1], *row) for key, _, row in changes.created],
    )
    prepared_ids = insert_prepared(
        Pod,
        _WRITER_POD_COLUMNS,
        PREPARED_POD_COLUMNS,
        [((cluster.pk, node_id, now), text) for _, node_id, text in changes.prepared],
    )
    update_rows(Pod, POD_COLUMNS, [(pk, row) for pk, _, row in changes.updated])
    pairs = zip(created_ids, changes.created, strict=True)
    written = [(pk, record, row[0]) for pk, (_, record, row) in pairs]
    prepared = zip(prepared_ids, changes.prepared, strict=True)
    written += [(pk, record, node_id) for pk, (record, node_id, _) in prepared]
    written += [(pk, record, row[0]) for pk, record, row in changes.updated]
    return written


def pod_row_text(record: PodRecord, encoded: EncodedRecord) -> str:
    """The COPY text of a new pod's PREPARED_POD_COLUMNS. It needs no database, so the
    sync's parsing thread makes it ahead of the writer (see `rows.insert_prepared`)."""
    values = (record.namespace, record.name, *_record_values(record, encoded))
    return copy_text(Pod, PREPARED_POD_COLUMNS, values)


def _pod_row(
    record: PodRecord, node_id: int | None, now: datetime, encoded: EncodedRecord
) -> tuple[Any, ...]:
    """The values of POD_COLUMNS, in order."""
    return (node_id, now, *_record_values(record, encoded))


def _record_values(record: PodRecord, encoded: EncodedRecord) -> tuple[Any, ...]:
    """The values of _RECORD_POD_COLUMNS, in order; JSON columns reuse the hash's JSON
    text (`containers` is the JSON of its ContainerRecords, the same object as `as_dict`)."""
    json = encoded.fields
    return (
        record.node_name,
        record.uid,
        record.resource_version,
        encoded.digest,
        record.phase,
        record.qos_class,
        record.scheduler_name,
        record.priority,
        record.created_at,
        JsonText(json["labels"], record.labels),
        JsonText(json["annotations"], record.annotations),
        JsonText(json["owner_references"], record.owner_references),
        JsonText(json["containers"], [c.as_dict() for c in record.containers]),
        JsonText(json["init_containers"], [c.as_dict() for c in record.init_containers]),
        JsonText(json["overhead"], record.overhead),
        JsonText(json["status"], record.status),
        JsonText(json["resources"], record.resources),
    )


def _replace_pod_allocations(
    cluster: Cluster,
    written: list[tuple[int, PodRecord, int | None]],
    absent: Collection[tuple[str, ...]],
) -> None:
    keys = {(record.namespace, record.name) for _, record, _ in written}
    keys = {key for key in keys if key not in absent}  # an absent pod has no allocations
    if keys:
        PodAllocation.objects.filter(
            namespaced(keys, "pod_name"), cluster=cluster, source__in=POD_SOURCES
        ).delete()
    insert_rows(
        PodAllocation,
        _ALLOCATION_COLUMNS,
        [
            (
                cluster.pk,
                node_id,
                record.node_name,
                pod_id,
                record.namespace,
                record.name,
                record.uid,
                a.source,
                format_cpulist(a.cpuset) if a.cpuset is not None else "",
                {str(k): v for k, v in a.numa_resources.items()},
                a.raw,
            )
            for pod_id, record, node_id in written
            for a in record.allocations
        ],
        ids=False,
    )


def _link_allocations(cluster: Cluster, created: list[tuple[int, PodRecord, int | None]]) -> None:
    """kubelet-pinned allocations (from the NRT) that named a pod before it was mirrored.

    Only kubelet's can lack their pod: a pod's own allocations are written with it.
    """
    if not created:
        return
    if on_postgresql():
        # One parameter (the new pods' ids) instead of a name list to compile: a cold
        # resync links 200 pages of 500 pods.
        with connection.cursor() as cursor:
            ids = [pk for pk, _, _ in created]
            cursor.execute(_LINK_BY_POD_IDS, {"ids": ids, "source": AllocationSource.KUBELET})
        return
    pod_id = Subquery(
        Pod.objects.filter(
            cluster=cluster, namespace=OuterRef("namespace"), name=OuterRef("pod_name")
        ).values("pk")[:1]
    )
    keys = [(record.namespace, record.name) for _, record, _ in created]
    PodAllocation.objects.filter(
        namespaced(keys, "pod_name"),
        cluster=cluster,
        source=AllocationSource.KUBELET,
        pod__isnull=True,
    ).update(pod=pod_id)


_LINK_BY_POD_IDS = f"""
    UPDATE {PodAllocation._meta.db_table} AS a SET pod_id = p.id
    FROM {Pod._meta.db_table} AS p
    WHERE p.id = ANY(%(ids)s) AND a.cluster_id = p.cluster_id AND a.namespace = p.namespace
      AND a.pod_name = p.name AND a.source = %(source)s AND a.pod_id IS NULL
"""
