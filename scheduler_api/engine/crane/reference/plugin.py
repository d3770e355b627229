"""crane-scheduler NodeResourceTopologyMatch: Filter, Score and the topology-result annotation.

Reproduces gocrane/crane-scheduler pkg/plugins/noderesourcetopology (filter.go,
helper.go, scorer.go, reserver.go, binder.go). Crane's per-zone view is the zone's
`allocatable` minus what the topology-result annotations of pods already on the node
claim there. The scheduler only chooses zones; crane-agent picks the CPUs, so no
cpuset is ever returned.

crane-scheduler is built with Go 1.17, whose `sort.Slice` is not stable: ties between
zones with equal free CPU are ordered exactly as that implementation orders them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, MutableSequence, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from scheduler_api.engine.model.results import (
    PlacementResult,
    QuantityFormat,
    Reason,
    ReasonCheck,
    format_quantity,
    refused,
)
from scheduler_api.engine.model.snapshot import (
    ANN_CRANE_RESULT,
    AllocationSource,
    CraneCPUPolicy,
    Flavour,
    NodeSnapshot,
    PodSpec,
    ReservationSnapshot,
)

MAX_NODE_SCORE = 100
ERR_NUMA_NOT_ENOUGH = "node(s) had insufficient resource of NUMA node"
ERR_NO_NRT = "node(s) failed to get NRT"
ERR_NIL_MAP_PANIC = (
    "crane-scheduler would panic (assignment to entry in nil map) placing a scalar resource"
)
FIXED_RESOURCES = ("cpu", "memory", "ephemeral-storage")
# Filter passes a pod that is not topology-aware even when no zone has anything left to
# give it; its topology-result is then empty, and the pod never lands: Reserve fails
# with this error, or, with other feasible nodes, Score divides by zero before it.
ERR_EMPTY_RESULT = (
    "node(s) topology result is empty: Reserve fails (Score divides by zero first when "
    "other nodes are feasible)"
)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class CraneConfig:
    """NodeResourceTopologyMatchArgs.topologyAwareResources (default ["cpu"])."""

    topology_aware_resources: frozenset[str] = frozenset({"cpu"})


# --- Go 1.17 sort.Slice ----------------------------------------------------------------


def _insertion_sort(data: MutableSequence[T], less: Callable[[T, T], bool], a: int, b: int) -> None:
    for i in range(a + 1, b):
        j = i
        while j > a and less(data[j], data[j - 1]):
            data[j], data[j - 1] = data[j - 1], data[j]
            j -= 1


def _sift_down(
    data: MutableSequence[T], less: Callable[[T, T], bool], lo: int, hi: int, first: int
) -> None:
    root = lo
    while True:
        child = 2 * root + 1
        if child >= hi:
            return
        if child + 1 < hi and less(data[first + child], data[first + child + 1]):
            child += 1
        if not less(data[first + root], data[first + child]):
            return
        data[first + root], data[first + child] = data[first + child], data[first + root]
        root = child


def _heap_sort(data: MutableSequence[T], less: Callable[[T, T], bool], a: int, b: int) -> None:
    first, hi = a, b - a
    for i in range((hi - 1) // 2, -1, -1):
        _sift_down(data, less, i, hi, first)
    for i in range(hi - 1, -1, -1):
        data[first], data[first + i] = data[first + i], data[first]
        _sift_down(data, less, 0, i, first)


def _median_of_three(
    data: MutableSequence[T], less: Callable[[T, T], bool], m1: int, m0: int, m2: int
) -> None:
    if less(data[m1], data[m0]):
        data[m1], data[m0] = data[m0], data[m1]
    if less(data[m2], data[m1]):
        data[m2], data[m1] = data[m1], data[m2]
        if less(data[m1], data[m0]):
            data[m1], data[m0] = data[m0], data[m1]


def _do_pivot(
    data: MutableSequence[T], less: Callable[[T, T], bool], lo: int, hi: int
) -> tuple[int, int]:
    """doPivot_func from Go 1.17 sort/zfuncversion.go, line for line."""
    m = (lo + hi) >> 1
    if hi - lo > 40:
        s = (hi - lo) // 8
        _median_of_three(data, less, lo, lo + s, lo + 2 * s)
        _median_of_three(data, less, m, m - s, m + s)
        _median_of_three(data, less, hi - 1, hi - 1 - s, hi - 1 - 2 * s)
    _median_of_three(data, less, lo, m, hi - 1)
    pivot, a, c = lo, lo + 1, hi - 1

    def lt(i: int, j: int) -> bool:
        return less(data[i], data[j])

    while a < c and lt(a, pivot):
        a += 1
    b = a
    while True:
        while b < c and not lt(pivot, b):
            b += 1
        while b < c and lt(pivot, c - 1):
            c -= 1
        if b >= c:
            break
        data[b], data[c - 1] = data[c - 1], data[b]
        b, c = b + 1, c - 1
    protect = hi - c < 5
    if not protect and hi - c < (hi - lo) // 4:
        dups = 0
        if not lt(pivot, hi - 1):
            data[c], data[hi - 1] = data[hi - 1], data[c]
            c, dups = c + 1, dups + 1
        if not lt(b - 1, pivot):
            b, dups = b - 1, dups + 1
        if not lt(m, pivot):
            data[m], data[b - 1] = data[b - 1], data[m]
            b, dups = b - 1, dups + 1
        protect = dups > 1
    if protect:
        while True:
            while a < b and not lt(b - 1, pivot):
                b -= 1
            while a < b and lt(a, pivot):
                a += 1
            if a >= b:
                break
            data[a], data[b - 1] = data[b - 1], data[a]
            a, b = a + 1, b - 1
    data[pivot], data[b - 1] = data[b - 1], data[pivot]
    return b - 1, c


def _quick_sort(
    data: MutableSequence[T], less: Callable[[T, T], bool], a: int, b: int, depth: int
) -> None:
    while b - a > 12:
        if depth == 0:
            _heap_sort(data, less, a, b)
            return
        depth -= 1
        mlo, mhi = _do_pivot(data, less, a, b)
        if mlo - a < b - mhi:
            _quick_sort(data, less, a, mlo, depth)
            a = mhi
        else:
            _quick_sort(data, less, mhi, b, depth)
            b = mlo
    if b - a > 1:
        for i in range(a + 6, b):  # a Shell sort pass with gap 6: why ties move
            if less(data[i], data[i - 6]):
                data[i], data[i - 6] = data[i - 6], data[i]
        _insertion_sort(data, less, a, b)


def go117_sort_slice(data: MutableSequence[T], less: Callable[[T, T], bool]) -> None:
    """Go 1.17's sort.Slice (quickSort_func), including its unstable tie handling."""
    depth, n = 0, len(data)
    while n > 0:
        depth, n = depth + 1, n >> 1
    _quick_sort(data, less, 0, len(data), depth * 2)


