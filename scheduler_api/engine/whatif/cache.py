"""What the what-if keeps between questions: the one place its caches live.

- the columns of a snapshot's nodes (`index_of`), per tuple of nodes;
- the kubelet's admission of a pod on nodes alike in all it reads (`kubelet_admission`).

Families keep their own (`kubelet.cache`, `koordinator.cache`, `crane.cache`); no reference module
imports any of them. Entries keyed by object identity hold the object, so an id is never
reused while its entry lives. `clear()` empties everything (tests, benchmarks).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence

from scheduler_api.engine.kubelet.cache import (
    kubelet_node_key,
    kubelet_pod_key,
    node_shared_topology,
)
from scheduler_api.engine.model.snapshot import ClusterSnapshot, NodeSnapshot, PodSpec
from scheduler_api.engine.schedulerplugins.fast.vector import NRTIndex
from scheduler_api.engine.whatif.admission import Admission, pinned_admission

__all__ = [
    "ADMISSIONS_KEPT",
    "INDEXES_KEPT",
    "clear",
    "index_of",
    "kubelet_admission",
]

INDEXES_KEPT = 4  # node tuples (clusters) whose columns stay built
# Admissions of nodes alike in everything `kubelet_pinning` reads: a cluster's nodes of one
# machine type with the same pinned CPUs and kubelet configuration get one answer. The key
# holds the CPU table by identity (kept alive by the entry, so the id is not reused).
ADMISSIONS_KEPT = 4096

_INDEXES: OrderedDict[int, tuple[Sequence[NodeSnapshot], NRTIndex]] = OrderedDict()
_ADMISSIONS: OrderedDict[Hashable, tuple[object, Admission]] = OrderedDict()
_LOCK = threading.Lock()


def index_of(snapshot: ClusterSnapshot) -> NRTIndex:
    """The columns of the snapshot's nodes, built once per tuple of nodes.

    A snapshot re-dated with `dataclasses.replace` (a cached mirror serving many
    what-ifs) shares its nodes, and so its columns. An entry holds its tuple, so the
    id cannot be reused while the entry lives; the most recent few are kept. A new
    tuple that differs from the latest one in a few nodes (a snapshot refreshed after
    a mirror change) gets a copy of its columns with those rows updated.
    """
    key = id(snapshot.nodes)
    with _LOCK:
        entry = _INDEXES.get(key)
        if entry is not None and entry[0] is snapshot.nodes:
            _INDEXES.move_to_end(key)
            return entry[1]
        latest = next(reversed(_INDEXES.values()), None)
    index = latest[1].refreshed(snapshot.nodes) if latest is not None else None
    index = index or NRTIndex(snapshot.nodes)
    with _LOCK:
        _INDEXES[key] = (snapshot.nodes, index)
        while len(_INDEXES) > INDEXES_KEPT:
            _INDEXES.popitem(last=False)
    return index


def kubelet_admission(node: NodeSnapshot, pod: PodSpec) -> Admission:
    """`pinned_admission` (the static CPU manager behind the Topology Manager on
    `node`), remembered for nodes alike in all it reads (`kubelet_node_key`)."""
    key = (kubelet_node_key(node), kubelet_pod_key(pod))
    with _LOCK:
        kept = _ADMISSIONS.get(key)
        if kept is not None and kept[0] is node.cpus:
            _ADMISSIONS.move_to_end(key)
            return kept[1]
    topology = node_shared_topology(node)
    admission = pinned_admission(node, pod, topology)
    with _LOCK:
        _ADMISSIONS[key] = (node.cpus, admission)
        while len(_ADMISSIONS) > ADMISSIONS_KEPT:
            _ADMISSIONS.popitem(last=False)
    return admission


def clear() -> None:
    """Forget everything kept (the next questions build it again)."""
    with _LOCK:
        _INDEXES.clear()
        _ADMISSIONS.clear()
