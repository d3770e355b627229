"""The state of a fake API server: collections, objects, resourceVersions, history.

One global resourceVersion counter, as etcd has. Every change is kept in a history
(old and new object) so that a watch can replay from any resourceVersion until the
history is compacted, after which such a watch gets 410 Expired. A CRD that serves
several versions stores each object once and serves it in every version, with the
apiVersion rewritten (no conversion webhook), as the real API server does.
"""

from __future__ import annotations

import bisect
import copy
import itertools
import json
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

Key = tuple[str, str]  # (namespace, name); namespace "" when cluster-scoped
CollectionId = tuple[str, str]  # (group, plural)

CORE_KINDS = {
    "nodes": ("Node", False),
    "pods": ("Pod", True),
    "configmaps": ("ConfigMap", True),
    "events": ("Event", True),
    "namespaces": ("Namespace", False),
}
GROUP_KINDS = {
    "topology.node.k8s.io": ("noderesourcetopologies", "NodeResourceTopology"),
    "topology.crane.io": ("noderesourcetopologies", "NodeResourceTopology"),
    "scheduling.koordinator.sh": ("reservations", "Reservation"),
}
# The preferred version comes first, as discovery reports it.
DEFAULT_GROUPS: dict[str, tuple[str, ...]] = {
    "topology.node.k8s.io": ("v1alpha2", "v1alpha1"),
    "topology.crane.io": ("v1alpha1",),
    "scheduling.koordinator.sh": ("v1alpha1",),
}


@dataclass(frozen=True)
class Collection:
    group: str
    plural: str
    kind: str
    namespaced: bool
    versions: tuple[str, ...]

    @property
    def id(self) -> CollectionId:
        return (self.group, self.plural)


@dataclass(frozen=True)
class Change:
    rv: int
    collection: CollectionId
    type: str  # ADDED, MODIFIED, DELETED
    old: dict[str, Any] | None
    new: dict[str, Any]


@dataclass
class _Listing:
    keys: list[Key] = field(default_factory=list)
    dirty: bool = True


class Conflict(Exception):
    """A write carried a stale resourceVersion."""


class AlreadyExists(Exception):
    """A create named an object that exists."""