# --- pod and zone views --------------------------------------------------------------------


def guaranteed_cpus(requests: Mapping[str, int], limits: Mapping[str, int]) -> int:
    """GuaranteedCPUs: whole cores when cpu request == limit and is an integer, else 0."""
    cpu = requests.get("cpu", 0)
    if cpu != limits.get("cpu", 0) or cpu % 1000 != 0:
        return 0
    return cpu // 1000


def target_containers(pod: PodSpec, conf: CraneConfig) -> tuple[int, ...]:
    """PreFilter: containers whose cpus crane-agent may pin (none for cpu-policy "none")."""
    if "cpu" not in conf.topology_aware_resources:
        return ()
    if pod.crane_cpu_policy == CraneCPUPolicy.NONE:
        return ()
    return tuple(
        i for i, c in enumerate(pod.containers) if guaranteed_cpus(c.requests, c.limits) > 0
    )


def pinned_containers(pod: PodSpec, conf: CraneConfig) -> tuple[int, ...]:
    """The containers the plugin works on: none for a DaemonSet's pod, which it skips."""
    return () if pod.is_daemonset_pod else target_containers(pod, conf)


def target_request(pod: PodSpec, indices: Sequence[int], conf: CraneConfig) -> dict[str, int]:
    """computeContainerSpecifiedResourceRequest: only topology-aware resources count.

    Containers only: crane-scheduler c2c0533 is built on k8s.io/api v0.23, whose Pod has
    no spec.resources, so pod-level resources never reach it."""
    total: dict[str, int] = {}
    for index in indices:
        for name, amount in pod.containers[index].requests.items():
            if name in conf.topology_aware_resources:
                total[name] = total.get(name, 0) + amount
    return total


