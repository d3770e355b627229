"""scheduler-plugins NodeResourceTopologyMatch Score strategies.

Reproduces score.go, least_allocated.go, most_allocated.go, balanced_allocation.go and
least_numa.go on the per-NUMA view of `schedulerplugins.reference.common`; raw scores
before normalisation.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Mapping, Sequence
from itertools import combinations
from types import MappingProxyType

from scheduler_api.engine.model.snapshot import (
    NodeSnapshot,
    PodSpec,
    QoSClass,
    TopologyManagerScope,
)
from scheduler_api.engine.schedulerplugins.reference.common import (
    GO_MIN_INT64,
    HIGHEST_NUMA_ID,
    MAX_DISTANCE,
    MAX_NODE_SCORE,
    NRTMatchConfig,
    NUMANode,
    ScoringStrategy,
    effective_request,
    go_value,
    numa_node_list,
    suitable,
)

# --- Score strategies --------------------------------------------------------------------

ScoreFn = Callable[[Mapping[str, int], Mapping[str, int], NRTMatchConfig], int]


def _weighted_mean(
    requested: Mapping[str, int],
    numa: Mapping[str, int],
    conf: NRTMatchConfig,
    ratio: Callable[[int, int], int],
) -> int:
    """Weighted mean of ratio(request, available) over requested resources, as both
    allocation strategies compute it; a request that does not fit scores 0."""
    total = weights = 0
    for resource, amount in requested.items():
        capacity = numa.get(resource, 0)
        score = 0
        if capacity != 0 and amount <= capacity:
            score = ratio(go_value(resource, amount), go_value(resource, capacity))
        total += score * conf.weight(resource)
        weights += conf.weight(resource)
    return total // weights if weights else GO_MIN_INT64


def least_allocated(
    requested: Mapping[str, int], numa: Mapping[str, int], conf: NRTMatchConfig
) -> int:
    """leastAllocatedScoreStrategy: weighted mean of (avail - req) * 100 / avail."""
    return _weighted_mean(
        requested, numa, conf, lambda req, cap: (cap - req) * MAX_NODE_SCORE // cap
    )


def most_allocated(
    requested: Mapping[str, int], numa: Mapping[str, int], conf: NRTMatchConfig
) -> int:
    """mostAllocatedScoreStrategy: weighted mean of req * 100 / avail."""
    return _weighted_mean(requested, numa, conf, lambda req, cap: req * MAX_NODE_SCORE // cap)


def gonum_variance(values: Sequence[float]) -> float:
    """gonum stat.Variance (unweighted, n-1); NaN for a single value, as upstream."""
    if not values:
        return math.nan
    mean = sum(values) / len(values)
    ss = compensation = 0.0
    for value in values:
        d = value - mean
        ss += d * d
        compensation += d
    denominator = len(values) - 1
    if denominator == 0:
        return math.nan
    return (ss - compensation * compensation / len(values)) / denominator


def go_int64(value: float) -> int:
    """Go's int64(float64) on amd64: truncation, and the min int64 for NaN or overflow."""
    if math.isnan(value) or not -(2.0**63) <= value < 2.0**63:
        return GO_MIN_INT64
    return int(value)


def balanced_allocation(
    requested: Mapping[str, int], numa: Mapping[str, int], conf: NRTMatchConfig
) -> int:
    """balancedAllocationScoreStrategy: (1 - sample variance of req/avail) * 100."""
    fractions = []
    for resource, amount in requested.items():
        capacity = go_value(resource, numa.get(resource, 0))
        fraction = 1.0 if capacity == 0 else go_value(resource, amount) / capacity
        if fraction > 1:
            return 0
        fractions.append(fraction)
    return go_int64((1 - gonum_variance(fractions)) * MAX_NODE_SCORE)


STRATEGIES: Mapping[ScoringStrategy, ScoreFn] = MappingProxyType(
    {
        ScoringStrategy.LEAST_ALLOCATED: least_allocated,
        ScoringStrategy.MOST_ALLOCATED: most_allocated,
        ScoringStrategy.BALANCED_ALLOCATION: balanced_allocation,
    }
)


def score_numa_nodes(
    requested: Mapping[str, int], nodes: Sequence[NUMANode], fn: ScoreFn, conf: NRTMatchConfig
) -> int:
    """scoreForEachNUMANode: the first score, then the smallest non-zero one."""
    minimum = 0
    for numa in nodes:
        score = fn(requested, numa.resources, conf)
        if minimum == 0 or (score != 0 and score < minimum):
            minimum = score
    return minimum


def strategy_score(
    node: NodeSnapshot, pod: PodSpec, scope: TopologyManagerScope, conf: NRTMatchConfig
) -> int:
    fn = STRATEGIES[conf.scoring_strategy]
    nodes = numa_node_list(node)
    if scope is TopologyManagerScope.POD:
        return score_numa_nodes(effective_request(pod), nodes, fn, conf)
    containers = pod.init_containers + pod.containers
    scores = [float(score_numa_nodes(c.requests, nodes, fn, conf)) for c in containers]
    return go_int64(sum(scores) / len(scores)) if scores else GO_MIN_INT64


