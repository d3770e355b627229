"""Import raw Kubernetes objects into a cluster's mirror.

Objects are parsed first; a malformed one becomes an error naming the object
and field and is never written. Valid objects are then upserted kind by kind, a
batch per transaction, through the same writers the live sync uses. A kind the
import covers (it holds at least one object of that kind) is reconciled:
mirrored objects it no longer lists are removed, except those whose new version
failed to parse, which are kept as they were. Warning events about pods are never
removed (`removal.RETAINED_KINDS`): a dump holds the Events of the last hour only.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.utils import timezone

from topology.models import Cluster
from topology.parsers import (
    MirroredKind,
    ObjectParseError,
    ParsedObject,
    classify,
    object_key,
    parse_object,
)
from topology.parsers.pod import PodRecord
from topology.services.mirror.removal import mirrored_keys, remove_objects
from topology.services.mirror.writers import record_key, refresh_statistics_of, write_records
from topology.services.mirror.writers.bulk import LoadStatistics

logger = logging.getLogger(__name__)
# Nodes first: NRTs need their Node, and pods and reservations link to it.
ORDER = [
    MirroredKind.NODE,
    MirroredKind.TOPOLOGY,
    MirroredKind.POD,
    MirroredKind.EVENT,
    MirroredKind.RESERVATION,
    MirroredKind.QOS_CONFIG,
    MirroredKind.SCHEDULER_CONFIG,
    MirroredKind.RESOURCE_SLICE,
    MirroredKind.RESOURCE_CLAIM,
]
BATCH_SIZE = 500


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
        _write_kind(cluster, kind, batch.parsed.get(kind, []), now, summary)
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
        if parsed is None:
            continue  # an Event that explains no placement (Normal, or another reason)
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
    batch.failed_keys.setdefault(kind, set()).add(object_key(kind, obj))


def _write_kind(
    cluster: Cluster,
    kind: MirroredKind,
    parsed: list[ParsedObject],
    now: Any,
    summary: ImportSummary,
) -> None:
    """A kind's records, a batch at a time. A large import refreshes the tables'
    statistics as it goes, as a sync's list does (`LoadStatistics`): otherwise every
    query after it (a what-if's fingerprints of 100,000 pods among them) is planned
    for the empty tables PostgreSQL saw before it, until autovacuum comes by."""
    statistics = LoadStatistics()
    for start in range(0, len(parsed), BATCH_SIZE):
        written = _write_batch(cluster, kind, parsed[start : start + BATCH_SIZE], now, summary)
        if statistics.wrote(written):
            refresh_statistics_of(kind)
    if statistics.stale_at_end():
        refresh_statistics_of(kind)


def _write_batch(
    cluster: Cluster,
    kind: MirroredKind,
    chunk: list[ParsedObject],
    now: Any,
    summary: ImportSummary,
) -> int:
    """Write one batch; returns how many objects it created or updated."""
    result = write_records(cluster, kind, [p.record for p in chunk], now)
    for what, n in result.counts().items():
        summary.add(kind, what, n)
    for message in result.errors.values():
        summary.errors.append(message)
        summary.add(kind, "errors")
    return result.written


def _remove_vanished(
    cluster: Cluster, kind: MirroredKind, batch: _Batch, summary: ImportSummary
) -> None:
    keep = {record_key(kind, p.record) for p in batch.parsed.get(kind, [])}
    keep |= batch.failed_keys.get(kind, set())
    removed = remove_objects(cluster, kind, mirrored_keys(cluster, kind) - keep)
    if removed:
        summary.add(kind, "removed", removed)