def whole_cores(cpu: int) -> int:
    """A zone's allocatable cpu as the greedy fill reads it: rounded down to whole cores."""
    return cpu // 1000 * 1000


@dataclass(slots=True)
class CraneZone:
    """A working copy of one zone: allocatable and what topology-results already claim."""

    numa_id: int
    name: str
    allocatable: dict[str, int]
    requested: dict[str, int] = field(default_factory=dict)

    def free(self, resource: str) -> int:
        return self.allocatable.get(resource, 0) - self.requested.get(resource, 0)


def claimed_zones(node: NodeSnapshot) -> tuple[CraneZone, ...]:
    """newNodeWrapper + addPod: every NRT zone, debited by existing topology-results.

    Never to be edited: `crane_zones` makes the working copies the scheduler edits."""
    zones = [
        CraneZone(z.numa_id, z.name, {r: a.allocatable for r, a in z.resources.items()})
        for z in node.zones
    ]
    for alloc in node.allocations:
        if alloc.source is not AllocationSource.CRANE:
            continue
        for zone in zones:
            for resource, amount in alloc.numa_resources.get(zone.numa_id, {}).items():
                zone.requested[resource] = zone.requested.get(resource, 0) + amount
    return tuple(zones)


ZonesSource = Callable[[NodeSnapshot], tuple[CraneZone, ...]]


def crane_zones(node: NodeSnapshot, zones: ZonesSource = claimed_zones) -> list[CraneZone]:
    """Working copies of the node's zones as crane sees them (the scheduler edits them).

    `zones` gives the claimed zones: worked out afresh by the reference; a fast path may
    hand in kept ones (`crane.cache.kept_zones`), equal in value."""
    return [
        CraneZone(z.numa_id, z.name, dict(z.allocatable), dict(z.requested)) for z in zones(node)
    ]


def _all_zero(request: Mapping[str, int]) -> bool:
    return not any(request.values())


def compared_resources(request: Mapping[str, int]) -> list[str]:
    """What fitsRequestForNUMANode compares, in order: cpu, memory and ephemeral-storage
    always, then the other requested names."""
    return [*FIXED_RESOURCES, *sorted(r for r in request if r not in FIXED_RESOURCES)]


def zone_shortfalls(request: Mapping[str, int], zone: CraneZone) -> tuple[Reason, ...]:
    """fitsRequestForNUMANode: cpu, memory and ephemeral-storage are always compared."""
    if _all_zero(request):
        return ()
    names = compared_resources(request)
    return tuple(
        Reason(
            ReasonCheck.INSUFFICIENT_NUMA,
            zone.numa_id,
            name,
            request.get(name, 0) - zone.free(name),
            message=ERR_NUMA_NOT_ENOUGH,
        )
        for name in names
        if request.get(name, 0) > zone.free(name)
    )


# --- result assignment ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ZoneResult:
    """One entry of the topology-result: a zone and the amounts placed there."""

    name: str
    numa_id: int
    placed: Mapping[str, int]


