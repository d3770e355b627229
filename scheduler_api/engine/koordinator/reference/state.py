"""Koordinator's view of one node: TopologyOptions and the NodeAllocation it keeps.

Reproduces topology_options.go (NewTopologyOptions), node_allocation.go and the pod
and reservation event handlers that fill it. Every existing pod with a
resource-status annotation, and every Available reservation (whose reserve pod has
the reservation's uid), holds CPUs and per-NUMA resources here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from scheduler_api.engine.koordinator.reference.cpu import CPUInfo, KoordCPUTopology
from scheduler_api.engine.model.kubernetes import add as add  # quotav1.Add, stated once
from scheduler_api.engine.model.snapshot import (
    AllocationSource,
    CPUBindPolicy,
    Flavour,
    NodeSnapshot,
    NUMAAllocateStrategy,
    NUMATopologyPolicy,
    ReservationPhase,
    ReservationSnapshot,
)

ResourceMap = Mapping[str, int]
EMPTY_RESOURCES: ResourceMap = MappingProxyType({})
NUMAResources = Mapping[int, ResourceMap]
NRT_FLAVOURS = frozenset(
    {Flavour.KOORDINATOR, Flavour.UPSTREAM_V1ALPHA1, Flavour.UPSTREAM_V1ALPHA2}
)
NRT_POLICY_MAP = {
    "BestEffort": NUMATopologyPolicy.BEST_EFFORT,
    "Restricted": NUMATopologyPolicy.RESTRICTED,
    "SingleNUMANodePodLevel": NUMATopologyPolicy.SINGLE_NUMA_NODE,
}


@dataclass(frozen=True, slots=True)
class KoordConfig:
    """NodeNUMAResourceArgs (defaults as SetDefaults_NodeNUMAResourceArgs).

    `resource_weights` come from scoringStrategy.resources and weigh both the node and
    the per-NUMA scorer; `numa_scoring_strategy` also decides the default NUMA
    allocate strategy (MostAllocated -> MostAllocated, anything else -> LeastAllocated).
    """

    default_cpu_bind_policy: str = CPUBindPolicy.FULL_PCPUS
    scoring_strategy: str = "LeastAllocated"
    numa_scoring_strategy: str = "LeastAllocated"
    resource_weights: Mapping[str, int] = field(
        default_factory=lambda: MappingProxyType({"cpu": 1, "memory": 1})
    )
    max_ref_count: int = 1

    def default_numa_allocate_strategy(self) -> str:
        if self.numa_scoring_strategy == "MostAllocated":
            return NUMAAllocateStrategy.MOST_ALLOCATED
        return NUMAAllocateStrategy.LEAST_ALLOCATED


# --- resource list arithmetic (quotav1) -------------------------------------------------


def subtract_non_negative(a: ResourceMap, b: ResourceMap) -> dict[str, int]:
    """quotav1.SubtractWithNonNegativeResult: only a's keys, floored at zero."""
    return {name: max(amount - b.get(name, 0), 0) for name, amount in a.items()}


def subtract(a: ResourceMap, b: ResourceMap) -> dict[str, int]:
    """quotav1.Subtract: a's keys minus b, plus b's missing keys negated."""
    out = {name: amount - b.get(name, 0) for name, amount in a.items()}
    for name, amount in b.items():
        out.setdefault(name, -amount)
    return out


def add_numa(*maps: NUMAResources) -> dict[int, dict[str, int]]:
    """appendAllocated: NUMA-wise quotav1.Add."""
    out: dict[int, dict[str, int]] = {}
    for numa_map in maps:
        for numa, resources in numa_map.items():
            out[numa] = add(out.get(numa, {}), resources)
    return out


# --- TopologyOptions -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NodeView:
    """TopologyOptions for one node (what the NRT informer handler built)."""

    has_nrt: bool
    topology: KoordCPUTopology
    reserved_cpus: frozenset[int]
    nrt_policy: str
    numa_resources: tuple[tuple[int, ResourceMap], ...]
    kubelet_policy: str
    kubelet_options: Mapping[str, str]
    max_ref_count: int = 1
    # derived from numa_resources once: a what-if asks for them per NUMA mask
    _numa_ids: tuple[int, ...] = field(init=False, repr=False, compare=False)
    _by_numa: Mapping[int, ResourceMap] = field(init=False, repr=False, compare=False)
    # each NUMA node's resource names (by position), and every name one of them publishes
    resource_names: tuple[frozenset[str], ...] = field(init=False, repr=False, compare=False)
    published: frozenset[str] = field(init=False, repr=False, compare=False)
    # what hint walks derive from the view alone, kept (never changed in place)
    derived: dict[tuple[object, ...], object] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "derived", {})
        object.__setattr__(self, "_numa_ids", tuple(numa for numa, _ in self.numa_resources))
        first = {numa: r for numa, r in reversed(self.numa_resources)}  # the first id wins
        object.__setattr__(self, "_by_numa", first)
        names = tuple(frozenset(resources) for _, resources in self.numa_resources)
        object.__setattr__(self, "resource_names", names)
        object.__setattr__(self, "published", frozenset[str]().union(*names))

    def numa_nodes(self) -> tuple[int, ...]:
        return self._numa_ids

    def resources_of(self, numa: int) -> ResourceMap:
        return self._by_numa.get(numa, EMPTY_RESOURCES)


