"""Mirrors: schedulerplugins.fast.count.fill_count, model.kubernetes.node_fit_count.

`schedulerplugins.fast.count.fill_count` on every row of an NRTIndex at once.

Capacity asks each fitting node how many copies of the pod it takes alone. For
scheduler-plugins nodes `schedulerplugins.fast.count` answers in closed form (node-level
room, then per NUMA zone `available // request`); here the same arithmetic runs on the
index's columns for every row in one pass. A row `schedulerplugins.fast.count` would
leave to the copy-by-copy fill (several requests aligned in turn, a negative amount,
duplicate NUMA ids) comes back UNDECIDED. Property tests hold every row to
`schedulerplugins.fast.count.fill_count`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from scheduler_api.engine.model.decided import UNDECIDED, UNLIMITED
from scheduler_api.engine.model.snapshot import PodSpec, QoSClass
from scheduler_api.engine.schedulerplugins.fast.vector import Bools, Ints, NRTIndex
from scheduler_api.engine.schedulerplugins.reference.common import (
    ALWAYS_ON_NODE,
    effective_request,
    includes_non_native,
    is_host_level,
    is_numa_affine,
)


def _copies(room: Ints, step: int) -> Ints:
    """How many k >= 0 have k * step <= room, per row (`whatif.systems._copies`)."""
    return np.where(room >= 0, room // step + 1, 0)


def node_fit_counts(index: NRTIndex, request: Mapping[str, int], limit: int) -> Ints:
    """`whatif.systems.node_fit_count` per row: copies the node-level filters admit."""
    count = np.full(len(index.nodes), limit, np.int64)
    pods_room = index.node_free("pods") - 1
    pods_limited = _copies(pods_room, request.get("pods", 0) + 1)
    count = np.where(index.on_node("pods"), np.minimum(count, pods_limited), count)
    for resource, wanted in request.items():
        if wanted > 0 and resource != "pods":
            count = np.minimum(count, _copies(index.node_free(resource) - wanted, wanted))
    return np.where(index.unschedulable, 0, np.maximum(count, 0))


def numa_copies(index: NRTIndex, request: Mapping[str, int], qos: QoSClass) -> Ints:
    """`schedulerplugins.fast.count.numa_copies` per row (UNLIMITED where the filter
    never runs short)."""
    count, valid = len(index.nodes), index.zone_valid
    absent = np.zeros(count, np.bool_)  # a requested resource the node does not have
    checked_any = np.zeros(count, np.bool_)
    missing = np.zeros(valid.shape, np.bool_)  # a checked resource the zone lacks
    room = np.full(valid.shape, UNLIMITED, np.int64)
    for resource, wanted in request.items():
        if wanted == 0:
            continue
        if resource not in ALWAYS_ON_NODE:
            absent |= ~index.on_node(resource)
        amounts, holders = index.zone_amounts(resource)
        holders = holders & valid
        checked: Bools = np.ones(count, np.bool_)
        if is_host_level(resource):
            checked = np.asarray(holders.any(axis=1), np.bool_)
        checked_any |= checked
        missing |= checked[:, None] & ~holders
        if qos is not QoSClass.GUARANTEED and is_numa_affine(resource):
            continue  # always suitable, never debited
        debited = checked[:, None] & holders
        fits = amounts // wanted
        room = np.where(debited, np.where(room == UNLIMITED, fits, np.minimum(room, fits)), room)
    per_zone = np.where(missing, 0, np.where(room == UNLIMITED, UNLIMITED, np.maximum(room, 0)))
    unlimited_zone = (valid & (per_zone == UNLIMITED)).any(axis=1)
    total = np.where(valid, per_zone, 0).sum(axis=1)
    copies = np.where(unlimited_zone, UNLIMITED, total)
    return np.where(absent, 0, np.where(checked_any, copies, UNLIMITED))


def _scope_requests(pod: PodSpec) -> tuple[dict[str, int], dict[str, int] | None]:
    """The one request aligned under pod scope, and under container scope (None: several)."""
    single = len(pod.containers) == 1 and not pod.init_containers
    return effective_request(pod), dict(pod.containers[0].requests) if single else None


def fill_counts(index: NRTIndex, pod: PodSpec, request: Mapping[str, int], limit: int) -> Ints:
    """`schedulerplugins.fast.count.fill_count` per row; UNDECIDED where it returns None."""
    cap = node_fit_counts(index, request, limit)
    if pod.qos_class is QoSClass.BEST_EFFORT and not includes_non_native(pod):
        return cap
    applies = (cap > 0) & index.visible & index.single_numa
    result = cap.copy()
    pod_level, container_level = _scope_requests(pod)
    for rows, aligned in ((index.pod_scope, pod_level), (~index.pod_scope, container_level)):
        chosen: Bools = applies & rows
        if not chosen.any():
            continue
        if aligned is None or any(amount < 0 for amount in aligned.values()):
            result[chosen] = UNDECIDED
            continue
        copies = numa_copies(index, aligned, pod.qos_class)
        counted = np.where(copies == UNLIMITED, cap, np.minimum(cap, copies))
        result = np.where(chosen, counted, result)
    return np.where(applies & index.duplicate_numa, UNDECIDED, result)
