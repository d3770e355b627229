"""Koordinator's CPU topology and cpu_accumulator (takeCPUs), case for case.

Reproduces pkg/scheduler/plugins/nodenumaresource cpu_topology.go and
cpu_accumulator.go. Two upstream quirks are kept on purpose:

* `CPUTopologyBuilder.AddCPUInfo` stores core and NUMA ids as `socket<<16 | id`, so
  lookups by a plain NRT NUMA id (`CPUsInNUMANodes(1)`) find nothing on socket >= 1.
* `sortCPUsByRefCount` reads the reference count from the topology (always 0), so it
  only ever sorts by cpu id.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache

from scheduler_api.engine.model.errors import AllocationError
from scheduler_api.engine.model.snapshot import (
    CPUBindPolicy,
    CPUExclusivePolicy,
    NUMAAllocateStrategy,
)

PCPU = CPUExclusivePolicy.PCPU_LEVEL
NUMA_LEVEL = CPUExclusivePolicy.NUMA_NODE_LEVEL
MOST = NUMAAllocateStrategy.MOST_ALLOCATED


@dataclass(frozen=True, slots=True)
class CPUInfo:
    """One logical CPU; core and node ids carry the socket in their high bits."""

    cpu: int
    core: int
    node: int
    socket: int
    ref_count: int = 0
    exclusive_policy: str = ""


@dataclass(frozen=True, slots=True)
class KoordCPUTopology:
    """CPUTopology: per-CPU details plus the counts the accumulator divides by."""

    details: Mapping[int, CPUInfo]
    num_cpus: int = 0
    num_cores: int = 0
    num_nodes: int = 0
    num_sockets: int = 0
    # CPUInfo of a cpu held once, by exclusive policy: immutable, so shared by every
    # NodeAllocation that has one holder on it (a count adds thousands)
    _held_once: dict[tuple[int, str], CPUInfo] = field(
        default_factory=dict, compare=False, repr=False
    )

    def held_once(self, cpu: int, policy: str) -> CPUInfo | None:
        """The CPUInfo of `cpu` with one holder of exclusive policy `policy`; None for a
        cpu not in the topology."""
        key = (cpu, policy)
        info = self._held_once.get(key)
        if info is None:
            free = self.details.get(cpu)
            if free is None:
                return None
            info = CPUInfo(free.cpu, free.core, free.node, free.socket, free.ref_count + 1, policy)
            self._held_once[key] = info  # bounded: cpus times exclusive policies
        return info

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[int, int, int, int]]) -> KoordCPUTopology:
        """Build from (cpu, core, socket, numa) rows the way CPUTopologyBuilder does."""
        details: dict[int, CPUInfo] = {}
        nodes, cores, sockets = set(), set(), set()
        for cpu, core, socket, numa in rows:
            core_id, node_id = socket << 16 | core, socket << 16 | numa
            details[cpu] = CPUInfo(cpu, core_id, node_id, socket)
            sockets.add(socket)
            nodes.add((socket, node_id))
            cores.add((socket, node_id, core_id))
        return cls(details, len(details), len(cores), len(nodes), len(sockets))

    def is_valid(self) -> bool:
        return bool(self.num_sockets and self.num_nodes and self.num_cores and self.num_cpus)

    @staticmethod
    @lru_cache(maxsize=512)
    def shared(rows: tuple[tuple[int, int, int, int], ...]) -> KoordCPUTopology:
        """`from_rows`, built once per CPU layout: nodes of one hardware model share it.

        Safe to share because nothing changes a topology once built.
        """
        return KoordCPUTopology.from_rows(rows)

    def cpus_per_core(self) -> int:
        return self.num_cpus // self.num_cores if self.num_cores else 0

    def cpus_per_node(self) -> int:
        return self.num_cpus // self.num_nodes if self.num_nodes else 0

    def cpus_per_socket(self) -> int:
        return self.num_cpus // self.num_sockets if self.num_sockets else 0

    def cpus_in_nodes(self, *node_ids: int) -> frozenset[int]:
        return frozenset(c for c, i in self.details.items() if i.node in node_ids)

    def cpus_in_sockets(self, *sockets: int) -> frozenset[int]:
        return frozenset(c for c, i in self.details.items() if i.socket in sockets)


def keep_only(details: Mapping[int, CPUInfo], cpus: Iterable[int]) -> dict[int, CPUInfo]:
    keep = set(cpus)
    return {c: info for c, info in details.items() if c in keep}


def cpus_in_cores(details: Mapping[int, CPUInfo], core: int) -> list[int]:
    return sorted(c for c, info in details.items() if info.core == core)


# --- the accumulator ---------------------------------------------------------------------


@dataclass(slots=True)
class Accumulator:
    """cpuAccumulator: what is still allocatable, what was taken, what is exclusive."""

    topology: KoordCPUTopology
    max_ref_count: int
    allocatable: dict[int, CPUInfo]
    needed: int
    exclusive_policy: str
    strategy: str
    exclusive_cores: set[int] = field(default_factory=set)
    exclusive_nodes: set[int] = field(default_factory=set)
    result: set[int] = field(default_factory=set)

    def take(self, cpus: Sequence[int]) -> None:
        for cpu in cpus:
            self.result.add(cpu)
            self.allocatable.pop(cpu, None)
            info = self.topology.details[cpu]
            if self.exclusive_policy == PCPU:
                self.exclusive_cores.add(info.core)
            elif self.exclusive_policy == NUMA_LEVEL:
                self.exclusive_nodes.add(info.node)
        self.needed -= len(cpus)

    def needs(self, n: int) -> bool:
        return self.needed >= n

    def satisfied(self) -> bool:
        return self.needed < 1

    def failed(self) -> bool:
        return self.needed > len(self.allocatable)

    def excluded_pcpu(self, info: CPUInfo) -> bool:
        return self.exclusive_policy == PCPU and info.core in self.exclusive_cores

    def excluded_node(self, info: CPUInfo) -> bool:
        return self.exclusive_policy == NUMA_LEVEL and info.node in self.exclusive_nodes

    def prefer_fewer(self) -> bool:
        return self.strategy == MOST


def new_accumulator(
    topology: KoordCPUTopology,
    max_ref_count: int,
    available: Iterable[int],
    allocated: Mapping[int, CPUInfo],
    needed: int,
    exclusive_policy: str,
    strategy: str,
) -> Accumulator:
    """newCPUAccumulator: exclusivity is learned from what other pods hold."""
    cores = {v.core for v in allocated.values() if v.exclusive_policy == PCPU}
    nodes = {v.node for v in allocated.values() if v.exclusive_policy == NUMA_LEVEL}
    allocatable = keep_only(topology.details, available)
    if max_ref_count > 1:
        allocatable = {
            c: replace(i, ref_count=allocated[c].ref_count if c in allocated else 0)
            for c, i in allocatable.items()
        }
    return Accumulator(
        topology, max_ref_count, allocatable, needed, exclusive_policy, strategy, cores, nodes
    )


def _core_ref_count(details: Mapping[int, CPUInfo], core: int) -> int:
    return sum(i.ref_count for i in details.values() if i.core == core)


def _sort_cores(acc: Accumulator, cores: list[int], cpus_in_core: Mapping[int, list[int]]) -> None:
    """sortCores: fuller cores first, then lower reference count, then core id."""

    def key(core: int) -> tuple[int, int, int]:
        ref = _core_ref_count(acc.allocatable, core) if acc.max_ref_count > 1 else 0
        return (-len(cpus_in_core[core]), ref, core)

    cores.sort(key=key)


def _score_order(acc: Accumulator, score: int) -> int:
    """Free-capacity sort direction: MostAllocated packs (fewest free first)."""
    return score if acc.prefer_fewer() else -score


def _whole_cores_grouped(
    acc: Accumulator,
    cores: dict[int, list[int]],
    full_only: bool,
    group_of: Callable[[CPUInfo], int],
) -> dict[int, list[int]]:
    """Cores per group (NUMA node or socket), each group's CPUs in the strategy's core
    order; with full_only, cores missing a sibling are left out."""
    grouped: dict[int, list[int]] = {}
    for core, cpus in cores.items():
        if full_only and len(cpus) != acc.topology.cpus_per_core():
            continue
        grouped.setdefault(group_of(acc.allocatable[cpus[0]]), []).append(core)
    result: dict[int, list[int]] = {}
    for group, group_cores in grouped.items():
        _sort_cores(acc, group_cores, cores)
        result[group] = [cpu for core in group_cores for cpu in sorted(cores[core])]
    return result


def free_cores_in_node(
    acc: Accumulator, full_only: bool, filter_exclusive: bool
) -> list[list[int]]:
    """freeCoresInNode: whole free cores grouped by NUMA node, ordered by the strategy."""
    socket_free: dict[int, int] = {}
    cores: dict[int, list[int]] = {}
    for info in acc.allocatable.values():
        if filter_exclusive and acc.excluded_node(info):
            continue
        cores.setdefault(info.core, []).append(info.cpu)
        socket_free[info.socket] = socket_free.get(info.socket, 0) + 1
    cpus_by_node = _whole_cores_grouped(acc, cores, full_only, lambda info: info.node)

    def key(node: int) -> tuple[int, int, int]:
        socket = acc.allocatable[cpus_by_node[node][0]].socket
        return (
            _score_order(acc, len(cpus_by_node[node])),
            _score_order(acc, socket_free[socket]),
            node,
        )

    return [cpus_by_node[n] for n in sorted(cpus_by_node, key=key)]


def free_cores_in_socket(acc: Accumulator, full_only: bool) -> list[list[int]]:
    """freeCoresInSocket: whole free cores grouped by socket, ordered by the strategy."""
    cores: dict[int, list[int]] = {}
    for info in acc.allocatable.values():
        cores.setdefault(info.core, []).append(info.cpu)
    cpus_by_socket = _whole_cores_grouped(acc, cores, full_only, lambda info: info.socket)
    order = sorted(cpus_by_socket, key=lambda s: (_score_order(acc, len(cpus_by_socket[s])), s))
    return [cpus_by_socket[s] for s in order]


def _one_per_core(acc: Accumulator, cpus: Sequence[int]) -> list[int]:
    """extractCPU: the first cpu of each core, keeping order."""
    seen: set[int] = set()
    picked = []
    for cpu in cpus:
        core = acc.topology.details[cpu].core
        if core not in seen:
            seen.add(core)
            picked.append(cpu)
    return picked


def free_cpus_in_node(acc: Accumulator, filter_exclusive: bool) -> list[list[int]]:
    """freeCPUsInNode; with filter_exclusive only one cpu per core is offered."""
    groups: dict[int, list[int]] = {}
    node_free: dict[int, int] = {}
    socket_free: dict[int, int] = {}
    for info in acc.allocatable.values():
        if filter_exclusive and (acc.excluded_pcpu(info) or acc.excluded_node(info)):
            continue
        groups.setdefault(info.node, []).append(info.cpu)
        node_free[info.node] = node_free.get(info.node, 0) + 1
        socket_free[info.socket] = socket_free.get(info.socket, 0) + 1
    for node, cpus in groups.items():
        cpus.sort()
        groups[node] = _one_per_core(acc, cpus) if filter_exclusive else cpus

    def key(node: int) -> tuple[int, int, int]:
        info = acc.allocatable[groups[node][0]]
        return (
            _score_order(acc, node_free[info.node]),
            _score_order(acc, socket_free[info.socket]),
            node,
        )

    return [groups[n] for n in sorted(groups, key=key)]


def free_cpus_in_socket(acc: Accumulator, filter_exclusive: bool) -> list[list[int]]:
    """freeCPUsInSocket; with filter_exclusive only one cpu per core is offered."""
    groups: dict[int, list[int]] = {}
    for info in acc.allocatable.values():
        if filter_exclusive and acc.excluded_pcpu(info):
            continue
        groups.setdefault(info.socket, []).append(info.cpu)
    for socket, cpus in groups.items():
        cpus.sort()
        groups[socket] = _one_per_core(acc, cpus) if filter_exclusive else cpus
    order = sorted(groups, key=lambda s: (_score_order(acc, len(groups[s])), s))
    return [groups[s] for s in order]


def free_cpus(acc: Accumulator, filter_exclusive: bool) -> list[int]:
    """freeCPUs: cores ordered by socket affinity with the result, free counts, ids."""
    cores: dict[int, list[int]] = {}
    node_free: dict[int, int] = {}
    socket_free: dict[int, int] = {}
    for info in acc.allocatable.values():
        if filter_exclusive and (acc.excluded_pcpu(info) or acc.excluded_node(info)):
            continue
        cores.setdefault(info.core, []).append(info.cpu)
        node_free[info.node] = node_free.get(info.node, 0) + 1
        socket_free[info.socket] = socket_free.get(info.socket, 0) + 1
    colocated = {s: len(acc.topology.cpus_in_sockets(s) & acc.result) for s in socket_free}

    def key(core: int) -> tuple[int, ...]:
        info = acc.allocatable[cores[core][0]]
        ref = _core_ref_count(acc.allocatable, core) if acc.max_ref_count > 1 else 0
        return (
            -colocated[info.socket],
            _score_order(acc, socket_free[info.socket]),
            _score_order(acc, node_free[info.node]),
            len(cores[core]),
            info.socket,
            ref,
            core,
        )

    return [cpu for core in sorted(cores, key=key) for cpu in sorted(cores[core])]


def spread_cpus(acc: Accumulator, cpus: Sequence[int]) -> list[int]:
    """spreadCPUs: round-robin over cores (first thread of every core, then the second...)."""
    if len(cpus) <= acc.topology.cpus_per_core():
        return list(cpus)
    pending, spread = list(cpus), []
    while pending:
        seen: set[int] = set()
        later = []
        for cpu in pending:
            core = acc.topology.details[cpu].core
            if core in seen:
                later.append(cpu)
            else:
                seen.add(core)
                spread.append(cpu)
        pending = later
    return spread


# --- takeCPUs ------------------------------------------------------------------------------


def _take_whole_cores(acc: Accumulator) -> bool:
    """The FullPCPUs half of takeCPUs; True once satisfied."""
    topo = acc.topology
    if acc.needed <= topo.cpus_per_node():
        for filter_exclusive in (True, False):
            for cpus in free_cores_in_node(acc, True, filter_exclusive):
                if len(cpus) >= acc.needed:
                    acc.take(cpus[: acc.needed])
                    return True
    if acc.needed <= topo.cpus_per_socket():
        for cpus in free_cores_in_socket(acc, True):
            if len(cpus) >= acc.needed:
                acc.take(cpus[: acc.needed])
                return True
    unsatisfied = []
    for cpus in sorted(free_cores_in_socket(acc, True), key=len, reverse=True):
        if not acc.needs(len(cpus)):
            unsatisfied.append(cpus)
            continue
        acc.take(cpus)
        if acc.satisfied():
            return True
    return _take_cores_from_fullest(acc, unsatisfied)


def _take_cores_from_fullest(acc: Accumulator, groups: list[list[int]]) -> bool:
    per_core = acc.topology.cpus_per_core()
    if not acc.needs(per_core):
        return False
    for cpus in sorted(groups, key=len):
        for i in range(0, len(cpus), per_core):
            acc.take(cpus[i : i + per_core])
            if acc.satisfied():
                return True
            if not acc.needs(per_core):
                break
    return False


def _take_spread(acc: Accumulator) -> bool:
    """The SpreadByPCPUs half: one NUMA node, then one socket, by the strategy."""
    topo = acc.topology
    if acc.needed <= topo.cpus_per_node():
        for filter_exclusive in (True, False):
            for cpus in free_cpus_in_node(acc, filter_exclusive):
                if len(cpus) >= acc.needed:
                    acc.take(spread_cpus(acc, cpus)[: acc.needed])
                    return True
    if acc.needed <= topo.cpus_per_socket():
        for filter_exclusive in (True, False):
            for cpus in free_cpus_in_socket(acc, filter_exclusive):
                if len(cpus) >= acc.needed:
                    acc.take(spread_cpus(acc, cpus)[: acc.needed])
                    return True
    return False


def take_cpus(
    topology: KoordCPUTopology,
    max_ref_count: int,
    available: Iterable[int],
    allocated: Mapping[int, CPUInfo],
    needed: int,
    bind_policy: str,
    exclusive_policy: str,
    strategy: str,
) -> frozenset[int]:
    """takeCPUs. Raises AllocationError with upstream's message when it cannot."""
    acc = new_accumulator(
        topology, max_ref_count, available, allocated, needed, exclusive_policy, strategy
    )
    if acc.satisfied():
        return frozenset(acc.result)
    if acc.failed():
        raise AllocationError("not enough cpus available to satisfy request")
    full = bind_policy == CPUBindPolicy.FULL_PCPUS
    if (full or topology.cpus_per_core() == 1) and _take_whole_cores(acc):
        return frozenset(acc.result)
    if not full and _take_spread(acc):
        return frozenset(acc.result)
    for filter_exclusive in (True, False):
        for cpu in spread_cpus(acc, free_cpus(acc, filter_exclusive)):
            if acc.needs(1):
                acc.take([cpu])
            if acc.satisfied():
                return frozenset(acc.result)
    raise AllocationError("failed to allocate cpus")


