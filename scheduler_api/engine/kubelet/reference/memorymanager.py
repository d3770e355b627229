"""The kubelet's Memory Manager under its Static policy: hints, allocation, machine state.

Follows kubernetes v1.34 `pkg/kubelet/cm/memorymanager/policy_static.go` (commit 030880a5,
the newest stored: contextual logging, the PodLevelResources gate) and `state/state.go`
(`MemoryTable`, `NUMANodeState` with its `Cells` group and `NumberOfAssignments`).

Modelled: `calculateHints` (every NUMA mask; the narrowest mask whose allocatable holds
the request sets the preferred width; a node grouped with others is no single-NUMA hint;
a node holding single-NUMA memory, or grouped otherwise, joins no multi-NUMA hint; the
free memory plus the pod's reusable memory must hold the request), the container and pod
requests (`getRequestedResources`, `getPodRequestedResources`: sidecars add up, the
largest init container may exceed the long-running ones), `Allocate` (the default hint
when the Topology Manager's has no affinity, a hint extended when it does not hold the
request, the `isAffinityViolatingNUMAAllocations` refusal, the init containers' reusable
memory and the blocks they keep), `updateMachineState`, and the errors as upstream words
them. Only Guaranteed pods get hints or memory; a pod setting pod-level resources gets
neither (the kubelet skips it under PodLevelResources, on by default since v1.34).
Not modelled: in-place resize (AllocatedResources, promised blocks), RemoveContainer,
validateState. `memory_state.node_memory` builds the machine state from a `NodeSnapshot`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from scheduler_api.engine.kubelet.reference.bitmask import NUMAMask, iterate_masks
from scheduler_api.engine.kubelet.reference.topologymanager import TopologyHint
from scheduler_api.engine.model.kubernetes import pod_level_resources_set
from scheduler_api.engine.model.snapshot import (
    ContainerSpec,
    PodSpec,
    QoSClass,
)

MEMORY = "memory"
HUGEPAGES_PREFIX = "hugepages-"
SIDECAR_RESTART_POLICY = "Always"  # a restartable init container (a sidecar)

# Allocate's errors, as policy_static.go words them
NO_DEFAULT_HINT = (
    "[memorymanager] failed to get the default NUMA affinity, no NUMA nodes with enough "
    "memory is available"
)
NO_DEFAULT_PREFERRED = "[memorymanager] failed to find the default preferred hint"
NO_EXTENDED_HINT = "[memorymanager] failed to find NUMA nodes to extend the current topology hint"
NO_EXTENDED_PREFERRED = "[memorymanager] failed to find the extended preferred hint"
VIOLATES_NUMA_ALLOCATION = "[memorymanager] preferred hint violates NUMA node allocation"

Requests = dict[str, int]
ResourceHints = dict[str, list[TopologyHint]]
# calculate_hints, or a fast twin with the same answers (`kubelet.fast.memory_hints`)
MemoryHints = Callable[
    ["MachineState", Mapping[str, int], Mapping[NUMAMask, Mapping[str, int]] | None],
    ResourceHints,
]


class MemoryManagerPolicy(StrEnum):
    """The kubelet's `--memory-manager-policy` (KubeletConfiguration memoryManagerPolicy)."""

    NONE = "None"
    STATIC = "Static"


class MemoryManagerError(Exception):
    """Allocate refused a container; the message is upstream's `[memorymanager] ...`."""


def is_memory_resource(name: str) -> bool:
    """The resources the Memory Manager aligns: memory and every hugepages size."""
    return name == MEMORY or name.startswith(HUGEPAGES_PREFIX)


# --- the machine state (state/state.go) ------------------------------------------------


@dataclass(frozen=True, slots=True)
class MemoryTable:
    """One resource of one NUMA node: `reserved` is what containers were assigned."""

    total: int
    system_reserved: int
    allocatable: int
    reserved: int
    free: int


ZERO_TABLE = MemoryTable(0, 0, 0, 0, 0)


