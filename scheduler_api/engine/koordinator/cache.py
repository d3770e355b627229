"""What Koordinator's fast paths keep between questions: the one place its caches live.

The reference (`koordinator/reference/`) never imports this module: it works out every
answer from the snapshot alone (`reference.plugin.FRESH`). Fast paths hand `KEPT` to the
plugin instead, which serves the same values from what earlier questions built:

- each node's books (view and NodeAllocation) and a bounded memo of what fast paths
  derive from them (`kept_books`, `remember`);
- the reservation split per answer the pod gives to the questions the split asks;
- the PreFilter state and exclusive policy of the last pods asked about;
- the digest of the last (pod, config) question a capacity count keys its counts by.

Entries are keyed by object identity and hold the objects they are keyed by, so an id
is never reused while its entry lives. `clear()` empties everything (tests, benchmarks).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import cast

from scheduler_api.engine.koordinator.reference.plugin import (
    FRESH,
    Inputs,
    split_and_restore,
)
from scheduler_api.engine.koordinator.reference.pod import (
    PodState,
    koord_exclusive_policy,
    prefilter,
)
from scheduler_api.engine.koordinator.reference.reservation import (
    ReservationSplit,
    RestoreState,
    matches_owners,
)
from scheduler_api.engine.koordinator.reference.state import (
    KoordConfig,
    NodeBooks,
    NodeMemo,
)
from scheduler_api.engine.model.kubernetes import pod_requests
from scheduler_api.engine.model.snapshot import (
    ANN_KOORD_EXACT_MATCH_RESERVATION,
    CPUExclusivePolicy,
    NodeSnapshot,
    PodSpec,
    ReservationSnapshot,
)

__all__ = [
    "BOOKS_KEPT",
    "KEPT",
    "MEMO_KEPT",
    "clear",
    "exclusive_policy_of",
    "kept_books",
    "kept_prefilter",
    "question_key",
    "remember",
]

BOOKS_KEPT = 6_000  # nodes whose view and allocation stay built (a large cluster's worth)
MEMO_KEPT = 128  # memo entries per node (pods bring keys of their own: bounded)
PREFILTERS_KEPT = 64  # pods whose PreFilter state stays worked out (a what-if asks per node)
KEEP_COUNTS = True  # False: every count is worked out anew (bench/api.py's baseline)

_BOOKS: OrderedDict[tuple[int, int], NodeBooks] = OrderedDict()
_PREFILTERS: OrderedDict[tuple[int, str], tuple[PodSpec, PodState]] = OrderedDict()
_LAST_POLICY: list[tuple[PodSpec, CPUExclusivePolicy]] = []
_LAST_KEY: list[tuple[PodSpec, KoordConfig, bytes]] = []
_LOCK = threading.Lock()


def remember(memo: NodeMemo, key: object, value: object) -> None:
    """Keep `value` in a node's memo; at MEMO_KEPT entries the memo starts afresh (all it
    holds can be worked out again, and readers never assume an entry stays)."""
    if len(memo) >= MEMO_KEPT:
        memo.clear()
    memo[key] = value


def kept_books(
    node: NodeSnapshot, config: KoordConfig, reservations: Iterable[ReservationSnapshot]
) -> NodeBooks:
    """`fresh_books`, kept per node: neither depends on the pod asked about, and a cached
    snapshot serves the same node objects to every what-if.

    The NodeAllocation is shared: callers must not change it (the capacity count copies
    it first). An entry holds its node and reservations, so their ids stay theirs; at
    most BOOKS_KEPT entries are kept.
    """
    bound = tuple(r for r in reservations if r.node_name == node.name)
    key = (id(node), config.max_ref_count)
    with _LOCK:
        entry = _BOOKS.get(key)
        if entry is not None and entry.node is node and _same(entry.reservations, bound):
            _BOOKS.move_to_end(key)
            return entry
    fresh = FRESH.books(node, config, bound)
    entry = NodeBooks(fresh.node, fresh.reservations, fresh.view, fresh.held, {})
    with _LOCK:
        _BOOKS[key] = entry
        while len(_BOOKS) > BOOKS_KEPT:
            _BOOKS.popitem(last=False)
    return entry


def _same(kept: Sequence[ReservationSnapshot], now: Sequence[ReservationSnapshot]) -> bool:
    return len(kept) == len(now) and all(a is b for a, b in zip(kept, now, strict=True))


def kept_split(
    books: NodeBooks, pod: PodSpec, reservations: Sequence[ReservationSnapshot]
) -> tuple[ReservationSplit, RestoreState]:
    """`split_and_restore`, kept with the node's books for each answer the pod gives to
    the only questions the split asks of it: does it ignore reservations, which one does
    its affinity name, whose owners does it match (of the reservations the books
    hold), and, when it has an exact-match spec, that spec and its requests."""
    if not books.reservations or books.memo is None:
        return split_and_restore(books, pod, reservations)
    matches = tuple(matches_owners(pod, r.owners) for r in books.reservations)
    exact = pod.annotations.get(ANN_KOORD_EXACT_MATCH_RESERVATION, "")
    requests = tuple(sorted(pod_requests(pod)[0].items())) if exact else ()
    key = ("split", pod.ignores_reservations, pod.reservation_affinity_name, matches, exact,
           requests)  # fmt: skip
    entry = books.memo.get(key)
    if entry is None:
        entry = split_and_restore(books, pod, reservations)
        remember(books.memo, key, entry)
    return cast(tuple[ReservationSplit, RestoreState], entry)


def kept_prefilter(pod: PodSpec, config: KoordConfig) -> PodState:
    """PreFilter, kept per pod object: it reads only the pod and the default bind policy,
    and a what-if asks it for every node (parsing the pod's annotations each time).

    The state is shared: callers must not change it. An entry holds its pod, so the
    pod's id stays its own while the entry lives.
    """
    key = (id(pod), config.default_cpu_bind_policy)
    with _LOCK:
        entry = _PREFILTERS.get(key)
        if entry is not None and entry[0] is pod:
            _PREFILTERS.move_to_end(key)
            return entry[1]
    state = prefilter(pod, config)
    with _LOCK:
        _PREFILTERS[key] = (pod, state)
        while len(_PREFILTERS) > PREFILTERS_KEPT:
            _PREFILTERS.popitem(last=False)
    return state


KEPT = Inputs(kept_books, kept_split, kept_prefilter)


def exclusive_policy_of(pod: PodSpec) -> CPUExclusivePolicy:
    """`koord_exclusive_policy`, kept for the last pod asked about (it parses the pod's
    resource-spec annotation; a what-if asks it for every node it counts)."""
    last = _LAST_POLICY[-1] if _LAST_POLICY else None
    if last is not None and last[0] is pod:
        return last[1]
    policy = koord_exclusive_policy(pod)
    _LAST_POLICY[:] = [(pod, policy)]
    return policy


def question_key(pod: PodSpec, config: KoordConfig) -> bytes:
    """A digest of everything of `pod` and `config` a count reads, kept for the last pair
    asked about (a what-if counts one pod on every node).

    Why: a count depends on the node's books (the memo it is kept in belongs to them and
    to the node's reservations), the pod, the config and the cap, and on nothing else.
    The node's memo outlives the question, so the same question asked again on a mirror
    that changed elsewhere (the answer cache keeps answers per mirror version only)
    counts only the nodes that changed. The reprs are exact: every field of both is a
    string, number, enum or a mapping or tuple of those.
    """
    last = _LAST_KEY[-1] if _LAST_KEY else None
    if last is not None and last[0] is pod and last[1] is config:
        return last[2]
    text = f"{pod!r}|{config!r}"
    digest = hashlib.blake2b(text.encode(), digest_size=16).digest()
    _LAST_KEY[:] = [(pod, config, digest)]
    return digest


def clear() -> None:
    """Forget everything kept (the next questions build it again)."""
    with _LOCK:
        _BOOKS.clear()
        _PREFILTERS.clear()
    _LAST_POLICY.clear()
    _LAST_KEY.clear()