def _take(request: dict[str, int], zone: CraneZone) -> tuple[dict[str, int], bool] | None:
    """assignRequestForNUMANode; None when upstream would panic on a nil scalar map."""
    if _all_zero(request):
        return {}, False
    placed, finished = {}, True
    for name in [*FIXED_RESOURCES, *(r for r in request if r not in FIXED_RESOURCES)]:
        if name not in FIXED_RESOURCES:
            return None
        assigned = min(request.get(name, 0), zone.free(name))
        request[name] = request.get(name, 0) - assigned
        placed[name] = assigned
        finished = finished and request[name] <= 0
    return placed, finished


def assign_topology_result(
    zones: list[CraneZone], request: Mapping[str, int], aware: bool
) -> tuple[ZoneResult, ...] | None:
    """assignTopologyResult: the freest zone when aware, else a greedy fill in that order."""
    go117_sort_slice(zones, lambda a, b: a.free("cpu") > b.free("cpu"))
    if aware:
        first = zones[0]
        return (ZoneResult(first.name, first.numa_id, dict(request)),)
    remaining, results = dict(request), []
    for zone in zones:
        zone.allocatable["cpu"] = whole_cores(zone.allocatable.get("cpu", 0))
        taken = _take(remaining, zone)
        if taken is None:
            return None
        placed, finished = taken
        if any(v > 0 for v in placed.values()):
            results.append(ZoneResult(zone.name, zone.numa_id, placed))
        if finished:
            break
    return tuple(sorted(results, key=lambda r: r.name))


def _capacity_json(placed: Mapping[str, int]) -> dict[str, str]:
    """ResourceListIgnoreZeroResources, including its quirk: memory is written from MilliCPU."""
    out: dict[str, str] = {}
    cpu = placed.get("cpu", 0)
    if cpu > 0:
        out["cpu"] = format_quantity(cpu, QuantityFormat.DECIMAL_SI, milli=True)
    if placed.get("memory", 0) > 0:
        out["memory"] = format_quantity(cpu, QuantityFormat.BINARY_SI)
    if placed.get("pods", 0) > 0:
        out["pods"] = format_quantity(placed["pods"], QuantityFormat.BINARY_SI)
    if placed.get("ephemeral-storage", 0) > 0:
        out["ephemeral-storage"] = format_quantity(
            placed["ephemeral-storage"], QuantityFormat.BINARY_SI
        )
    for name, amount in placed.items():
        if name not in (*FIXED_RESOURCES, "pods") and amount > 0:
            binary = name.startswith("hugepages-")
            fmt = QuantityFormat.BINARY_SI if binary else QuantityFormat.DECIMAL_SI
            out[name] = format_quantity(amount, fmt)
    return out


def published_amounts(placed: Mapping[str, int]) -> dict[str, int]:
    """The amounts a reader of the rendered topology-result gets back (memory quirk kept)."""
    out = {name: amount for name, amount in placed.items() if amount > 0 and name != "memory"}
    if placed.get("memory", 0) > 0:
        out["memory"] = placed.get("cpu", 0)
    return out


def render_topology_result(results: Sequence[ZoneResult]) -> str:
    """The topology.crane.io/topology-result value exactly as PreBind marshals it."""
    zones = [
        {
            "name": r.name,
            "type": "Node",
            "resources": {"capacity": dict(sorted(_capacity_json(r.placed).items()))},
        }
        for r in results
    ]
    return json.dumps(zones, separators=(",", ":"))


# --- entry points ----------------------------------------------------------------------


def topology_aware(node: NodeSnapshot, pod: PodSpec) -> bool:
    """A pod annotation that parses wins; otherwise the NRT topologyManagerPolicy decides."""
    from_pod = pod.crane_topology_awareness
    if from_pod is not None:
        return from_pod
    return node.crane_topology_policy == "SingleNUMANodePodLevel"