@dataclass(frozen=True, slots=True)
class NUMANodeState:
    """A NUMA node's tables (by resource name, sorted), its group (`cells`: itself alone,
    or every node of the multi-NUMA group it serves) and its number of assignments."""

    memory: tuple[tuple[str, MemoryTable], ...]
    cells: tuple[int, ...]
    assignments: int = 0

    def table(self, resource: str) -> MemoryTable:
        """The resource's table; a resource the node lacks has nothing (upstream reads a
        table every NUMA node of a machine has, possibly of zero pages)."""
        return next((table for name, table in self.memory if name == resource), ZERO_TABLE)

    def with_table(self, resource: str, table: MemoryTable) -> NUMANodeState:
        tables = dict(self.memory)
        tables[resource] = table
        return replace(self, memory=tuple(sorted(tables.items())))


@dataclass(frozen=True, slots=True)
class MachineState:
    """`NUMANodeMap`: each NUMA node's state, by ascending id. Immutable and hashable."""

    nodes: tuple[tuple[int, NUMANodeState], ...]

    @classmethod
    def of(cls, nodes: Mapping[int, NUMANodeState]) -> MachineState:
        for numa in nodes:
            NUMAMask.of((numa,))  # ValueError for an id a bitmask cannot hold
        return cls(tuple(sorted(nodes.items())))

    def numa_ids(self) -> tuple[int, ...]:
        return tuple(numa for numa, _ in self.nodes)

    def as_dict(self) -> dict[int, NUMANodeState]:
        return dict(self.nodes)

    def with_numa_ids(self, numa_ids: Sequence[int]) -> MachineState:
        """The state with an empty node for each of `numa_ids` it lacks (a NUMA node the
        Topology Manager knows, e.g. from the CPU table, that publishes no memory)."""
        nodes = self.as_dict()
        for numa in numa_ids:
            nodes.setdefault(numa, NUMANodeState((), (numa,)))
        return MachineState.of(nodes)


@dataclass(frozen=True, slots=True)
class Block:
    """`state.Block`: memory of one resource a container holds on its NUMA affinity."""

    numa: tuple[int, ...]
    resource: str
    size: int


# --- what a container and a pod request -----------------------------------------------


def container_memory_requests(container: ContainerSpec) -> Requests:
    """getRequestedResources: the container's memory and hugepages requests."""
    found = {}
    for name, amount in container.requests.items():
        if is_memory_resource(name):
            if amount < 0:
                raise ValueError(f"container {container.name!r} requests {amount} {name}")
            found[name] = amount
    return found


def pod_memory_requests(pod: PodSpec) -> Requests:
    """getPodRequestedResources: per resource the larger of the long-running containers'
    sum (apps and sidecars) and the most any init container needs with the sidecars
    started before it. A resource only init containers ask is dropped, as upstream."""
    by_init: Requests = {}
    by_sidecars: Requests = {}
    for container in pod.init_containers:
        for name, amount in container_memory_requests(container).items():
            by_init.setdefault(name, 0)
            if container.restart_policy == SIDECAR_RESTART_POLICY:
                by_sidecars[name] = by_sidecars.get(name, 0) + amount
            else:
                by_init[name] = max(by_init[name], by_sidecars.get(name, 0) + amount)
    by_apps: Requests = {}
    for container in pod.containers:
        for name, amount in container_memory_requests(container).items():
            by_apps[name] = by_apps.get(name, 0) + amount
    return {
        name: max(amount + by_sidecars.get(name, 0), by_init.get(name, 0))
        for name, amount in by_apps.items()
    }


def memory_aligned(pod: PodSpec) -> bool:
    """Whether the Static policy gives the pod hints and memory: a Guaranteed pod that
    sets no pod-level resources."""
    return pod.qos_class is QoSClass.GUARANTEED and not pod_level_resources_set(pod)


# --- calculateHints and the rules of the NUMA groups ----------------------------------