def nrt_numa_policy(topology_policies: Sequence[str]) -> str:
    """convertToNUMATopologyPolicy: the first recognised entry of the whole list."""
    for policy in topology_policies:
        if policy in NRT_POLICY_MAP:
            return NRT_POLICY_MAP[policy]
    return NUMATopologyPolicy.NONE


def excluded_cpus(node: NodeSnapshot) -> frozenset[int]:
    """Kubelet-pinned | kubelet reserved | annotation-reserved | exclusive system-QoS cpus."""
    pinned = {c for a in node.allocations if a.source is AllocationSource.KUBELET for c in a.cpuset}
    return (
        frozenset(pinned)
        | node.kubelet_reserved_cpus
        | node.node_reserved_cpus
        | (node.system_qos_exclusive_cpus)
    )


def _numa_resources(
    node: NodeSnapshot, topology: KoordCPUTopology, reserved: frozenset[int]
) -> tuple[tuple[int, ResourceMap], ...]:
    """extractNUMANodeResources, minus reserved cpus counted with (shifted) NUMA ids."""
    reserved_details = {c: i for c, i in topology.details.items() if c in reserved}
    result = []
    for zone in node.zones:
        if zone.zone_type != "Node" or zone.numa_id < 0:
            continue
        resources = {name: amounts.allocatable for name, amounts in zone.resources.items()}
        if resources.get("cpu", 0):
            taken = sum(1 for i in reserved_details.values() if i.node == zone.numa_id)
            resources["cpu"] -= taken * 1000
        result.append((zone.numa_id, resources))
    return tuple(sorted(result, key=lambda item: item[0]))


def node_view(node: NodeSnapshot, config: KoordConfig) -> NodeView:
    """NewTopologyOptions from the node's (v1alpha1-visible) NRT and its annotations."""
    has_nrt = node.flavour in NRT_FLAVOURS
    topology = KoordCPUTopology.shared(tuple(node.cpus) if has_nrt else ())
    reserved = excluded_cpus(node) if has_nrt else frozenset()
    return NodeView(
        has_nrt=has_nrt,
        topology=topology,
        reserved_cpus=reserved,
        nrt_policy=nrt_numa_policy(node.topology_policies) if has_nrt else NUMATopologyPolicy.NONE,
        numa_resources=_numa_resources(node, topology, reserved) if has_nrt else (),
        kubelet_policy=node.cpu_manager_policy,
        kubelet_options=node.cpu_manager_options,
        max_ref_count=config.max_ref_count,
    )


def node_cpu_bind_policy(node: NodeSnapshot) -> str:
    """GetNodeCPUBindPolicy: the label, or FullPCPUsOnly from kubelet's full-pcpus-only."""
    label = node.cpu_bind_policy_label
    kubelet_full = node.cpu_manager_policy == "static" and (
        node.cpu_manager_options.get("full-pcpus-only") == "true"
    )
    if label == "FullPCPUsOnly" or kubelet_full:
        return "FullPCPUsOnly"
    return "SpreadByPCPUs" if label == "SpreadByPCPUs" else "None"


def numa_allocate_strategy(node: NodeSnapshot, config: KoordConfig) -> str:
    """GetNUMAAllocateStrategy (koordinator v1.8.0 nodenumaresource/util.go): a non-empty
    node label beats the default the NUMA scoring strategy gives. Nothing of the pod is
    read: v1.8.0's NUMATopologySpec has no allocate strategy. Any value but MostAllocated
    (DistributeEvenly included) picks CPUs as LeastAllocated: cpu_accumulator.go only
    ever compares the strategy with MostAllocated."""
    return node.numa_allocate_strategy_label or config.default_numa_allocate_strategy()


def node_numa_policy(node: NodeSnapshot, view: NodeView) -> str:
    """getNUMATopologyPolicy: a non-empty node label beats the NRT's policy."""
    label = node.koord_numa_topology_policy_label
    return label if label else view.nrt_policy


# --- NodeAllocation ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HeldAllocation:
    """PodAllocation as the resource manager stores it."""

    uid: str
    cpuset: frozenset[int]
    exclusive_policy: str
    numa_resources: NUMAResources


