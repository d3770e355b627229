"""Mirrors: schedulerplugins.reference.match.filter_node,
schedulerplugins.reference.match.score_node, model.kubernetes.node_fit_reasons.

scheduler-plugins' Filter and Score over every node at once, on numpy columns.

A cluster what-if asks the same question of thousands of nodes. For the common
case (scheduler-plugins judging a pod whose verdict depends only on per-zone
amounts) the answer is computed here for all nodes in one pass over arrays of
shape (nodes, zones). Every node the columns cannot decide exactly (container
scope with several containers, BalancedAllocation or LeastNUMANodes scoring,
duplicate NUMA ids, undefined scores) is flagged `exact` and judged one by one
by `schedulerplugins.reference.match`, the reference. Property tests check both agree on every node.

Cost: building the index is O(nodes × zones × resources) in Python, once per
snapshot; judging a pod is O(nodes × zones × requested resources) in numpy.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from scheduler_api.engine.koordinator.reference.state import node_cpu_bind_policy
from scheduler_api.engine.kubelet.cache import kubelet_node_key
from scheduler_api.engine.kubelet.reference.node_config import (
    KUBELET_MODELLED,
    kubelet_class,
    memory_manager_static,
)
from scheduler_api.engine.model.results import CORDONED, Reason, short_on_node
from scheduler_api.engine.model.snapshot import (
    Flavour,
    NodeSnapshot,
    PodSpec,
    QoSClass,
    TopologyManagerPolicy,
    TopologyManagerScope,
)
from scheduler_api.engine.schedulerplugins.reference.common import (
    ALWAYS_ON_NODE,
    MAX_NODE_SCORE,
    VISIBLE_FLAVOURS,
    NRTMatchConfig,
    NUMANode,
    ScoringStrategy,
    TopologyManagerConfig,
    effective_request,
    includes_non_native,
    is_host_level,
    is_numa_affine,
    numa_node_list,
    resolve_topology_manager,
)

Bools = NDArray[np.bool_]
Ints = NDArray[np.int64]
NO_ZONE = np.int64(1 << 40)
NO_SCORE = np.int64(-(1 << 62))
PLENTY = np.int64(1 << 62)


# The per-row arrays `_fill` writes (a working copy copies them; `available`, `has` and
# the node-level free amounts are dicts of them, copied on their own).
ROW_COLUMNS = (
    "zone_valid",
    "zone_numa",
    "visible",
    "single_numa",
    "pod_scope",
    "duplicate_numa",
    "sparse_numa",
    "unschedulable",
    "koordinator_binds",
    "crane_nrt",
    "crane_static",
    "kubelet_class",
    "memory_static",
    "kubelet_group",
    "policy_group",
)


class NRTIndex:
    """Columns of every node's NUMA zones (available amounts) and node-level free amounts."""

    def __init__(self, nodes: Sequence[NodeSnapshot]) -> None:
        self.nodes = list(nodes)
        zone_lists = [numa_node_list(node) for node in self.nodes]
        count, width = len(self.nodes), max((len(z) for z in zone_lists), default=0) or 1
        self.width = width
        self.resources = sorted({r for zones in zone_lists for z in zones for r in z.resources})
        self.zone_valid = np.zeros((count, width), np.bool_)
        self.zone_numa = np.full((count, width), NO_ZONE, np.int64)
        self.available = {r: np.zeros((count, width), np.int64) for r in self.resources}
        self.has = {r: np.zeros((count, width), np.bool_) for r in self.resources}
        self.visible = np.zeros(count, np.bool_)
        self.single_numa = np.zeros(count, np.bool_)
        self.pod_scope = np.zeros(count, np.bool_)
        self.duplicate_numa = np.zeros(count, np.bool_)
        self.sparse_numa = np.zeros(count, np.bool_)  # an id not below the zone count
        self.unschedulable = np.zeros(count, np.bool_)
        self.koordinator_binds = np.zeros(count, np.bool_)  # a CPU bind policy of its own
        self.crane_nrt = np.zeros(count, np.bool_)  # publishes a Crane NRT
        self.crane_static = np.zeros(count, np.bool_)  # crane cpuManagerPolicy is Static
        self.kubelet_class = np.zeros(count, np.int64)  # whatif_kubelet.kubelet_class
        self.memory_static = np.zeros(count, np.bool_)  # the Static Memory Manager, modelled
        # rows whose kubelets read the same inputs share a number (-1: not modelled); the
        # value keeps the CPU table the key names by identity, so its id is not reused
        self.kubelet_group = np.full(count, -1, np.int64)
        self._kubelet_groups: dict[Hashable, tuple[int, object]] = {}
        self._next_kubelet_group = 0
        self.topology_managers: list[TopologyManagerConfig | None] = [None] * count
        # rows whose nodes share a flavour and a topology manager share a group number
        self.policy_group = np.zeros(count, np.int64)
        self._policy_groups: dict[tuple[Flavour | None, TopologyManagerConfig], int] = {}
        self._free: dict[str, Ints] = {}
        self._on_node: dict[str, Bools] = {}
        for row, node in enumerate(self.nodes):
            self._fill(row, node, zone_lists[row])
        names = [node.name for node in self.nodes]
        self.row_of = {name: row for row, name in enumerate(names)}
        self.name_rank = np.empty(count, np.int64)
        self.name_rank[np.argsort(np.array(names, dtype=object))] = np.arange(count)
        self.flavours = [node.flavour for node in self.nodes]
        self.memo: dict[str, object] = {}

    def copy(self) -> NRTIndex:
        """A working copy `update` may change (place() mutates one row per replica)."""
        clone = object.__new__(NRTIndex)
        clone.__dict__.update(self.__dict__)
        clone.nodes = list(self.nodes)
        clone.topology_managers = list(self.topology_managers)
        clone._policy_groups = dict(self._policy_groups)
        clone._kubelet_groups = dict(self._kubelet_groups)
        for name in ROW_COLUMNS:
            setattr(clone, name, getattr(self, name).copy())
        clone.available = {r: a.copy() for r, a in self.available.items()}
        clone.has = {r: a.copy() for r, a in self.has.items()}
        clone._free = {r: a.copy() for r, a in self._free.items()}
        clone._on_node = {r: a.copy() for r, a in self._on_node.items()}
        return clone

    def refreshed(self, nodes: Sequence[NodeSnapshot]) -> NRTIndex | None:
        """The index of `nodes` made from this one by updating the rows whose node changed
        (a refreshed snapshot keeps its unchanged NodeSnapshots). None when the names or
        their order differ, or a changed node no longer fits the columns: build anew."""
        if len(nodes) != len(self.nodes):
            return None
        if any(new.name != old.name for new, old in zip(nodes, self.nodes, strict=True)):
            return None
        clone = self.copy()
        for row, node in enumerate(nodes):
            if node is not self.nodes[row] and not clone.update(row, node):
                return None
        clone.flavours = [node.flavour for node in clone.nodes]
        # what checks each row against the node it was built from goes on serving
        clone.memo = {k: v.carried() for k, v in self.memo.items() if hasattr(v, "carried")}
        return clone

    def update(self, row: int, node: NodeSnapshot) -> bool:
        """Replace one node's row; False when its zones no longer fit the columns."""
        zones = numa_node_list(node)
        if len(zones) > self.width or any(r not in self.has for z in zones for r in z.resources):
            return False
        self.nodes[row] = node
        self._fill(row, node, zones)
        for name in self._free:
            self._free[name][row] = self._node_free(node, name)
            self._on_node[name][row] = name in node.allocatable
        return True

    def _fill(self, row: int, node: NodeSnapshot, zones: Sequence[NUMANode]) -> None:
        self.zone_valid[row] = False
        self.zone_numa[row] = NO_ZONE
        for name in self.resources:
            self.has[name][row] = False
            self.available[name][row] = 0
        for col, zone in enumerate(zones):
            self.zone_valid[row, col] = True
            self.zone_numa[row, col] = zone.numa_id
            for name, amount in zone.resources.items():
                self.has[name][row, col] = True
                self.available[name][row, col] = amount
        tm = self.topology_managers[row] = resolve_topology_manager(
            node.topology_policies, node.nrt_attributes
        )
        groups = self._policy_groups
        self.policy_group[row] = groups.setdefault((node.flavour, tm), len(groups))
        self.visible[row] = node.flavour in VISIBLE_FLAVOURS
        self.single_numa[row] = tm.policy is TopologyManagerPolicy.SINGLE_NUMA_NODE
        self.pod_scope[row] = tm.scope is TopologyManagerScope.POD
        self.duplicate_numa[row] = len({z.numa_id for z in zones}) != len(zones)
        self.sparse_numa[row] = any(z.numa_id >= len(zones) for z in zones)
        self.unschedulable[row] = node.unschedulable
        self.koordinator_binds[row] = node_cpu_bind_policy(node) != "None"
        self.crane_nrt[row] = node.flavour is Flavour.CRANE
        self.crane_static[row] = node.crane_cpu_manager_policy == "Static"
        known = self.kubelet_class[row] = kubelet_class(node)
        self.memory_static[row] = memory_manager_static(node)
        self.kubelet_group[row] = self._kubelet_group_of(node) if known == KUBELET_MODELLED else -1

    def _kubelet_group_of(self, node: NodeSnapshot) -> int:
        """The number of the nodes whose kubelet reads what `node`'s reads."""
        key = kubelet_node_key(node)
        found = self._kubelet_groups.get(key)
        if found is None or found[1] is not node.cpus:  # new, or an id reused
            found = self._kubelet_groups[key] = (self._next_kubelet_group, node.cpus)
            self._next_kubelet_group += 1
        return found[0]

    @staticmethod
    def _node_free(node: NodeSnapshot, name: str) -> int:
        if name == "pods" and name not in node.allocatable:
            return int(PLENTY)
        return node.allocatable.get(name, 0) - node.requested.get(name, 0)

    def node_free(self, name: str) -> Ints:
        """allocatable - requested of `name` on every node (built on first use)."""
        if name not in self._free:
            self._free[name] = np.array([self._node_free(n, name) for n in self.nodes], np.int64)
            self._on_node[name] = np.array([name in n.allocatable for n in self.nodes], np.bool_)
        return self._free[name]

    def on_node(self, name: str) -> Bools:
        self.node_free(name)
        return self._on_node[name]

    def zone_amounts(self, name: str) -> tuple[Ints, Bools]:
        if name in self.available:
            return self.available[name], self.has[name]
        shape = self.zone_valid.shape
        return np.zeros(shape, np.int64), np.zeros(shape, np.bool_)