def _amounts(node: NUMANodeState, resource: str) -> tuple[int, int]:
    """(allocatable, free) of `resource` on one NUMA node."""
    table = node.table(resource)
    return table.allocatable, table.free


def _grouping_forbids(nodes: Mapping[int, NUMANodeState], bits: Sequence[int]) -> bool:
    """calculateHints' group rules: a node in a multi-NUMA group is no single-NUMA hint;
    a multi-NUMA hint takes no node holding memory alone, nor one grouped otherwise."""
    if len(bits) == 1:
        return bits[0] in nodes and len(nodes[bits[0]].cells) > 1
    return violates_numa_allocations(nodes, bits)


def violates_numa_allocations(nodes: Mapping[int, NUMANodeState], bits: Sequence[int]) -> bool:
    """isAffinityViolatingNUMAAllocations: a NUMA node cannot serve both single- and
    multi-NUMA allocations, nor two different groups. A single-NUMA affinity never
    violates (even on a grouped node: upstream checks that only when giving hints)."""
    if len(bits) == 1:
        return False
    for numa in bits:
        node = nodes.get(numa)
        if node is None or node.assignments == 0:
            continue
        if len(node.cells) == 1 or sorted(node.cells) != list(bits):
            return True
    return False


def calculate_hints(
    state: MachineState,
    requested: Mapping[str, int],
    reusable: Mapping[NUMAMask, Mapping[str, int]] | None = None,
) -> ResourceHints:
    """calculateHints: for every resource requested, the same hints; empty when no NUMA
    mask can hold the request (the Topology Manager then reads "no preference").
    Cost: O(2^N * N * resources) for N NUMA nodes."""
    nodes = state.as_dict()
    reusable = reusable or {}
    min_width = len(nodes)
    found: list[NUMAMask] = []
    # each resource's (allocatable, free) per NUMA node, read once: the walk below sums
    # them over 2^N masks
    amounts = [
        (amount, {numa: _amounts(node, name) for numa, node in nodes.items()}, name)
        for name, amount in requested.items()
    ]
    for mask in iterate_masks(nodes):
        bits = mask.bits
        if any(sum(per[n][0] for n in bits) < amount for amount, per, _ in amounts):
            continue
        min_width = min(min_width, len(bits))
        if _grouping_forbids(nodes, bits):
            continue
        reuse = reusable.get(mask, {})
        if any(
            sum(per[n][1] for n in bits) + reuse.get(name, 0) < amount
            for amount, per, name in amounts
        ):
            continue
        found.append(mask)
    hints = [TopologyHint(m.to_frozenset(), m.count() == min_width) for m in found]
    return {name: list(hints) for name in requested} if hints else {}


def find_best_hint(hints: Sequence[TopologyHint]) -> TopologyHint | None:
    """findBestHint: a preferred hint first, then the narrowest."""
    best: TopologyHint | None = None
    for hint in hints:
        if best is None or (hint.preferred and not best.preferred):
            best = hint
        elif hint.preferred == best.preferred and _narrower(hint, best):
            best = hint
    return best


def _narrower(hint: TopologyHint, other: TopologyHint) -> bool:
    return NUMAMask.of(hint.numa or ()).is_narrower_than(NUMAMask.of(other.numa or ()))


def provider_hints(hints: ResourceHints | None) -> list[list[TopologyHint]]:
    """The Memory Manager's hints as `merge_hints` reads them (filterProvidersHints): no
    hints at all (nil or empty) is one "no preference" entry; a resource with an empty
    list is "nothing fits" ({nil, false}); else one list per resource."""
    if not hints:
        return [[]]
    return [list(found) or [TopologyHint(None, False)] for _, found in sorted(hints.items())]


# --- Allocate ----------------------------------------------------------------------------


