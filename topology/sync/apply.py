"""Apply raw objects of one collection to the mirror, inside the caller's transaction.

The same parsers and batch writers as the import run here, so a synced mirror equals
an imported one. Before parsing, an object whose resourceVersion (and, for NRTs,
apiVersion) equals the stored one is skipped: it cannot have changed, and a no-change
resync of 100,000 pods must not parse 100,000 pods.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from topology.models import Cluster
from topology.parsers import MirroredKind, ObjectParseError, Record, object_key
from topology.parsers.pod import PodRecord
from topology.services.mirror.hashing import EncodedRecord
from topology.services.mirror.removal import Key, remove_objects, stored_versions
from topology.services.mirror.writers import Outcome, write_records
from topology.sync.ahead import Parsed, parse_one
from topology.sync.resources import Resource
from topology.sync.versions import same_version


@dataclass
class Applied:
    """What one apply did; `bad` keeps malformed objects' stored versions from removal."""

    keys: set[Key] = field(default_factory=set)
    written: set[Key] = field(default_factory=set)
    gone: set[Key] = field(default_factory=set)
    unchanged: int = 0
    removed: int = 0
    skipped: int = 0
    bad: dict[Key, ObjectParseError] = field(default_factory=dict)
    missing_node: dict[Key, str] = field(default_factory=dict)


def display_name(key: Key) -> str:
    return "/".join(key)


def apply_objects(
    cluster: Cluster,
    resource: Resource,
    objects: list[dict[str, Any]],
    now: datetime,
    stored: dict[Key, str] | None = None,
    parsed: dict[Key, Parsed] | None = None,
    node_ids: Mapping[str, int] | None = None,
) -> Applied:
    """Upsert what changed; finished pods are removed, as they hold nothing.

    `stored` (key → stored version) saves a query per page when a list already read it;
    keys it lacks are not mirrored, which spares the writers looking them up. `parsed`:
    objects the fetching thread parsed ahead (see `ahead`). `node_ids`: the cluster's
    Nodes, read once by a pod list (see `write_records`). When nothing changed, no query
    runs at all.
    """
    kind = resource.kind
    applied = Applied()
    by_key = {object_key(kind, obj): obj for obj in objects}
    applied.keys = set(by_key)
    if stored is None:
        stored = stored_versions(cluster, kind, keys=by_key, api_group=resource.scope_group)
    changed = {k: obj for k, obj in by_key.items() if not same_version(kind, obj, stored, k)}
    applied.unchanged = len(by_key) - len(changed)
    ready, encodings = _parse_changed(kind, changed, parsed or {}, applied)
    finished = [key for key, record in ready.items() if _finished(record)]
    records = [record for record in ready.values() if not _finished(record)]
    if records:
        absent = {key for key in changed if key not in stored}
        result = write_records(
            cluster, kind, records, now, absent=absent, encodings=encodings, node_ids=node_ids
        )
        applied.unchanged += sum(1 for o in result.outcomes.values() if o is Outcome.UNCHANGED)
        applied.written = {k for k, o in result.outcomes.items() if o is not Outcome.UNCHANGED}
        applied.missing_node = dict(result.errors)
    if finished:
        applied.keys -= set(finished)
        applied.skipped = len(finished)
        applied.removed = remove_objects(cluster, kind, finished)
        applied.gone = set(finished)
    return applied


def needs_writing(
    kind: MirroredKind, objects: list[dict[str, Any]], stored: dict[Key, str]
) -> bool:
    """Whether any object's version differs from the stored one (a cheap look, no parsing):
    a page of a no-change resync then costs no transaction and no query."""
    return any(not same_version(kind, obj, stored, object_key(kind, obj)) for obj in objects)


def _parse_changed(
    kind: MirroredKind,
    changed: dict[Key, dict[str, Any]],
    parsed: dict[Key, Parsed],
    applied: Applied,
) -> tuple[dict[Key, Record], dict[Key, EncodedRecord]]:
    """Records of the changed objects that are ours, with their hashes; malformed
    objects go to `applied.bad`."""
    records: dict[Key, Record] = {}
    encodings: dict[Key, EncodedRecord] = {}
    for key, obj in changed.items():
        item = parsed.get(key) or parse_one(kind, obj)
        if item.error is not None:
            applied.bad[key] = item.error
        elif item.record is None:
            applied.keys.discard(key)  # not one of ours (a field selector the server ignored)
        else:
            records[key] = item.record
            if item.encoded is not None:
                encodings[key] = item.encoded
    return records, encodings


def _finished(record: Record) -> bool:
    return isinstance(record, PodRecord) and record.finished


def delete_objects(cluster: Cluster, resource: Resource, keys: set[Key]) -> Applied:
    """DELETED events: remove what this collection mirrors under those keys."""
    if not keys:
        return Applied()
    owned = stored_versions(cluster, resource.kind, keys=keys, api_group=resource.scope_group)
    return Applied(removed=remove_objects(cluster, resource.kind, set(owned)), gone=set(keys))


def merge(into: Applied, other: Applied) -> Applied:
    into.keys |= other.keys
    into.written |= other.written
    into.gone |= other.gone
    into.unchanged += other.unchanged
    into.removed += other.removed
    into.skipped += other.skipped
    into.bad.update(other.bad)
    into.missing_node.update(other.missing_node)
    return into