@dataclass(frozen=True, slots=True)
class VectorVerdicts:
    """Per node: fits, the raw score (NO_SCORE when none), the chosen NUMA id (-1: none),
    and whether the node must be judged exactly instead."""

    fits: Bools
    score: Ints
    numa: Ints
    exact: Bools


def node_fit(index: NRTIndex, request: Mapping[str, int]) -> Bools:
    """NodeUnschedulable and NodeResourcesFit, as `whatif.systems.node_fit_reasons`."""
    fits = ~index.unschedulable & (index.node_free("pods") >= 1)
    for name, wanted in request.items():
        if wanted > 0 and name != "pods":
            fits &= index.node_free(name) >= wanted
    return fits


def node_fit_refusals(
    index: NRTIndex, request: Mapping[str, int], rows: Ints
) -> tuple[Ints, list[tuple[Reason, ...]]]:
    """`whatif.systems.node_fit_reasons` of each of `rows`, read off the columns (a large
    pod is refused by these filters on thousands of nodes), grouped: per row the
    position of its reasons among the distinct sets of reasons, and those sets."""
    cordoned = index.unschedulable[rows]
    pods_short = np.maximum(1 - index.node_free("pods")[rows], 0)  # PLENTY: not counted
    names = [name for name in sorted(request) if request[name] > 0 and name != "pods"]
    shorts = [request[name] - np.maximum(index.node_free(name)[rows], 0) for name in names]
    # a cordoned row's only reason is the cordon: its shortfalls do not count
    columns = [np.where(cordoned, 0, np.maximum(short, 0)) for short in [pods_short, *shorts]]
    keys = np.stack([cordoned.astype(np.int64), *columns], axis=1)
    distinct, group = distinct_rows(keys)
    shortfalls: dict[tuple[str, int], Reason] = {}  # equal shortfalls share one Reason
    reasons = [_node_fit_reasons(key, names, shortfalls) for key in distinct.tolist()]
    return group, reasons