def update_machine_state(
    state: MachineState, bits: Sequence[int], resource: str, size: int
) -> MachineState:
    """updateMachineState: every node of the affinity counts one more assignment and is
    grouped with the others; the size is taken from their free memory in order."""
    nodes = state.as_dict()
    for numa in bits:
        node = nodes.get(numa, NUMANodeState((), (numa,)))
        node = replace(node, assignments=node.assignments + 1, cells=tuple(bits))
        table = node.table(resource)
        if size > 0 and table.free > 0:
            taken = min(table.free, size)
            table = replace(table, reserved=table.reserved + taken, free=table.free - taken)
            node = node.with_table(resource, table)
            size -= taken
        nodes[numa] = node
    return MachineState.of(nodes)


def _satisfies(state: MachineState, bits: Sequence[int], requested: Mapping[str, int]) -> bool:
    """isAffinitySatisfyRequest: the affinity's free memory holds every request."""
    nodes = state.as_dict()
    return all(
        sum(_amounts(nodes[n], name)[1] for n in bits if n in nodes) >= amount
        for name, amount in requested.items()
    )


def _is_regular_init(pod: PodSpec, container: ContainerSpec) -> bool:
    found = next((c for c in pod.init_containers if c.name == container.name), None)
    return found is not None and found.restart_policy != SIDECAR_RESTART_POLICY


