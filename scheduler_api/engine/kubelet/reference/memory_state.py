"""The Static Memory Manager's machine state as a node publishes it, and what is unknown.

The kubelet keeps its Memory Manager state in a checkpoint no one publishes; an NRT
publishes per NUMA zone the capacity, allocatable and available memory and hugepages
(NFD's topology-updater: allocatable from the podresources API, less reservedMemory;
available less what the Memory Manager assigned). `machine_state` rebuilds the
`memorymanager.MachineState` from them and from the pods' published per-NUMA memory (the
multi-NUMA groups), and says in notes what had to be assumed. The policy is the
kubelet's when known, else the NRT attribute `memoryManagerPolicy`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from scheduler_api.engine.kubelet.reference.bitmask import MAX_BITS
from scheduler_api.engine.kubelet.reference.memorymanager import (
    MEMORY,
    MachineState,
    MemoryManagerPolicy,
    MemoryTable,
    NUMANodeState,
    is_memory_resource,
)
from scheduler_api.engine.model.snapshot import Flavour, NodeSnapshot

POLICY_ATTRIBUTE = "memoryManagerPolicy"  # NRT attribute, as topologyManagerPolicy
# --- the machine state a NodeSnapshot publishes ---------------------------------------

POLICY_NOT_PUBLISHED = (
    "memory and hugepages alignment not checked: the node does not publish its Memory "
    "Manager policy (kubelet memoryManagerPolicy, NRT attribute memoryManagerPolicy)"
)
NO_ZONE_MEMORY = (
    "memory and hugepages alignment not checked: the node runs the Static Memory Manager "
    "but its NRT publishes no per-NUMA memory"
)
GROUPS_NOT_PUBLISHED = (
    "the node publishes no per-NUMA memory placement of its pods (the Memory Manager's "
    "multi-NUMA groups): every NUMA node is assumed to be its own, single-NUMA group"
)
NO_RESERVED_MEMORY = (
    "the NRT shows no reserved memory on any NUMA node (capacity equals allocatable), "
    "without which the Static policy does not start: its per-NUMA allocatable may not "
    "be the Memory Manager's"
)
# NRT flavours whose zones publish `available` equal to `allocatable` (koordlet; Crane
# publishes none, read as allocatable): what the kubelet assigned is not subtracted
AVAILABLE_IS_ALLOCATABLE = frozenset({Flavour.KOORDINATOR, Flavour.CRANE})


@dataclass(frozen=True, slots=True)
class NodeMemory:
    """What a node publishes of its Memory Manager: the policy (None when unknown or not
    modelled), the machine state (None when not built) and what the answer must say."""

    policy: MemoryManagerPolicy | None
    state: MachineState | None = None
    notes: tuple[str, ...] = ()

    @property
    def static(self) -> bool:
        """The Static policy runs and its machine state is known: it is modelled."""
        return self.policy is MemoryManagerPolicy.STATIC and self.state is not None


def memory_manager_policy(node: NodeSnapshot) -> tuple[MemoryManagerPolicy | None, str]:
    """The kubelet's policy when known, else the NRT attribute; (None, why) otherwise."""
    raw = node.memory_manager_policy or node.nrt_attributes.get(POLICY_ATTRIBUTE, "")
    if not raw:
        return None, POLICY_NOT_PUBLISHED
    try:
        return MemoryManagerPolicy(raw), ""
    except ValueError:
        return None, (
            f"memory and hugepages alignment not checked: the Memory Manager policy {raw!r} "
            "is not modelled (only None and Static are)"
        )


def node_memory(node: NodeSnapshot) -> NodeMemory:
    """The node's Memory Manager: its policy and, for the Static policy, its machine
    state (`machine_state`) with what the answer must say of it."""
    policy, why = memory_manager_policy(node)
    if policy is not MemoryManagerPolicy.STATIC:
        return NodeMemory(policy, None, (why,) if why else ())
    state, notes = machine_state(node)
    return NodeMemory(policy, state, notes)


