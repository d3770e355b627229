"""The engine snapshot of a cluster's mirror, kept per process while the mirror is unchanged.

Reading 5,000 nodes out of the database takes seconds; judging them takes a fraction of
that. Snapshots are immutable, so one can serve every what-if until the mirror's version
moves (topology.services.mirror_version). Each entry holds a whole cluster (about 50 MB
at 5,000 nodes × 8 zones), so only the few most recently used clusters are kept:
`WHATIF_SNAPSHOT_CACHE_SIZE`, 0 to turn the cache off. Each entry also keeps the
what-if answers worked out on it (`answer_cache`), which go when it goes.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from django.conf import settings

from scheduler_api.engine.snapshot import ClusterSnapshot
from topology.adapters import cluster_snapshot
from topology.models import Cluster
from topology.services.mirror_version import MirrorKey, mirror_key

_entries: OrderedDict[MirrorKey, ClusterSnapshot] = OrderedDict()
_answers: dict[MirrorKey, OrderedDict[bytes, bytes]] = {}
_lock = threading.Lock()


def cached_cluster_snapshot(cluster: Cluster) -> ClusterSnapshot:
    """`cluster_snapshot(cluster)`, reused while the cluster's mirror version is the same."""
    size: int = settings.WHATIF_SNAPSHOT_CACHE_SIZE
    key = mirror_key(cluster) if size > 0 else None
    if key is None:
        return cluster_snapshot(cluster)
    with _lock:
        snapshot = _entries.get(key)
        if snapshot is not None:
            _entries.move_to_end(key)
            return snapshot
    snapshot = cluster_snapshot(cluster)
    with _lock:
        _forget_older_versions(key)
        _entries[key] = snapshot
        _answers[key] = OrderedDict()
        while len(_entries) > size:
            _forget(next(iter(_entries)))
    return snapshot


def answer_book(snapshot: ClusterSnapshot) -> OrderedDict[bytes, bytes] | None:
    """The answers kept with `snapshot` (or a re-dated copy of it: same nodes), if cached.

    Callers hold `answer_lock` while they read or change the book.
    """
    with _lock:
        for key, cached in _entries.items():
            if cached.nodes is snapshot.nodes:
                return _answers[key]
    return None


answer_lock = _lock


def _forget(key: MirrorKey) -> None:
    del _entries[key]
    _answers.pop(key, None)


def _forget_older_versions(key: MirrorKey) -> None:
    for stale in [k for k in _entries if k[:2] == key[:2] and k[2] < key[2]]:
        _forget(stale)


def clear_snapshot_cache() -> None:
    with _lock:
        _entries.clear()
        _answers.clear()