def _aware_candidates(
    zones: list[CraneZone], request: Mapping[str, int]
) -> PlacementResult | list[CraneZone]:
    """filterNUMANodeResource: keep fitting zones, or refuse with every zone's shortfall."""
    fitting = [z for z in zones if not zone_shortfalls(request, z)]
    if fitting:
        return fitting
    reasons = tuple(r for z in zones for r in zone_shortfalls(request, z))
    return refused(
        *(reasons or (Reason(ReasonCheck.INSUFFICIENT_NUMA, message=ERR_NUMA_NOT_ENOUGH),))
    )


def evaluate(
    node: NodeSnapshot,
    pod: PodSpec,
    *,
    config: CraneConfig | None = None,
    reservations: Sequence[ReservationSnapshot] = (),
    zones: ZonesSource = claimed_zones,
) -> PlacementResult:
    """Filter and Score one node; `annotations` holds what PreBind would write.

    A node the plugin skips (DaemonSet pod, no pinnable container, agent policy not
    Static) fits with score 0, as upstream. `reservations` is ignored; `zones` as in
    `crane_zones`.
    """
    conf = config or CraneConfig()
    indices = pinned_containers(pod, conf)
    if not indices:
        return PlacementResult(True, 0, notes=("no container with pinnable cpus: not checked",))
    if node.flavour is not Flavour.CRANE:
        return refused(Reason(ReasonCheck.NO_TOPOLOGY, message=ERR_NO_NRT))
    if node.crane_cpu_manager_policy != "Static":
        return PlacementResult(True, 0, notes=("crane cpuManagerPolicy is not Static",))
    request, aware = target_request(pod, indices, conf), topology_aware(node, pod)
    working = crane_zones(node, zones)
    if aware:
        kept = _aware_candidates(working, request)
        if isinstance(kept, PlacementResult):
            return kept
        working = kept
    results = assign_topology_result(working, request, aware) if working else ()
    return _verdict(results, aware)


def one_zone_verdict(zone: CraneZone, request: Mapping[str, int]) -> PlacementResult:
    """The verdict of a topology-aware node whose sort put `zone` first."""
    return _verdict((ZoneResult(zone.name, zone.numa_id, dict(request)),), True)


def one_zone_greedy_verdict(zone: CraneZone, request: Mapping[str, int]) -> PlacementResult:
    """The verdict of a node that is not topology-aware, whose sort put `zone` first and
    whose greedy fill finishes there: `_take` places each fixed resource's whole request."""
    placed = {name: request.get(name, 0) for name in FIXED_RESOURCES}
    return _verdict((ZoneResult(zone.name, zone.numa_id, placed),), False)


def _verdict(results: tuple[ZoneResult, ...] | None, aware: bool) -> PlacementResult:
    if results is None:
        return refused(Reason(ReasonCheck.INSUFFICIENT_NUMA, message=ERR_NIL_MAP_PANIC))
    note = ("topology-aware: one zone",) if aware else ("not topology-aware: greedy fill",)
    if not results:
        return refused(Reason(ReasonCheck.SCHEDULER_ERROR, message=ERR_EMPTY_RESULT), notes=note)
    return PlacementResult(
        fits=True,
        score=MAX_NODE_SCORE // len(results),
        numa_zones=tuple(sorted({r.numa_id for r in results})),
        annotations={ANN_CRANE_RESULT: render_topology_result(results)},
        notes=note,
        numa_resources={r.numa_id: published_amounts(r.placed) for r in results},
    )


def allocate(
    node: NodeSnapshot,
    pod: PodSpec,
    *,
    config: CraneConfig | None = None,
    reservations: Sequence[ReservationSnapshot] = (),
    zones: ZonesSource = claimed_zones,
) -> PlacementResult:
    """crane-scheduler picks zones, not CPUs (crane-agent does): same as `evaluate`."""
    return evaluate(node, pod, config=config, reservations=reservations, zones=zones)