def machine_state(node: NodeSnapshot) -> tuple[MachineState | None, tuple[str, ...]]:
    """The Static policy's machine state as the node publishes it, and the notes it
    needs: from the NRT zones (capacity = total, allocatable as published, system
    reserved = capacity - allocatable, free = available, reserved = allocatable -
    available) and the multi-NUMA groups its pods' per-NUMA memory shows
    (`memory_groups`). A NUMA node with memory assigned counts one assignment: the
    rules read only whether it has any. None when no zone publishes memory."""
    tables, notes = _zone_tables(node)
    if not any(tables.values()):
        return None, (NO_ZONE_MEMORY, *notes)
    groups, published = memory_groups(node)
    nodes = {}
    for numa, by_resource in tables.items():
        cells = next((g for g in groups if numa in g), (numa,))
        used = len(cells) > 1 or any(t.reserved > 0 for t in by_resource.values())
        nodes[numa] = NUMANodeState(tuple(sorted(by_resource.items())), cells, int(used))
    return MachineState.of(nodes), (*notes, *_state_notes(node, nodes, published))


def _state_notes(
    node: NodeSnapshot, nodes: Mapping[int, NUMANodeState], published: bool
) -> tuple[str, ...]:
    notes = []
    tracked = node.flavour not in AVAILABLE_IS_ALLOCATABLE
    if not tracked:
        notes.append(
            f"the {node.flavour} NRT publishes available memory equal to allocatable: "
            "memory the kubelet already assigned is not seen, so free memory is an upper "
            "bound and no NUMA node is known to hold any"
        )
    if not published and (not tracked or any(n.assignments for n in nodes.values())):
        notes.append(GROUPS_NOT_PUBLISHED)
    if not any(n.table(MEMORY).system_reserved for n in nodes.values()):
        notes.append(NO_RESERVED_MEMORY)
    return tuple(notes)


def _zone_tables(node: NodeSnapshot) -> tuple[dict[int, dict[str, MemoryTable]], list[str]]:
    """Each NUMA zone's memory and hugepages tables (amounts clamped to be coherent)."""
    tables: dict[int, dict[str, MemoryTable]] = {}
    notes = []
    for zone in node.zones:
        if zone.zone_type != "Node" or zone.numa_id < 0 or zone.numa_id in tables:
            continue
        if zone.numa_id >= MAX_BITS:
            notes.append(f"NRT zone {zone.name!r}: NUMA id {zone.numa_id} ignored (over 63)")
            continue
        tables[zone.numa_id] = {
            name: _table(amounts.capacity, amounts.allocatable, amounts.available)
            for name, amounts in zone.resources.items()
            if is_memory_resource(name)
        }
    return tables, notes


def _table(capacity: int, allocatable: int, available: int) -> MemoryTable:
    allocatable = max(allocatable, 0)
    free = min(max(available, 0), allocatable)
    total = max(capacity, allocatable)
    return MemoryTable(total, total - allocatable, allocatable, allocatable - free, free)


def memory_groups(node: NodeSnapshot) -> tuple[tuple[tuple[int, ...], ...], bool]:
    """The multi-NUMA groups the node's pods show (each pod whose published per-NUMA
    memory or hugepages spans several NUMA nodes; overlapping spans are one group), and
    whether any pod publishes per-NUMA memory at all (Koordinator's resource-status,
    Crane's topology-result)."""
    spans = [
        frozenset(
            numa
            for numa, amounts in allocation.numa_resources.items()
            if any(is_memory_resource(name) and amount > 0 for name, amount in amounts.items())
        )
        for allocation in node.allocations
    ]
    groups: list[frozenset[int]] = []
    for span in (s for s in spans if len(s) > 1):
        joined = [g for g in groups if g & span]
        groups = [g for g in groups if not g & span] + [span.union(*joined)]
    return tuple(tuple(sorted(g)) for g in sorted(groups, key=min)), any(spans)
