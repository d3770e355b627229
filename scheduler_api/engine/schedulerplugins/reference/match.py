"""scheduler-plugins NodeResourceTopologyMatch: Filter and Score, case for case.

The per-NUMA view and the plugin arguments live in `schedulerplugins.reference.common`, the Score
strategies in `schedulerplugins.reference.scoring`; this module is the Filter and the entry points.

Reproduces pkg/noderesourcetopology (filter.go, score.go, least_numa.go,
*_allocated.go, balanced_allocation.go, numaresources.go, nodeconfig). The per-NUMA
view is each NRT zone's `available`; zones keep the NRT's order because
LeastNUMANodes enumerates combinations by list position. scheduler-plugins never
picks CPUs, so `allocate` returns the same verdict as `evaluate` (cpuset None): the
kubelet decides CPUs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scheduler_api.engine.model.results import PlacementResult, Reason, ReasonCheck, refused
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
    suitable,
)
from scheduler_api.engine.schedulerplugins.reference.scoring import (
    least_numa_container_scope,
    least_numa_pod_scope,
    strategy_score,
)

__all__ = [
    "NRTMatchConfig",
    "ScoringStrategy",
    "align",
    "allocate",
    "container_zones",
    "evaluate",
    "filter_node",
    "filter_skip_note",
    "fixed_score",
    "passed_verdict",
    "resolve_topology_manager",
    "score_node",
]
from scheduler_api.engine.model.snapshot import (
    NodeSnapshot,
    PodSpec,
    QoSClass,
    ReservationSnapshot,
    TopologyManagerPolicy,
    TopologyManagerScope,
)

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


def filter_skip_note(
    node: NodeSnapshot, pod: PodSpec, tm: TopologyManagerConfig | None = None
) -> str | None:
    """Why Filter lets `node` pass without looking at its zones; None when it looks.

    `tm`: the node's resolved topology manager settings, when the caller has them."""
    if pod.qos_class is QoSClass.BEST_EFFORT and not includes_non_native(pod):
        return "BestEffort pod without devices: not checked"
    if node.flavour not in VISIBLE_FLAVOURS:
        return "no NodeResourceTopology: not checked"
    conf = tm or resolve_topology_manager(node.topology_policies, node.nrt_attributes)
    if conf.policy is not TopologyManagerPolicy.SINGLE_NUMA_NODE:
        return f"policy {conf.policy}: filter does not apply"
    return None


def filter_node(node: NodeSnapshot, pod: PodSpec) -> PlacementResult:
    """TopologyMatch.Filter: only single-numa-node nodes can refuse a pod."""
    note = filter_skip_note(node, pod)
    if note is not None:
        return PlacementResult(fits=True, notes=(note,))
    conf = resolve_topology_manager(node.topology_policies, node.nrt_attributes)
    if conf.scope is TopologyManagerScope.POD:
        return _pod_scope(node, pod)
    return _container_scope(node, pod)


# --- Score and entry points ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NodeScore:
    score: int
    numa_zones: tuple[int, ...] = ()
    note: str = ""
    failure: str = ""  # the plugin's Score itself fails (the scheduler would not go on)


def fixed_score(
    node: NodeSnapshot,
    pod: PodSpec,
    conf: NRTMatchConfig,
    tm: TopologyManagerConfig | None = None,
) -> NodeScore | None:
    """The score Score gives `node` without looking at its zones, with why; None when it looks."""
    if pod.qos_class is not QoSClass.GUARANTEED:
        return NodeScore(MAX_NODE_SCORE, note="non-Guaranteed pod: every node scores 100")
    if node.flavour not in VISIBLE_FLAVOURS:
        return NodeScore(0, note="no NodeResourceTopology: score 0")
    if conf.scoring_strategy is ScoringStrategy.LEAST_NUMA_NODES:
        return None
    tm = tm or resolve_topology_manager(node.topology_policies, node.nrt_attributes)
    if tm.policy is not TopologyManagerPolicy.SINGLE_NUMA_NODE:
        return NodeScore(0, note=f"policy {tm.policy}: score 0")
    return None


def score_node(node: NodeSnapshot, pod: PodSpec, conf: NRTMatchConfig) -> NodeScore:
    """TopologyMatch.Score: raw score before normalisation (may be invalid, see evaluate)."""
    fixed = fixed_score(node, pod, conf)
    if fixed is not None:
        return fixed
    tm = resolve_topology_manager(node.topology_policies, node.nrt_attributes)
    if conf.scoring_strategy is ScoringStrategy.LEAST_NUMA_NODES:
        if tm.scope is TopologyManagerScope.POD:
            return NodeScore(*least_numa_pod_scope(node, pod))
        return NodeScore(*least_numa_container_scope(node, pod))
    zones = numa_node_list(node)
    beyond = [z.numa_id for z in zones if z.numa_id >= len(zones)]
    if beyond:
        return NodeScore(0, failure=_ids_beyond_the_zones(beyond[0], len(zones)))
    return NodeScore(strategy_score(node, pod, tm.scope, conf))


def _ids_beyond_the_zones(numa_id: int, count: int) -> str:
    """scoreForEachNUMANode stores each NUMA node's score at index NUMAID of a slice as
    long as the zone list: an id not below the count is an index out of range, a panic
    that takes the scheduler down (kube-scheduler re-raises it)."""
    return (
        f"scheduler-plugins' Score would panic: NUMA id {numa_id} is not below the number "
        f"of NUMA zones ({count})"
    )


def passed_verdict(
    node: NodeSnapshot,
    pod: PodSpec,
    conf: NRTMatchConfig,
    score: int,
    numa_zones: tuple[int, ...],
    tm: TopologyManagerConfig | None = None,
) -> PlacementResult:
    """`evaluate`'s answer for a node already known to pass with `score` (from columns):
    the same notes, without walking the zones again."""
    filter_note = filter_skip_note(node, pod, tm)
    fixed = fixed_score(node, pod, conf, tm)
    notes: tuple[str, ...] = (filter_note,) if filter_note else ()
    notes += (fixed.note,) if fixed is not None and fixed.note else ()
    return PlacementResult(True, score, numa_zones=numa_zones, notes=notes)


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
    if scored.failure:
        failed = Reason(ReasonCheck.SCHEDULER_ERROR, message=scored.failure)
        return PlacementResult(True, None, (failed,), zones, notes=notes)
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