class StaticPolicy:
    """The Static policy for one pod's admission: the machine state it reads and updates,
    the blocks each of the pod's containers holds (`assignments`) and the pod's
    reusable init-container memory by NUMA mask (`initContainersReusableMemory`).
    Built for one question and dropped after it. `hints`: `calculate_hints`, or a fast
    twin a caller outside the reference passes (a reference never imports one)."""

    def __init__(
        self,
        state: MachineState,
        assignments: Mapping[str, Sequence[Block]] | None = None,
        reusable: Mapping[NUMAMask, Mapping[str, int]] | None = None,
        *,
        hints: MemoryHints | None = None,
    ) -> None:
        self.calculate = hints or calculate_hints
        self.state = state
        self.assignments = {name: list(blocks) for name, blocks in (assignments or {}).items()}
        self.reusable = {mask: dict(amounts) for mask, amounts in (reusable or {}).items()}

    # --- hints -------------------------------------------------------------------------

    def container_hints(self, pod: PodSpec, container: ContainerSpec) -> ResourceHints | None:
        """GetTopologyHints: None (no preference) unless the pod is aligned."""
        if not memory_aligned(pod):
            return None
        requested = container_memory_requests(container)
        if container.name in self.assignments:
            return _regenerate(self.assignments[container.name], requested)
        return self.calculate(self.state, requested, self.reusable)

    def pod_hints(self, pod: PodSpec) -> ResourceHints | None:
        """GetPodTopologyHints: one set of hints for the pod's requests as a whole."""
        if not memory_aligned(pod):
            return None
        requested = pod_memory_requests(pod)
        for container in (*pod.init_containers, *pod.containers):
            if container.name in self.assignments:
                return _regenerate(self.assignments[container.name], requested)
        return self.calculate(self.state, requested, self.reusable)

    def memory_numa(self, names: Sequence[str]) -> frozenset[int]:
        """The NUMA nodes the named containers' memory is on."""
        return frozenset(
            n for name in names for b in self.assignments.get(name, ()) for n in b.numa
        )

    # --- Allocate ----------------------------------------------------------------------

    def allocate(self, pod: PodSpec, container: ContainerSpec, hint: TopologyHint) -> None:
        """Allocate the container's memory on the Topology Manager's `hint` (for the
        none policy: no affinity, not preferred). `MemoryManagerError` when refused."""
        if not memory_aligned(pod):
            return
        if container.name in self.assignments:
            self._update_reusable(pod, container, self.assignments[container.name])
            return
        requested = container_memory_requests(container)
        bits = self._affinity(requested, hint)
        blocks = []
        for name, size in requested.items():
            blocks.append(Block(bits, name, size))
            reuse = self.reusable.get(NUMAMask.of(bits), {}).get(name, 0)
            self.state = update_machine_state(self.state, bits, name, max(size - reuse, 0))
        self._update_reusable(pod, container, blocks)
        self.assignments[container.name] = blocks
        self._give_back_init_blocks(pod, container, blocks)

    def _affinity(self, requested: Requests, hint: TopologyHint) -> tuple[int, ...]:
        """The NUMA nodes to allocate on: the hint's, the default one when it has none,
        extended when it does not hold the request; refused when it breaks the groups."""
        best = hint
        if best.numa is None:
            default = find_best_hint(self._hints_or_refuse(requested, NO_DEFAULT_HINT))
            if default is None or (not default.preferred and best.preferred):
                raise MemoryManagerError(NO_DEFAULT_PREFERRED if default else NO_DEFAULT_HINT)
            best = default
        assert best.numa is not None
        bits = tuple(sorted(best.numa))
        if not _satisfies(self.state, bits, requested):
            extended = self._extend(requested, bits)
            if not extended.preferred and best.preferred:
                raise MemoryManagerError(NO_EXTENDED_PREFERRED)
            assert extended.numa is not None
            bits = tuple(sorted(extended.numa))
        if violates_numa_allocations(self.state.as_dict(), bits):
            raise MemoryManagerError(VIOLATES_NUMA_ALLOCATION)
        return bits

    def _hints_or_refuse(self, requested: Requests, error: str) -> list[TopologyHint]:
        """The hints for regular memory (all memory types get the same), or `error`."""
        hints = self.calculate(self.state, requested, self.reusable)
        if not hints:
            raise MemoryManagerError(error)
        return hints.get(MEMORY, [])

    def _extend(self, requested: Requests, bits: tuple[int, ...]) -> TopologyHint:
        """extendTopologyManagerHint: the best hint holding every node of `bits` (the
        Topology Manager's AND may have narrowed the hint the Memory Manager gave)."""
        hints = self.calculate(self.state, requested, self.reusable).get(MEMORY, [])
        wider = [h for h in hints if h.numa is not None and set(bits) <= h.numa]
        best = find_best_hint(wider)
        if best is None:
            raise MemoryManagerError(NO_EXTENDED_HINT)
        return best

    def _update_reusable(
        self, pod: PodSpec, container: ContainerSpec, blocks: Sequence[Block]
    ) -> None:
        """updatePodReusableMemory: a regular init container's memory becomes reusable
        (the most any held per mask); a later container's use consumes it."""
        for block in blocks:
            amounts = self.reusable.setdefault(NUMAMask.of(block.numa), {})
            held = amounts.get(block.resource, 0)
            if _is_regular_init(pod, container):
                amounts[block.resource] = max(held, block.size)
            elif held:
                amounts[block.resource] = max(held - block.size, 0)

    def _give_back_init_blocks(
        self, pod: PodSpec, container: ContainerSpec, blocks: Sequence[Block]
    ) -> None:
        """updateInitContainersMemoryBlocks: the earlier regular init containers' blocks
        shrink by what this container reused, so the pod's blocks add up to its memory."""
        for block in blocks:
            left = block.size
            for init in pod.init_containers:
                if init.name == container.name or left == 0:
                    break
                if init.restart_policy == SIDECAR_RESTART_POLICY:
                    continue
                held = self.assignments.get(init.name, [])
                for index, old in enumerate(held):
                    if old.size == 0 or old.resource != block.resource or old.numa != block.numa:
                        continue
                    taken = min(old.size, left)
                    held[index] = replace(old, size=old.size - taken)
                    left -= taken


def _regenerate(blocks: Sequence[Block], requested: Mapping[str, int]) -> ResourceHints | None:
    """regenerateHints: a container already holding memory gets its blocks' affinity
    back as preferred hints; None when they do not match what it requests."""
    if len(blocks) != len(requested):
        return None
    hints: ResourceHints = {name: [] for name in requested}
    for block in blocks:
        if requested.get(block.resource) != block.size:
            return None
        hints[block.resource].append(TopologyHint(frozenset(block.numa), True))
    return hints
