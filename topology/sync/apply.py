"""Apply raw objects of one collection to the mirror, inside the caller's transaction.

The same parsers and batch writers as the import run here, so a synced mirror equals
an imported one. Before parsing, an object whose resourceVersion (and, for NRTs,
apiVersion) equals the stored one is skipped: it cannot have changed, and a no-change
resync of 100,000 pods must not parse 100,000 pods.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from topology.models import Cluster
from topology.parsers import MirroredKind, ObjectParseError, object_key, parse_object
from topology.parsers.pod import PodRecord
from topology.services.removal import Key, remove_objects, stored_versions
from topology.services.writers import Outcome, write_records
from topology.sync.resources import Resource


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


def version_of(kind: MirroredKind, obj: dict[str, Any]) -> str:
    metadata = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    rv = str(metadata.get("resourceVersion") or "")
    if kind is MirroredKind.TOPOLOGY and rv:
        return f"{obj.get('apiVersion', '')} {rv}"
    return rv


def display_name(key: Key) -> str:
    return "/".join(key)


def apply_objects(
    cluster: Cluster,
    resource: Resource,
    objects: list[dict[str, Any]],
    now: datetime,
    stored: dict[Key, str] | None = None,
) -> Applied:
    """Upsert what changed; finished pods are removed, as they hold nothing.

    `stored` (key → stored version) saves a query per page when a list already read it.
    """
    kind = resource.kind
    applied = Applied()
    by_key = {object_key(kind, obj): obj for obj in objects}
    applied.keys = set(by_key)
    if stored is None:
        stored = stored_versions(cluster, kind, keys=by_key, api_group=resource.scope_group)
    records, finished = [], []
    for key, obj in by_key.items():
        version = version_of(kind, obj)
        if version and stored.get(key) == version:
            applied.unchanged += 1
            continue
        try:
            parsed = parse_object(obj)
        except ObjectParseError as exc:
            applied.bad[key] = exc
            continue
        if parsed is None or parsed.kind is not kind:
            applied.keys.discard(key)  # not one of ours (a field selector the server ignored)
            continue
        if isinstance(parsed.record, PodRecord) and parsed.record.finished:
            finished.append(key)
            continue
        records.append(parsed.record)
    result = write_records(cluster, kind, records, now)
    applied.unchanged += sum(1 for o in result.outcomes.values() if o is Outcome.UNCHANGED)
    applied.written = {k for k, o in result.outcomes.items() if o is not Outcome.UNCHANGED}
    applied.missing_node = dict(result.errors)
    applied.keys -= set(finished)
    applied.skipped = len(finished)
    applied.removed = remove_objects(cluster, kind, finished)
    applied.gone = set(finished)
    return applied


def delete_objects(cluster: Cluster, resource: Resource, keys: set[Key]) -> Applied:
    """DELETED events: remove what this collection mirrors under those keys."""
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