def distinct_rows(keys: Ints) -> tuple[Ints, Ints]:
    """`np.unique(keys, axis=0, return_inverse=True)` for a 2-D integer array, about ten
    times faster (numpy sorts rows as opaque records; one lexsort of the columns does):
    the distinct rows in ascending order, and each row's position among them."""
    order = np.lexsort(keys.T[::-1])
    ordered = keys[order]
    starts = np.empty(len(order), np.bool_)
    starts[:1] = True
    starts[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    group = np.empty(len(order), np.int64)
    group[order] = np.cumsum(starts) - 1
    return ordered[starts], group


def _node_fit_reasons(
    key: list[int], names: list[str], shortfalls: dict[tuple[str, int], Reason]
) -> tuple[Reason, ...]:
    """The reasons of a `node_fit_refusals` key: cordoned, then pods and each name short."""
    if key[0]:
        return (CORDONED,)
    shorts = [("pods", key[1])] if key[1] > 0 else []
    shorts += [(name, short) for name, short in zip(names, key[2:], strict=True) if short]
    reasons = []
    for short in shorts:
        reason = shortfalls.get(short)
        if reason is None:
            reason = shortfalls[short] = short_on_node(*short)
        reasons.append(reason)
    return tuple(reasons)


def align(
    index: NRTIndex, requests: Mapping[str, int], qos: QoSClass, rows: Bools
) -> tuple[Bools, Ints]:
    """`schedulerplugins.reference.match.align` on every row: does one NUMA zone hold
    everything, and which."""
    mask = index.zone_valid.copy()
    touched = np.zeros(len(rows), np.bool_)
    failed = np.zeros(len(rows), np.bool_)
    for name in sorted(requests):
        wanted = requests[name]
        if wanted == 0:
            continue
        if name not in ALWAYS_ON_NODE:
            failed |= ~index.on_node(name)
        amounts, holders = index.zone_amounts(name)
        holders = holders & index.zone_valid
        skip = ~holders.any(axis=1) if is_host_level(name) else np.zeros(len(rows), np.bool_)
        relaxed = qos is not QoSClass.GUARANTEED and is_numa_affine(name)
        fitting = holders if relaxed else holders & (amounts >= wanted)
        narrowed = mask & fitting
        active = ~skip & ~failed
        failed |= active & ~narrowed.any(axis=1)
        mask = np.where(active[:, None], narrowed, mask)
        touched |= active
    lowest = np.where(mask, index.zone_numa, NO_ZONE).min(axis=1)
    numa = np.where(touched, lowest, 0)
    return rows & ~failed, np.where(rows & ~failed, numa, -1)


def _floor_div(numerator: Ints, denominator: Ints) -> Ints:
    """Exact integer floor division, faster than numpy's: a float guess, then corrected."""
    guess = np.floor(numerator / denominator).astype(np.int64)
    guess += (guess + 1) * denominator <= numerator
    guess -= guess * denominator > numerator
    return guess


def _ratio(strategy: ScoringStrategy, request: int, capacity: Ints) -> Ints:
    safe = np.where(capacity == 0, 1, capacity)
    if strategy is ScoringStrategy.LEAST_ALLOCATED:
        return _floor_div((capacity - request) * MAX_NODE_SCORE, safe)
    return _floor_div(np.full_like(capacity, request * MAX_NODE_SCORE), safe)


def numa_score(index: NRTIndex, requested: Mapping[str, int], conf: NRTMatchConfig) -> Ints | None:
    """`score_numa_nodes` with Least/MostAllocated on every row; None if undefined."""
    shape = index.zone_valid.shape
    total, weights = np.zeros(shape, np.int64), 0
    for name, amount in requested.items():
        amounts, holders = index.zone_amounts(name)
        capacity = np.where(holders, amounts, 0)
        go_capacity = -(-capacity // 1000) if name == "cpu" else capacity
        go_amount = -(-amount // 1000) if name == "cpu" else amount
        usable = (capacity != 0) & (amount <= capacity)
        ratio = _ratio(conf.scoring_strategy, go_amount, go_capacity)
        total += np.where(usable, ratio, 0) * conf.weight(name)
        weights += conf.weight(name)
    if weights == 0:
        return None
    zone_scores = total // weights
    nonzero = np.where(index.zone_valid & (zone_scores != 0), zone_scores, PLENTY)
    smallest = nonzero.min(axis=1)
    return np.where(smallest == PLENTY, 0, smallest)


def _strategy_scores(index: NRTIndex, pod: PodSpec, conf: NRTMatchConfig) -> tuple[Ints, Bools]:
    """Scores of single-numa-node rows, and the rows whose score needs the exact path."""
    count = len(index.nodes)
    undecided = np.zeros(count, np.bool_)
    zeros = np.zeros(count, np.int64)
    scored: dict[tuple[tuple[str, int], ...], Ints | None] = {}

    def score_of(requests: Mapping[str, int]) -> Ints | None:
        """`numa_score`, once per distinct request (a one-container pod asks the same
        at pod and container level)."""
        key = tuple(sorted(requests.items()))
        if key not in scored:
            scored[key] = numa_score(index, requests, conf)
        return scored[key]

    pod_level: Ints | None = zeros
    if index.pod_scope.any():
        pod_level = score_of(effective_request(pod))
    if pod_level is None:
        pod_level, undecided = zeros, index.pod_scope.copy()
    container_level = zeros
    if not index.pod_scope.all():
        containers = pod.init_containers + pod.containers
        per_container = [score_of(c.requests) for c in containers]
        if not containers or any(s is None for s in per_container):
            undecided |= ~index.pod_scope
        else:
            mean = np.sum([s for s in per_container if s is not None], axis=0) / len(containers)
            container_level = np.trunc(mean).astype(np.int64)
    scores = np.where(index.pod_scope, pod_level, container_level)
    return scores, undecided | (scores < 0) | (scores > MAX_NODE_SCORE)


def _filter(index: NRTIndex, pod: PodSpec, members: Bools) -> tuple[Bools, Ints, Bools]:
    """TopologyMatch.Filter on member rows: (fits, chosen NUMA id, needs exact)."""
    count = len(index.nodes)
    numa, exact = np.full(count, -1, np.int64), np.zeros(count, np.bool_)
    if pod.qos_class is QoSClass.BEST_EFFORT and not includes_non_native(pod):
        return members.copy(), numa, exact
    applies = members & index.visible & index.single_numa
    simple = len(pod.containers) == 1 and not pod.init_containers
    exact = applies & (
        index.duplicate_numa | (np.zeros(count, np.bool_) if simple else ~index.pod_scope)
    )
    judged = applies & ~exact
    aligned, chosen = align(index, effective_request(pod), pod.qos_class, judged)
    fits = members & (~judged | aligned)
    return fits, np.where(aligned, chosen, numa), exact


def judge_all(
    index: NRTIndex, pod: PodSpec, members: Bools, conf: NRTMatchConfig, request: Mapping[str, int]
) -> VectorVerdicts:
    """Filter and raw Score of every member row; other rows come back not fitting."""
    fits, numa, exact = _filter(index, pod, members)
    fits &= node_fit(index, request)
    score = np.full(len(index.nodes), NO_SCORE, np.int64)
    if pod.qos_class is not QoSClass.GUARANTEED:
        score[:] = MAX_NODE_SCORE
    elif conf.scoring_strategy in (
        ScoringStrategy.LEAST_NUMA_NODES,
        ScoringStrategy.BALANCED_ALLOCATION,
    ):
        score[:] = 0
        decides = index.visible & (
            index.single_numa | (conf.scoring_strategy is ScoringStrategy.LEAST_NUMA_NODES)
        )
        exact |= members & fits & decides
    else:
        strategy, undecided = _strategy_scores(index, pod, conf)
        single = index.visible & index.single_numa
        score = np.where(single, strategy, 0)
        # NUMA ids not below the zone count: upstream's Score fails (nrt_match.score_node)
        exact |= members & fits & single & (undecided | index.sparse_numa)
    score = np.where(fits & ~exact, score, NO_SCORE)
    return VectorVerdicts(fits & ~exact, score, np.where(fits & ~exact, numa, -1), exact)
