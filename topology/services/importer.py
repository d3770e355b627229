"""Import raw Kubernetes objects into a cluster's mirror.

Objects are parsed first; a malformed one becomes an error naming the object
and field and is never written. Each valid object is then upserted in its own
transaction. A kind the import covers (it holds at least one object of that
kind) is reconciled: mirrored objects it no longer lists are removed, except
those whose new version failed to parse, which are kept as they were.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils import timezone

from topology.choices import AllocationSource
from topology.models import Cluster, Node, NodeTopology, Pod, PodAllocation, QoSConfig, Reservation
from topology.parsers import MirroredKind, ObjectParseError, ParsedObject, classify, parse_object
from topology.parsers.pod import PodRecord
from topology.services import writers

logger = logging.getLogger(__name__)
ORDER = [
    MirroredKind.NODE,
    MirroredKind.TOPOLOGY,
    MirroredKind.POD,
    MirroredKind.RESERVATION,
    MirroredKind.QOS_CONFIG,
]
_WRITERS: dict[MirroredKind, Callable[..., writers.Outcome]] = {
    MirroredKind.NODE: writers.upsert_node,
    MirroredKind.TOPOLOGY: writers.upsert_topology,
    MirroredKind.POD: writers.upsert_pod,
    MirroredKind.RESERVATION: writers.upsert_reservation,
    MirroredKind.QOS_CONFIG: writers.upsert_qos_config,
}


@dataclass
class ImportSummary:
    counts: dict[str, Counter[str]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def add(self, kind: str, what: str, n: int = 1) -> None:
        self.counts.setdefault(kind, Counter())[what] += n

    def total(self, what: str) -> int:
        return sum(counter[what] for counter in self.counts.values())

    @property
    def ok(self) -> bool:
        return not self.errors

    def lines(self) -> list[str]:
        columns = ("created", "updated", "unchanged", "removed", "skipped", "errors")
        rows = [f"{'kind':<22}" + "".join(f"{c:>11}" for c in columns)]
        for kind in ORDER:
            if kind in self.counts:
                counter = self.counts[kind]
                rows.append(f"{kind:<22}" + "".join(f"{counter[c]:>11}" for c in columns))
        return rows


@dataclass
class _Batch:
    parsed: dict[MirroredKind, list[ParsedObject]] = field(default_factory=dict)
    covered: set[MirroredKind] = field(default_factory=set)
    failed_keys: dict[MirroredKind, set[tuple[str, ...]]] = field(default_factory=dict)


def import_objects(*, cluster_name: str, objects: Iterable[Any]) -> ImportSummary:
    summary = ImportSummary()
    batch = _parse_all(objects, summary)
    cluster, _ = Cluster.objects.get_or_create(name=cluster_name)
    now = timezone.now()
    for kind in ORDER:
        for parsed in batch.parsed.get(kind, []):
            _write_one(cluster, kind, parsed, now, summary)
    for kind in ORDER:
        if kind in batch.covered:
            _remove_vanished(cluster, kind, batch, summary)
    cluster.last_imported_at = now
    cluster.save(update_fields=["last_imported_at"])
    return summary


def _parse_all(objects: Iterable[Any], summary: ImportSummary) -> _Batch:
    batch = _Batch()
    for obj in objects:
        try:
            kind = classify(obj)
            if kind is None:
                continue
            batch.covered.add(kind)
            parsed = parse_object(obj)
        except ObjectParseError as exc:
            _record_parse_failure(batch, summary, obj, exc)
            continue
        assert parsed is not None
        if isinstance(parsed.record, PodRecord) and parsed.record.finished:
            summary.add(kind, "skipped")  # finished pods hold nothing
            continue
        batch.parsed.setdefault(kind, []).append(parsed)
    return batch


def _record_parse_failure(
    batch: _Batch, summary: ImportSummary, obj: Any, exc: ObjectParseError
) -> None:
    logger.warning("skipping malformed object: %s", exc)
    summary.errors.append(str(exc))
    try:
        kind = classify(obj)
    except ObjectParseError:
        summary.add("unknown", "errors")
        return
    if kind is None:
        return
    summary.add(kind, "errors")
    batch.failed_keys.setdefault(kind, set()).add(_raw_key(kind, obj))


def _raw_key(kind: MirroredKind, obj: dict[str, Any]) -> tuple[str, ...]:
    metadata = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    name = str(metadata.get("name", ""))
    if kind is MirroredKind.POD:
        return (str(metadata.get("namespace", "default")), name)
    return (name,)


def _record_key(kind: MirroredKind, parsed: ParsedObject) -> tuple[str, ...]:
    record = parsed.record
    if kind is MirroredKind.POD:
        assert isinstance(record, PodRecord)
        return (record.namespace, record.name)
    return (record.name,)


def _write_one(
    cluster: Cluster, kind: MirroredKind, parsed: ParsedObject, now: Any, summary: ImportSummary
) -> None:
    try:
        outcome = _WRITERS[kind](cluster, parsed.record, now)
    except writers.MissingNodeError as exc:
        summary.errors.append(str(exc))
        summary.add(kind, "errors")
        return
    summary.add(kind, outcome.value)


def _remove_vanished(
    cluster: Cluster, kind: MirroredKind, batch: _Batch, summary: ImportSummary
) -> None:
    keep = {_record_key(kind, p) for p in batch.parsed.get(kind, [])}
    keep |= batch.failed_keys.get(kind, set())
    removed = 0
    with transaction.atomic():
        for obj, key in _mirrored(cluster, kind):
            if key not in keep:
                _delete(cluster, kind, obj)
                removed += 1
        if kind is MirroredKind.POD:
            PodAllocation.objects.filter(
                cluster=cluster, source__in=writers.POD_SOURCES, pod__isnull=True
            ).delete()
    if removed:
        summary.add(kind, "removed", removed)


def _delete(cluster: Cluster, kind: MirroredKind, obj: Any) -> None:
    """Kubelet-pinned allocations come from the NRT, so they go with it (and with its Node)."""
    if kind in (MirroredKind.NODE, MirroredKind.TOPOLOGY):
        node_name = obj.name if kind is MirroredKind.NODE else obj.node.name
        PodAllocation.objects.filter(
            cluster=cluster, node_name=node_name, source=AllocationSource.KUBELET
        ).delete()
    obj.delete()


def _mirrored(cluster: Cluster, kind: MirroredKind) -> list[tuple[Any, tuple[str, ...]]]:
    if kind is MirroredKind.NODE:
        return [(n, (n.name,)) for n in Node.objects.filter(cluster=cluster)]
    if kind is MirroredKind.TOPOLOGY:
        topologies = NodeTopology.objects.filter(node__cluster=cluster).select_related("node")
        return [(t, (t.node.name,)) for t in topologies]
    if kind is MirroredKind.POD:
        return [(p, (p.namespace, p.name)) for p in Pod.objects.filter(cluster=cluster)]
    if kind is MirroredKind.RESERVATION:
        return [(r, (r.name,)) for r in Reservation.objects.filter(cluster=cluster)]
    return [(q, (q.name,)) for q in QoSConfig.objects.filter(cluster=cluster)]