# --- LeastNUMANodes --------------------------------------------------------------------


def _float32(value: float) -> float:
    return float(struct.unpack("f", struct.pack("f", value))[0])


def avg_distance(nodes: Sequence[NUMANode], combo: Sequence[int]) -> float:
    """nodesAvgDistance over ordered pairs including self, as float32; 255 when unknown."""
    total = sum(nodes[i].costs.get(nodes[j].numa_id, MAX_DISTANCE) for i in combo for j in combo)
    return _float32(total / (len(combo) * len(combo)))


def min_avg_distance(nodes: Sequence[NUMANode], combos: Sequence[Sequence[int]]) -> float:
    """minAvgDistanceInCombinations: the smallest mean distance, starting from 255."""
    return min([float(MAX_DISTANCE), *(avg_distance(nodes, c) for c in combos)])


def _combo_fits(
    nodes: Sequence[NUMANode], combo: Sequence[int], requests: Mapping[str, int], qos: QoSClass
) -> bool:
    """isValidCombineResources (every zone has every requested name) + checkResourcesFit."""
    if any(name not in nodes[i].resources for i in combo for name in requests):
        return False
    for resource, amount in requests.items():
        if amount == 0:
            continue
        pooled = sum(nodes[i].resources.get(resource, 0) for i in combo)
        if not suitable(qos, resource, amount, pooled):
            return False
    return True


def numa_nodes_required(
    nodes: Sequence[NUMANode], requests: Mapping[str, int], qos: QoSClass
) -> tuple[tuple[int, ...], bool] | None:
    """numaNodesRequired: the fewest zones that fit, preferring the lowest mean distance.

    Returns (NUMA ids, is_min_distance) or None when nothing fits. Combinations are
    over list positions in lexicographic order, like gonum's combin.Combinations.
    """
    for size in range(1, len(nodes) + 1):
        combos = list(combinations(range(len(nodes)), size))
        best_possible = min_avg_distance(nodes, combos)
        chosen: tuple[int, ...] | None = None
        chosen_distance = 256.0
        for combo in combos:
            if not _combo_fits(nodes, combo, requests, qos):
                continue
            distance = avg_distance(nodes, combo)
            if distance == best_possible:
                return tuple(sorted(nodes[i].numa_id for i in combo)), True
            if distance < chosen_distance:
                chosen, chosen_distance = combo, distance
        if chosen is not None:
            return tuple(sorted(nodes[i].numa_id for i in chosen)), False
    return None


def least_numa_score(count: int, is_min_distance: bool) -> int:
    """normalizeScore: 100 - count * 12 (+ 6 for the minimal distance); 8 is a constant."""
    step = MAX_NODE_SCORE // HIGHEST_NUMA_ID
    score = MAX_NODE_SCORE - count * step
    return score + step // 2 if is_min_distance else score


def only_non_numa(nodes: Sequence[NUMANode], requests: Mapping[str, int]) -> bool:
    return not any(name in n.resources for name in requests for n in nodes)


def subtract_from_numas(
    requests: Mapping[str, int], nodes: list[NUMANode], numa_ids: Sequence[int]
) -> None:
    """subtractFromNUMAs; upstream indexes the list by NUMA id, not by position.

    With non-sequential ids the wrong zone is debited (and an id past the end would
    panic upstream); reproduced, skipping out-of-range ids.
    """
    for resource, amount in requests.items():
        left = amount
        for index in numa_ids:
            if left == 0:
                break
            if index >= len(nodes) or resource not in nodes[index].resources:
                continue
            available = nodes[index].resources[resource]
            taken = min(left, available)
            nodes[index].resources[resource] = available - taken
            left -= taken


def least_numa_pod_scope(node: NodeSnapshot, pod: PodSpec) -> tuple[int, tuple[int, ...]]:
    nodes, requests = numa_node_list(node), effective_request(pod)
    if only_non_numa(nodes, requests):
        return MAX_NODE_SCORE, ()
    found = numa_nodes_required(nodes, requests, pod.qos_class)
    if found is None:
        return 0, ()
    return least_numa_score(len(found[0]), found[1]), found[0]


def least_numa_container_scope(node: NodeSnapshot, pod: PodSpec) -> tuple[int, tuple[int, ...]]:
    nodes, qos = numa_node_list(node), pod.qos_class
    widest, all_min = 0, True
    used: set[int] = set()
    for container in pod.init_containers + pod.containers:
        if only_non_numa(nodes, container.requests):
            continue
        found = numa_nodes_required(nodes, container.requests, qos)
        if found is None:
            return 0, ()
        all_min = all_min and found[1]
        widest = max(widest, len(found[0]))
        used.update(found[0])
        subtract_from_numas(container.requests, nodes, found[0])
    if widest == 0:
        return MAX_NODE_SCORE, ()
    return least_numa_score(widest, all_min), tuple(sorted(used))
