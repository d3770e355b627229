"""scheduler-plugins NodeResourceTopologyMatch: Filter and Score, case for case.

Reproduces pkg/noderesourcetopology (filter.go, score.go, least_numa.go,
*_allocated.go, balanced_allocation.go, numaresources.go, nodeconfig). The per-NUMA
view is each NRT zone's `available`; zones keep the NRT's order because
LeastNUMANodes enumerates combinations by list position. scheduler-plugins never
picks CPUs, so `allocate` returns the same verdict as `evaluate` (cpuset None): the
kubelet decides CPUs.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from itertools import combinations
from types import MappingProxyType

from scheduler_api.engine.results import PlacementResult, Reason, ReasonCheck, refused
from scheduler_api.engine.snapshot import (
    Flavour,
    NodeSnapshot,
    PodSpec,
    QoSClass,
    ReservationSnapshot,
    TopologyManagerPolicy,
    TopologyManagerScope,
)

MAX_NODE_SCORE = 100
MAX_NUMA_ID = 64  # createNUMANodeList drops ids above this (64 itself would panic upstream)
HIGHEST_NUMA_ID = 8  # normalizeScore divides by this constant, not by maxNUMANodes
MAX_DISTANCE = 255
DEFAULT_MAX_NUMA_NODES = 8
LIMIT_NUMA_NODES = 1024
GO_MIN_INT64 = -(2**63)  # what Go's int64(NaN) yields on amd64
# util.ResourceList(nodeInfo.Allocatable) always carries these keys, even at zero.
ALWAYS_ON_NODE = frozenset({"cpu", "memory", "pods", "ephemeral-storage"})

# NRT flavours the plugin can read: Koordinator's v1alpha1 objects are served as v1alpha2.
VISIBLE_FLAVOURS = frozenset(
    {Flavour.UPSTREAM_V1ALPHA1, Flavour.UPSTREAM_V1ALPHA2, Flavour.KOORDINATOR}
)

POLICY_FROM_LEGACY = {
    "SingleNUMANodePodLevel": ("single-numa-node", "pod"),
    "SingleNUMANodeContainerLevel": ("single-numa-node", "container"),
    "BestEffortPodLevel": ("best-effort", "pod"),
    "BestEffortContainerLevel": ("best-effort", "container"),
    "RestrictedPodLevel": ("restricted", "pod"),
    "RestrictedContainerLevel": ("restricted", "container"),
}


SCOPE_VALUES = frozenset(s.value for s in TopologyManagerScope)
POLICY_VALUES = frozenset(p.value for p in TopologyManagerPolicy)


class ScoringStrategy(StrEnum):
    LEAST_ALLOCATED = "LeastAllocated"
    MOST_ALLOCATED = "MostAllocated"
    BALANCED_ALLOCATION = "BalancedAllocation"
    LEAST_NUMA_NODES = "LeastNUMANodes"


@dataclass(frozen=True, slots=True)
class NRTMatchConfig:
    """NodeResourceTopologyMatchArgs.scoringStrategy (defaults as SetDefaults_...)."""

    scoring_strategy: ScoringStrategy = ScoringStrategy.LEAST_ALLOCATED
    resource_weights: Mapping[str, int] = field(
        default_factory=lambda: MappingProxyType({"cpu": 1, "memory": 1})
    )

    def weight(self, resource: str) -> int:
        """resourceToWeightMap.weight: unknown or non-positive weights count as 1."""
        value = self.resource_weights.get(resource, 1)
        return value if value >= 1 else 1


@dataclass(frozen=True, slots=True)
class TopologyManagerConfig:
    policy: TopologyManagerPolicy = TopologyManagerPolicy.NONE
    scope: TopologyManagerScope = TopologyManagerScope.CONTAINER
    max_numa_nodes: int = DEFAULT_MAX_NUMA_NODES


def resolve_topology_manager(
    topology_policies: Sequence[str], attributes: Mapping[str, str]
) -> TopologyManagerConfig:
    """nodeconfig.TopologyManagerFromNodeResourceTopology: defaults, policies[0], attributes."""
    policy, scope, max_numa = "none", "container", DEFAULT_MAX_NUMA_NODES
    if topology_policies and topology_policies[0] in POLICY_FROM_LEGACY:
        policy, scope = POLICY_FROM_LEGACY[topology_policies[0]]
    if attributes.get("topologyManagerScope") in SCOPE_VALUES:
        scope = attributes["topologyManagerScope"]
    if attributes.get("topologyManagerPolicy") in POLICY_VALUES:
        policy = attributes["topologyManagerPolicy"]
    raw_max = attributes.get("topologyManagerMaxNUMANodes", "")
    if raw_max.lstrip("+-").isdigit() and int(raw_max) > 1:
        max_numa = min(int(raw_max), LIMIT_NUMA_NODES)
    return TopologyManagerConfig(
        TopologyManagerPolicy(policy), TopologyManagerScope(scope), max_numa
    )


@dataclass(slots=True)
class NUMANode:
    """A mutable working copy of one zone (the filter subtracts container requests)."""

    numa_id: int
    resources: dict[str, int]
    costs: Mapping[int, int]


def numa_node_list(node: NodeSnapshot) -> list[NUMANode]:
    """createNUMANodeList: NUMA zones in NRT order, resources = zone `available`."""
    result = []
    for zone in node.zones:
        if zone.zone_type != "Node" or not 0 <= zone.numa_id < MAX_NUMA_ID:
            continue
        available = {name: amounts.available for name, amounts in zone.resources.items()}
        costs = {k: v for k, v in zone.costs.items() if 0 <= k <= MAX_NUMA_ID}
        result.append(NUMANode(zone.numa_id, available, costs))
    return result


# --- resource classification (k8s v1helper) -------------------------------------------


def is_native(resource: str) -> bool:
    return "/" not in resource or "kubernetes.io/" in resource


def is_numa_affine(resource: str) -> bool:
    return resource in ("cpu", "memory") or resource.startswith("hugepages-")


def is_host_level(resource: str) -> bool:
    return resource in ("ephemeral-storage", "storage") or not is_native(resource)


def go_value(resource: str, amount: int) -> int:
    """Quantity.Value(): cpu millicores round up to whole cores; other units are exact."""
    return -(-amount // 1000) if resource == "cpu" else amount


def includes_non_native(pod: PodSpec) -> bool:
    containers = pod.init_containers + pod.containers
    return any(not is_native(r) for c in containers for r in c.requests)


def effective_request(pod: PodSpec) -> dict[str, int]:
    """util.GetPodEffectiveRequest: max(sum of app containers, largest init); no overhead."""
    result: dict[str, int] = {}
    for container in pod.containers:
        for name, amount in container.requests.items():
            result[name] = result.get(name, 0) + amount
    for container in pod.init_containers:
        for name, amount in container.requests.items():
            result[name] = max(result.get(name, amount), amount)
    return result


def suitable(qos: QoSClass, resource: str, wanted: int, numa_amount: int) -> bool:
    """isResourceSetSuitable: non-Guaranteed pods never need exclusive cpu/memory/hugepages."""
    if qos is not QoSClass.GUARANTEED and is_numa_affine(resource):
        return True
    return numa_amount >= wanted


# --- Filter ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Alignment:
    """resourcesAvailableInAnyNUMANodes: the NUMA kubelet would pick, or why none fits."""

    numa_id: int | None
    reasons: tuple[Reason, ...] = ()


def _shortfalls(
    nodes: Sequence[NUMANode], candidates: set[int], resource: str, wanted: int
) -> tuple[Reason, ...]:
    reasons = []
    for numa in nodes:
        if numa.numa_id in candidates:
            short = wanted - numa.resources.get(resource, 0)
            reasons.append(
                Reason(ReasonCheck.SINGLE_NUMA_NODE, numa.numa_id, resource, max(short, 0))
            )
    return tuple(reasons) or (Reason(ReasonCheck.SINGLE_NUMA_NODE, None, resource, wanted),)


def align(
    nodes: Sequence[NUMANode], requests: Mapping[str, int], qos: QoSClass, node: NodeSnapshot
) -> Alignment:
    """AND the per-resource NUMA masks; the lowest surviving id is kubelet's choice.

    A mask of None stands for Go's filled bitmask (every bit set): its lowest bit is 0
    even when no NUMA 0 exists, exactly as upstream.
    """
    mask: set[int] | None = None
    for resource in sorted(requests):
        wanted = requests[resource]
        if wanted == 0:
            continue
        if resource not in node.allocatable and resource not in ALWAYS_ON_NODE:
            return Alignment(None, (Reason(ReasonCheck.MISSING_ON_NODE, None, resource, wanted),))
        holders = [n for n in nodes if resource in n.resources]
        if not holders and is_host_level(resource):
            continue
        fitting = {
            n.numa_id for n in holders if suitable(qos, resource, wanted, n.resources[resource])
        }
        before = {n.numa_id for n in nodes} if mask is None else mask
        mask = fitting if mask is None else mask & fitting
        if not mask:
            return Alignment(None, _shortfalls(nodes, before, resource, wanted))
    return Alignment(0 if mask is None else min(mask))


def _subtract(
    nodes: Sequence[NUMANode], numa_id: int, qos: QoSClass, requests: Mapping[str, int]
) -> Reason | None:
    """subtractResourcesFromNUMANodeList: only what kubelet would hand out exclusively."""
    for numa in nodes:
        if numa.numa_id != numa_id:
            continue
        for resource, amount in requests.items():
            if (qos is not QoSClass.GUARANTEED and is_numa_affine(resource)) or amount == 0:
                continue
            if resource not in numa.resources:
                continue
            left = numa.resources[resource] - amount
            if left < 0:
                return Reason(
                    ReasonCheck.SINGLE_NUMA_NODE,
                    numa_id,
                    resource,
                    -left,
                    message="inconsistent resource accounting",
                )
            numa.resources[resource] = left
    return None


def container_zones(node: NodeSnapshot, pod: PodSpec) -> list[int] | PlacementResult:
    """Container scope: the NUMA id kubelet would pick for each app container, in order,
    each seeing what the ones before took; a refusal when one cannot be aligned."""
    nodes, qos = numa_node_list(node), pod.qos_class
    for init in pod.init_containers:
        found = align(nodes, init.requests, qos, node)
        if found.numa_id is None:
            return _cannot_align(found, init.name, "cannot align init container")
    chosen: list[int] = []
    for container in pod.containers:
        found = align(nodes, container.requests, qos, node)
        if found.numa_id is None:
            return _cannot_align(found, container.name, "cannot align container")
        error = _subtract(nodes, found.numa_id, qos, container.requests)
        if error is not None:
            return refused(error)
        chosen.append(found.numa_id)
    return chosen


def _container_scope(node: NodeSnapshot, pod: PodSpec) -> PlacementResult:
    chosen = container_zones(node, pod)
    if isinstance(chosen, PlacementResult):
        return chosen
    return PlacementResult(fits=True, numa_zones=tuple(sorted(set(chosen))))


def _cannot_align(found: Alignment, container: str | None, message: str) -> PlacementResult:
    reasons = tuple(
        Reason(r.check, r.numa_id, r.resource, r.short_by, container, message)
        for r in found.reasons
    )
    return refused(*reasons)


def _pod_scope(node: NodeSnapshot, pod: PodSpec) -> PlacementResult:
    found = align(numa_node_list(node), effective_request(pod), pod.qos_class, node)
    if found.numa_id is None:
        return _cannot_align(found, None, "cannot align pod")
    return PlacementResult(fits=True, numa_zones=(found.numa_id,))


def filter_node(node: NodeSnapshot, pod: PodSpec) -> PlacementResult:
    """TopologyMatch.Filter: only single-numa-node nodes can refuse a pod."""
    if pod.qos_class is QoSClass.BEST_EFFORT and not includes_non_native(pod):
        return PlacementResult(fits=True, notes=("BestEffort pod without devices: not checked",))
    if node.flavour not in VISIBLE_FLAVOURS:
        return PlacementResult(fits=True, notes=("no NodeResourceTopology: not checked",))
    conf = resolve_topology_manager(node.topology_policies, node.nrt_attributes)
    if conf.policy is not TopologyManagerPolicy.SINGLE_NUMA_NODE:
        return PlacementResult(fits=True, notes=(f"policy {conf.policy}: filter does not apply",))
    if conf.scope is TopologyManagerScope.POD:
        return _pod_scope(node, pod)
    return _container_scope(node, pod)


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


def _strategy_score(
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


# --- Score and entry points ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NodeScore:
    score: int
    numa_zones: tuple[int, ...] = ()
    note: str = ""


def score_node(node: NodeSnapshot, pod: PodSpec, conf: NRTMatchConfig) -> NodeScore:
    """TopologyMatch.Score: raw score before normalisation (may be invalid, see evaluate)."""
    if pod.qos_class is not QoSClass.GUARANTEED:
        return NodeScore(MAX_NODE_SCORE, note="non-Guaranteed pod: every node scores 100")
    if node.flavour not in VISIBLE_FLAVOURS:
        return NodeScore(0, note="no NodeResourceTopology: score 0")
    tm = resolve_topology_manager(node.topology_policies, node.nrt_attributes)
    if conf.scoring_strategy is ScoringStrategy.LEAST_NUMA_NODES:
        if tm.scope is TopologyManagerScope.POD:
            return NodeScore(*least_numa_pod_scope(node, pod))
        return NodeScore(*least_numa_container_scope(node, pod))
    if tm.policy is not TopologyManagerPolicy.SINGLE_NUMA_NODE:
        return NodeScore(0, note=f"policy {tm.policy}: score 0")
    return NodeScore(_strategy_score(node, pod, tm.scope, conf))


def evaluate(
    node: NodeSnapshot,
    pod: PodSpec,
    *,
    config: NRTMatchConfig | None = None,
    reservations: Sequence[ReservationSnapshot] = (),
) -> PlacementResult:
    """Filter, then Score the nodes that pass. `reservations` is ignored (no such concept).

    A score outside 0-100 (BalancedAllocation with one resource: NaN) makes the real
    scheduler fail the whole cycle; it is reported as score None with a reason.
    """
    conf = config or NRTMatchConfig()
    verdict = filter_node(node, pod)
    if not verdict.fits:
        return verdict
    scored = score_node(node, pod, conf)
    notes = verdict.notes + ((scored.note,) if scored.note else ())
    zones = verdict.numa_zones or scored.numa_zones
    if not 0 <= scored.score <= MAX_NODE_SCORE:
        undefined = Reason(
            ReasonCheck.SCORE_UNDEFINED,
            message=f"plugin returns an invalid score {scored.score}",
        )
        return PlacementResult(True, None, (undefined,), zones, notes=notes)
    return PlacementResult(True, scored.score, numa_zones=zones, notes=notes)


def allocate(
    node: NodeSnapshot,
    pod: PodSpec,
    *,
    config: NRTMatchConfig | None = None,
    reservations: Sequence[ReservationSnapshot] = (),
) -> PlacementResult:
    """scheduler-plugins writes nothing and picks no CPUs: same as `evaluate`."""
    return evaluate(node, pod, config=config, reservations=reservations)
