"""The engine snapshot of a cluster's mirror, kept per process and refreshed node by node.

Reading 5,000 nodes out of the database takes seconds; judging them takes a fraction of
that. Snapshots are immutable, so one can serve every what-if until the mirror's version
moves (topology.services.mirror.version). When it moves (a live sync moves it every
second or so), the new snapshot keeps every NodeSnapshot whose fingerprint
(`adapters.fingerprints`) is unchanged and reads only the other nodes again; without
fingerprints (SQLite) it is read whole. Each entry holds a whole cluster (about 50 MB
at 5,000 nodes × 8 zones), so only the few most recently used clusters are kept:
`WHATIF_SNAPSHOT_CACHE_SIZE`, 0 to turn the cache off. Each entry also keeps the
what-if answers worked out on it (`answer_cache`), which go when it goes.

A kept snapshot is millions of objects; each full pass of Python's cycle collector
walks them all (0.4 s at 5,000 nodes), and a worker answering what-ifs ran one every
few requests. Once a snapshot is built, `gc.freeze()` moves everything alive into the
collector's permanent generation, which it skips; reference counting still frees what
is dropped. Before the next build `gc.unfreeze()` hands the rest back, so cyclic
garbage frozen meanwhile is collected then. While the whole mirror is read the collector
is off (`_collector_paused`), with one full pass once the old snapshot is let go.
"""

from __future__ import annotations

import dataclasses
import gc
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from scheduler_api.engine import ClusterSnapshot, ReservationSnapshot, prepare
from topology.adapters import cluster_snapshot
from topology.adapters.fingerprints import (
    NodeFingerprints,
    node_fingerprints,
    reservations_fingerprint,
)
from topology.adapters.mirror import node_snapshots, reservation_snapshots
from topology.models import Cluster
from topology.services.mirror.version import MirrorKey, mirror_key


@dataclass
class _Entry:
    snapshot: ClusterSnapshot
    fingerprints: NodeFingerprints | None
    reservations: str | None = None  # `reservations_fingerprint` when it was read
    answers: OrderedDict[bytes, Any] = field(default_factory=OrderedDict)  # answer_cache's


_entries: OrderedDict[MirrorKey, _Entry] = OrderedDict()
_lock = threading.Lock()
answer_lock = _lock  # guards the answer books too


def cached_cluster_snapshot(cluster: Cluster) -> ClusterSnapshot:
    """`cluster_snapshot(cluster)`, reused while the cluster's mirror version is the same."""
    size: int = settings.WHATIF_SNAPSHOT_CACHE_SIZE
    key = mirror_key(cluster) if size > 0 else None
    if key is None:
        return cluster_snapshot(cluster)
    with _lock:
        entry = _entries.get(key)
        if entry is not None:
            _entries.move_to_end(key)
            return entry.snapshot
        previous = _latest_older(key)
    # Fingerprints first: a node that changes after them is read at least that new, and
    # its stored fingerprint then differs from the next one, so it is read again then.
    fingerprints = node_fingerprints(cluster)
    reservations = reservations_fingerprint(cluster)
    base = _refresh_base(previous, fingerprints)
    whole = base is None
    gc.unfreeze()  # what the last freeze kept from the collector may be garbage by now
    with _collector_paused(whole):
        snapshot = _refreshed(cluster, base, reservations)
        entry = _Entry(snapshot, fingerprints, reservations)
        prepare(snapshot)  # before the freeze: what it builds lives as long as the snapshot
    with _lock:
        _forget_older_versions(key)
        _entries[key] = entry
        while len(_entries) > size:
            del _entries[next(iter(_entries))]
    if whole:
        gc.collect()  # the one pass the build went without, now the old snapshot is let go
    gc.freeze()
    return entry.snapshot


@contextmanager
def _collector_paused(pause: bool) -> Iterator[None]:
    """Python's cycle collector off while a whole snapshot is read (it is enabled again
    after, unless it was off already). Reading one allocates millions of objects that
    all stay alive, so the collector ran thousands of times for nothing: at 5,000 nodes
    6.2 s of reading became 4.6 s with one full pass at the end (`gc.collect`)."""
    enabled = pause and gc.isenabled()
    if enabled:
        gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


_Base = tuple[_Entry, NodeFingerprints, NodeFingerprints]  # kept entry, its and the new prints


def _refresh_base(previous: _Entry | None, fingerprints: NodeFingerprints | None) -> _Base | None:
    """What a refresh starts from; None: the mirror is read whole (no snapshot kept, or
    no fingerprints: SQLite)."""
    if previous is None or previous.fingerprints is None or fingerprints is None:
        return None
    return previous, previous.fingerprints, fingerprints


def _older_versions(key: MirrorKey) -> list[MirrorKey]:
    """Keys of the same cluster at versions before `key`'s."""
    return [k for k in _entries if k[:2] == key[:2] and k[2] < key[2]]


def _latest_older(key: MirrorKey) -> _Entry | None:
    older = _older_versions(key)
    return _entries[max(older, key=lambda k: k[2])] if older else None


def _refreshed(cluster: Cluster, base: _Base | None, reservations: str | None) -> ClusterSnapshot:
    """The snapshot now: the previous one's unchanged nodes, the others read again, and
    the Reservations read again only if their fingerprint moved (all read without a base)."""
    if base is None:
        return cluster_snapshot(cluster)
    previous, before, fingerprints = base
    changed = [name for name, digest in fingerprints.items() if before.get(name) != digest]
    kept = {node.name: node for node in previous.snapshot.nodes}
    if changed:
        kept.update((node.name, node) for node in node_snapshots(cluster, changed))
    return dataclasses.replace(
        previous.snapshot,
        nodes=tuple(kept[name] for name in fingerprints if name in kept),
        reservations=_reservations_now(cluster, previous, reservations),
    )


def _reservations_now(
    cluster: Cluster, previous: _Entry, fingerprint: str | None
) -> tuple[ReservationSnapshot, ...]:
    if fingerprint is not None and fingerprint == previous.reservations:
        return previous.snapshot.reservations
    return _same_objects_if_equal(reservation_snapshots(cluster), previous.snapshot.reservations)


def _same_objects_if_equal(
    read: tuple[ReservationSnapshot, ...], before: tuple[ReservationSnapshot, ...]
) -> tuple[ReservationSnapshot, ...]:
    """Reservations as read, each unchanged one as the very object kept before: the
    engine keeps per-node books while a node's reservations are the same objects."""
    kept = {reservation.name: reservation for reservation in before}
    return tuple(kept[r.name] if r.name in kept and kept[r.name] == r else r for r in read)


def answer_book(snapshot: ClusterSnapshot) -> tuple[MirrorKey, OrderedDict[bytes, Any]] | None:
    """The mirror version `snapshot` (or a re-dated copy of it: same nodes) was cached
    under, and the answers kept with it; None if it is not the cached one.

    Callers hold `answer_lock` while they read or change the book.
    """
    with _lock:
        for key, entry in _entries.items():
            if entry.snapshot.nodes is snapshot.nodes:
                return key, entry.answers
    return None


def _forget_older_versions(key: MirrorKey) -> None:
    for stale in _older_versions(key):
        del _entries[stale]


def clear_snapshot_cache() -> None:
    with _lock:
        _entries.clear()