class FakeCluster:
    def __init__(self, groups: dict[str, tuple[str, ...]] | None = None) -> None:
        self.cond = threading.Condition()
        self.rv = 1000
        self.compacted_at = 0  # a watch from an older resourceVersion gets 410
        self.compactions = 0
        self.history: list[Change] = []
        self._history_rvs: list[int] = []
        self._uids = itertools.count(1)
        self.collections: dict[CollectionId, Collection] = {
            ("", plural): Collection("", plural, kind, namespaced, ("v1",))
            for plural, (kind, namespaced) in CORE_KINDS.items()
        }
        for group, versions in (DEFAULT_GROUPS if groups is None else groups).items():
            plural, kind = GROUP_KINDS[group]
            self.collections[(group, plural)] = Collection(group, plural, kind, False, versions)
        self.objects: dict[CollectionId, dict[Key, dict[str, Any]]] = {
            cid: {} for cid in self.collections
        }
        self._listings: dict[CollectionId, _Listing] = {cid: _Listing() for cid in self.collections}
        self._encoded: dict[tuple[CollectionId, Key, str, bool], tuple[str, bytes]] = {}

    # Identity ---------------------------------------------------------------------------

    def collection_of(self, obj: dict[str, Any]) -> Collection:
        group = obj["apiVersion"].rpartition("/")[0]
        for collection in self.collections.values():
            if collection.group == group and collection.kind == obj["kind"]:
                return collection
        raise LookupError(f"this fake cluster does not serve {obj['apiVersion']} {obj['kind']}")

    @staticmethod
    def key_of(obj: dict[str, Any], collection: Collection) -> Key:
        metadata = obj["metadata"]
        namespace = metadata.get("namespace", "default") if collection.namespaced else ""
        return (namespace, metadata["name"])

    # Writes ---------------------------------------------------------------------------

    def load(self, objects: Iterable[dict[str, Any]], *, copy_objects: bool = True) -> None:
        """Initial state: no history, as if it had always been there. The benchmark
        hands over 100,000 fresh objects and skips the copy."""
        with self.cond:
            for obj in objects:
                try:
                    collection = self.collection_of(obj)
                except LookupError:
                    continue
                stored = self._stamp(copy.deepcopy(obj) if copy_objects else obj, collection)
                self.objects[collection.id][self.key_of(stored, collection)] = stored
                self._listings[collection.id].dirty = True

    def put(self, obj: dict[str, Any], *, expect_rv: str = "") -> dict[str, Any]:
        """Create or replace; `expect_rv` (when given) must be the stored resourceVersion."""
        with self.cond:
            collection = self.collection_of(obj)
            key = self.key_of(obj, collection)
            old = self.objects[collection.id].get(key)
            if expect_rv and (old is None or old["metadata"]["resourceVersion"] != expect_rv):
                raise Conflict(key)
            new = self._stamp(copy.deepcopy(obj), collection, old)
            self.objects[collection.id][key] = new
            if old is None:
                self._listings[collection.id].dirty = True
            self._record(collection, "MODIFIED" if old else "ADDED", old, new)
            return copy.deepcopy(new)

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Create only (a POST): AlreadyExists when the key is taken."""
        with self.cond:
            collection = self.collection_of(obj)
            if self.key_of(obj, collection) in self.objects[collection.id]:
                raise AlreadyExists(self.key_of(obj, collection))
            return self.put(obj)

    def delete(self, obj: dict[str, Any]) -> None:
        with self.cond:
            collection = self.collection_of(obj)
            key = self.key_of(obj, collection)
            old = self.objects[collection.id].pop(key)
            self._listings[collection.id].dirty = True
            self.rv += 1
            gone = copy.deepcopy(old)
            gone["metadata"]["resourceVersion"] = str(self.rv)
            self._append(Change(self.rv, collection.id, "DELETED", old, gone))

    def compact(self) -> None:
        """Forget the history: a watch from any earlier resourceVersion (open ones too)
        gets 410. The counter moves once so that even a caught-up watch is behind."""
        with self.cond:
            self.rv += 1
            self.compacted_at = self.rv
            self.compactions += 1
            self.history.clear()
            self._history_rvs.clear()
            self.cond.notify_all()

    def _stamp(
        self, obj: dict[str, Any], collection: Collection, old: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        self.rv += 1
        metadata = obj.setdefault("metadata", {})
        if collection.namespaced:
            metadata.setdefault("namespace", "default")
        metadata["resourceVersion"] = str(self.rv)
        metadata["uid"] = (
            (old or {}).get("metadata", {}).get("uid")
            or metadata.get("uid")
            or f"fake-uid-{next(self._uids)}"
        )
        return obj

    def _record(
        self, collection: Collection, kind: str, old: dict[str, Any] | None, new: dict[str, Any]
    ) -> None:
        self._append(Change(self.rv, collection.id, kind, old, new))

    def _append(self, change: Change) -> None:
        self.history.append(change)
        self._history_rvs.append(change.rv)
        self.cond.notify_all()

    # Reads ----------------------------------------------------------------------------

    def get(self, cid: CollectionId, key: Key) -> dict[str, Any] | None:
        with self.cond:
            found = self.objects[cid].get(key)
            return copy.deepcopy(found) if found else None

    def sorted_keys(self, cid: CollectionId) -> list[Key]:
        listing = self._listings[cid]
        if listing.dirty:
            listing.keys = sorted(self.objects[cid])
            listing.dirty = False
        return listing.keys

    def changes_after(self, cid: CollectionId, rv: int) -> list[Change]:
        start = bisect.bisect_right(self._history_rvs, rv)
        return [c for c in self.history[start:] if c.collection == cid]

    def encoded(self, cid: CollectionId, key: Key, version: str, *, typed: bool) -> bytes:
        """An object as JSON at a version, cached per resourceVersion (lists of 100k pods)."""
        obj = self.objects[cid][key]
        rv = obj["metadata"]["resourceVersion"]
        cached = self._encoded.get((cid, key, version, typed))
        if cached and cached[0] == rv:
            return cached[1]
        data = _encode(as_version(obj, cid, version, typed=typed))
        self._encoded[(cid, key, version, typed)] = (rv, data)
        return data

    def served(self, group: str, plural: str, version: str = "") -> list[dict[str, Any]]:
        """What a list at `version` (the preferred one by default) returns, TypeMeta kept."""
        collection = self.collections[(group, plural)]
        version = version or collection.versions[0]
        with self.cond:
            return [
                copy.deepcopy(as_version(obj, collection.id, version, typed=True))
                for obj in self.objects[collection.id].values()
            ]


def _encode(obj: dict[str, Any]) -> bytes:
    """orjson: the benchmark's first list encodes 100,000 pods and 5,000 NRTs here, on
    cores the sync and PostgreSQL share (a real API server runs elsewhere); json for
    what orjson refuses (a non-string key, an integer beyond 64 bits)."""
    try:
        return orjson.dumps(obj)
    except orjson.JSONEncodeError:
        return json.dumps(obj).encode()


def as_version(
    obj: dict[str, Any], cid: CollectionId, version: str, *, typed: bool
) -> dict[str, Any]:
    """The object as served at `version` (a shallow copy: only top-level keys change).

    Built-in kinds come without TypeMeta in lists. v1alpha1 NRTs have no top-level
    `attributes` in their schema, so the server prunes it.
    """
    group = cid[0]
    out = dict(obj)
    out["apiVersion"] = f"{group}/{version}" if group else version
    if group == "topology.node.k8s.io" and version == "v1alpha1":
        out.pop("attributes", None)
    if not typed and not group:
        out.pop("apiVersion", None)
        out.pop("kind", None)
    return out