def take_preferred_cpus(
    topology: KoordCPUTopology,
    max_ref_count: int,
    available: frozenset[int],
    preferred: frozenset[int],
    allocated: Mapping[int, CPUInfo],
    needed: int,
    bind_policy: str,
    exclusive_policy: str,
    strategy: str,
) -> frozenset[int]:
    """takePreferredCPUs: preferred (reserved-for-us) cpus first, the rest from available.

    Reconstructed from koordinator's call sites; the indexed sources only hold a stub.
    """
    args = (bind_policy, exclusive_policy, strategy)
    usable = available & preferred
    if not usable:
        return take_cpus(topology, max_ref_count, available, allocated, needed, *args)
    if needed <= len(usable):
        return take_cpus(topology, max_ref_count, usable, allocated, needed, *args)
    first = take_cpus(topology, max_ref_count, usable, allocated, len(usable), *args)
    rest = take_cpus(
        topology, max_ref_count, available - first, allocated, needed - len(first), *args
    )
    return first | rest


def filter_by_required_bind_policy(
    policy: str, available: Iterable[int], topology: KoordCPUTopology
) -> frozenset[int]:
    """filterCPUsByRequiredCPUBindPolicy: whole free cores, or one cpu per core."""
    details = keep_only(topology.details, available)
    cores: dict[int, list[int]] = {}
    for info in details.values():
        cores.setdefault(info.core, []).append(info.cpu)
    if policy == CPUBindPolicy.FULL_PCPUS:
        per_core = topology.cpus_per_core()
        return frozenset(c for cpus in cores.values() if len(cpus) == per_core for c in cpus)
    if policy == CPUBindPolicy.SPREAD_BY_PCPUS:
        return frozenset(min(cpus) for cpus in cores.values())
    return frozenset(details)


def satisfies_required_bind_policy(
    policy: str, cpus: frozenset[int], topology: KoordCPUTopology
) -> bool:
    """satisfiedRequiredCPUBindPolicy: whole cores only, or one cpu per core only."""
    used_cores = {topology.details[c].core for c in cpus}
    if policy == CPUBindPolicy.FULL_PCPUS:
        return len(used_cores) * topology.cpus_per_core() == len(cpus)
    if policy == CPUBindPolicy.SPREAD_BY_PCPUS:
        return len(used_cores) == len(cpus)
    return True