@dataclass(slots=True)
class NodeAllocation:
    """NodeAllocation: held cpus with reference counts, per-NUMA sums, NUMA sharing."""

    pods: dict[str, HeldAllocation] = field(default_factory=dict)
    cpus: dict[int, CPUInfo] = field(default_factory=dict)
    resources: dict[int, dict[str, int]] = field(default_factory=dict)
    shared: dict[int, set[str]] = field(default_factory=dict)
    single: dict[int, set[str]] = field(default_factory=dict)

    def add(self, held: HeldAllocation, topology: KoordCPUTopology) -> None:
        """addPodAllocation (the last pod on a cpu sets its exclusive policy)."""
        if held.uid in self.pods:
            return
        self.pods[held.uid] = held
        used: set[int] = set()
        for cpu in held.cpuset:
            info = self.cpus.get(cpu)
            if info is None:  # its first holder: the topology keeps that CPUInfo
                info = topology.held_once(cpu, held.exclusive_policy)
                if info is None:
                    continue
            else:  # the constructor, not dataclasses.replace: this runs per held cpu
                info = CPUInfo(
                    info.cpu, info.core, info.node, info.socket, info.ref_count + 1,
                    held.exclusive_policy,
                )  # fmt: skip
            self.cpus[cpu] = info
            used.add(info.node)
        target = self.shared if len(used) > 1 else self.single
        for node in used:
            target.setdefault(node, set()).add(held.uid)
        for numa, resources in held.numa_resources.items():
            self.resources[numa] = add(self.resources.get(numa, {}), resources)

    def numa_status(self, count: int) -> tuple[str, ...]:
        """GetAllNUMANodeStatus: idle, single or shared for NUMA ids 0..count-1."""
        statuses = []
        for numa in range(count):
            single, shared = self.single.get(numa), self.shared.get(numa)
            if not single and not shared:
                statuses.append("idle")
            else:
                statuses.append("single" if single and not shared else "shared")
        return tuple(statuses)


def active_reservations(
    node: NodeSnapshot, reservations: Iterable[ReservationSnapshot]
) -> list[ReservationSnapshot]:
    """IsObjValidActiveReservation: bound to this node and active (IsReservationActive:
    Available, or Waiting, whose resources are held as well)."""
    return [
        r for r in reservations
        if r.phase in ACTIVE_RESERVATION_PHASES and r.node_name == node.name
    ]  # fmt: skip


ACTIVE_RESERVATION_PHASES = frozenset({ReservationPhase.AVAILABLE, ReservationPhase.WAITING})


def node_allocation(
    node: NodeSnapshot, view: NodeView, reservations: Iterable[ReservationSnapshot]
) -> NodeAllocation:
    """What koord-scheduler's resource manager holds for the node before this pod."""
    state = NodeAllocation()
    if not view.topology.is_valid():
        return state  # resourceManager.Update ignores nodes without a valid topology
    for alloc in node.allocations:
        if alloc.source is AllocationSource.KOORDINATOR and (alloc.cpuset or alloc.numa_resources):
            state.add(
                HeldAllocation(alloc.uid, alloc.cpuset, alloc.cpu_exclusive_policy,
                               alloc.numa_resources),
                view.topology,
            )  # fmt: skip
    for r in active_reservations(node, reservations):
        if r.cpuset or r.numa_resources:
            state.add(HeldAllocation(r.uid, r.cpuset, "", r.numa_resources), view.topology)
    return state


def available_cpus(
    state: NodeAllocation, view: NodeView, *preferred: frozenset[int]
) -> tuple[frozenset[int], dict[int, CPUInfo]]:
    """getAvailableCPUs: preferred cpus give back one reference each."""
    held = dict(state.cpus)
    for cpus in preferred:
        for cpu in cpus:
            if cpu in held:
                info = held[cpu]
                if info.ref_count <= 1:
                    del held[cpu]
                else:
                    held[cpu] = replace(info, ref_count=info.ref_count - 1)
    taken = {c for c, info in held.items() if info.ref_count >= view.max_ref_count}
    return frozenset(view.topology.details) - taken - view.reserved_cpus, held


def available_numa(
    state: NodeAllocation, view: NodeView, reusable: NUMAResources
) -> tuple[dict[int, dict[str, int]], dict[int, dict[str, int]]]:
    """getAvailableNUMANodeResources: (available, allocated) per NUMA node."""
    total_available: dict[int, dict[str, int]] = {}
    total_allocated: dict[int, dict[str, int]] = {}
    for numa, resources in view.numa_resources:
        allocated: dict[str, int] = {}
        if numa in state.resources:
            allocated = subtract_non_negative(state.resources[numa], reusable.get(numa, {}))
            total_allocated[numa] = allocated
        total_available[numa] = subtract_non_negative(resources, allocated)
    return total_available, total_allocated


# --- the books one question reads ------------------------------------------------------------

NodeMemo = dict[object, object]  # what a fast path works out from a node's books (see cache)


@dataclass(frozen=True, slots=True)
class NodeBooks:
    """One node's books: its view and NodeAllocation, with the reservations bound to it.

    `memo` is None for books worked out afresh (`fresh_books`, the reference's); books a
    cache keeps (`koordinator.cache.kept_books`) carry a memo of what derives from them,
    which only fast paths read."""

    node: NodeSnapshot
    reservations: tuple[ReservationSnapshot, ...]
    view: NodeView
    held: NodeAllocation
    memo: NodeMemo | None = None


def fresh_books(
    node: NodeSnapshot, config: KoordConfig, reservations: Iterable[ReservationSnapshot]
) -> NodeBooks:
    """`node_view` and `node_allocation` worked out from the snapshot alone."""
    bound = tuple(r for r in reservations if r.node_name == node.name)
    view = node_view(node, config)
    return NodeBooks(node, bound, view, node_allocation(node, view, bound))
