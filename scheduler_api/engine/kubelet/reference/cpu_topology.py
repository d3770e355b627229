"""CPU topology of one node: kubelet's ``CPUTopology`` plus its ``CPUDetails`` queries.

Each logical CPU belongs to one core, one socket and one NUMA node. Cores are
identified the way kubelet identifies them after discovery: cAdvisor reports
core ids per socket, so kubelet renames every core to the lowest CPU id among
its threads (``getUniqueCoreID``). :meth:`CPUTopology.from_cpus` does the same
when the input's core ids repeat across sockets; when they are already unique
per machine (as in kubelet's own test fixtures) they are kept, so tie-breaking
by core id matches kubelet's tests.

Each CPU also sits in one uncore (last-level, L3) cache, which only the
``prefer-align-cpus-by-uncorecache`` option reads. kubelet's ``getUncoreCacheID``
(``topology/topology.go``) takes the first L3 cache cAdvisor reports for the core and,
when it reports none, the socket id; :meth:`CPUTopology.from_cpus` does the same when
it is given no uncore table (``uncore_known`` then says so).

Everything is precomputed at construction (O(n) for n CPUs); every query is a
dictionary lookup.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from scheduler_api.engine.kubelet.reference.bitmask import MAX_BITS


@dataclass(frozen=True, slots=True)
class CPUInfo:
    """Where one logical CPU sits. ``core`` is the machine-unique core id."""

    core: int
    socket: int
    numa: int
    uncore: int = -1  # the uncore (L3) cache id; from_cpus sets it (the socket when unknown)


def _validate_rows(cpus: Iterable[tuple[int, int, int, int]]) -> list[tuple[int, int, int, int]]:
    rows = [tuple(row) for row in cpus]
    if not rows:
        raise ValueError("a CPU topology needs at least one CPU; got none")
    for row in rows:
        if len(row) != 4 or not all(isinstance(v, int) and not isinstance(v, bool) for v in row):
            raise ValueError(f"each CPU is (cpu_id, core_id, socket_id, numa_id) ints; got {row!r}")
        if min(row) < 0:
            raise ValueError(f"ids must be non-negative; got {row!r}")
        if row[3] >= MAX_BITS:
            raise ValueError(f"NUMA node id {row[3]} of CPU {row[0]} exceeds kubelet's 0-63 range")
    dupes = sorted(cpu for cpu, seen in Counter(row[0] for row in rows).items() if seen > 1)
    if dupes:
        raise ValueError(f"duplicate CPU ids in topology: {dupes}")
    return [(cpu, core, socket, numa) for cpu, core, socket, numa in rows]


def _unique_core_ids(rows: list[tuple[int, int, int, int]]) -> dict[int, int]:
    """cpu -> machine-unique core id (kubelet's lowest-thread rule when ids repeat)."""
    sockets_of_core: dict[int, set[int]] = defaultdict(set)
    for _, core, socket, _ in rows:
        sockets_of_core[core].add(socket)
    if all(len(sockets) == 1 for sockets in sockets_of_core.values()):
        return {cpu: core for cpu, core, _, _ in rows}
    lowest: dict[tuple[int, int], int] = {}
    for cpu, core, socket, _ in rows:
        key = (socket, core)
        lowest[key] = min(cpu, lowest.get(key, cpu))
    return {cpu: lowest[(socket, core)] for cpu, core, socket, _ in rows}


def _group(pairs: Iterable[tuple[int, int]]) -> dict[int, frozenset[int]]:
    groups: dict[int, set[int]] = defaultdict(set)
    for key, value in pairs:
        groups[key].add(value)
    return {key: frozenset(values) for key, values in groups.items()}


def _validate_uncore(cpus: Iterable[int], uncore: Mapping[int, int]) -> None:
    """An uncore table names every CPU once, with non-negative int ids, and nothing else."""
    ids = set(cpus)
    for cpu, cache in uncore.items():
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (cpu, cache)):
            raise ValueError(f"uncore caches map CPU id to cache id (ints); got {cpu!r}: {cache!r}")
        if cache < 0:
            raise ValueError(f"uncore cache id of CPU {cpu} must be non-negative; got {cache}")
    missing, extra = ids - uncore.keys(), uncore.keys() - ids
    if missing or extra:
        raise ValueError(
            "the uncore cache table must name every CPU of the node and no other: "
            f"missing {format_cpuset(missing)}, unknown {format_cpuset(extra)}"
        )


class CPUTopology:
    """An immutable node CPU topology. Build it with :meth:`from_cpus`."""

    def __init__(self, details: Mapping[int, CPUInfo], *, uncore_known: bool = False) -> None:
        self._details = MappingProxyType(dict(details))
        self.uncore_known = uncore_known
        items = self._details.items()
        self._by_socket = _group((i.socket, c) for c, i in items)
        self._by_numa = _group((i.numa, c) for c, i in items)
        self._by_core = _group((i.core, c) for c, i in items)
        self._cores_by_socket = _group((i.socket, i.core) for i in self._details.values())
        self._cores_by_numa = _group((i.numa, i.core) for i in self._details.values())
        self._sockets_by_numa = _group((i.numa, i.socket) for i in self._details.values())
        self._numa_by_socket = _group((i.socket, i.numa) for i in self._details.values())
        self._by_uncore = _group((i.uncore, c) for c, i in items)
        self._uncore_by_numa = _group((i.numa, i.uncore) for i in self._details.values())

    @classmethod
    def from_cpus(
        cls,
        cpus: Iterable[tuple[int, int, int, int]],
        uncore_caches: Mapping[int, int] | None = None,
    ) -> CPUTopology:
        """Build from ``(cpu_id, core_id, socket_id, numa_id)`` rows and, when known, each
        CPU's uncore cache id (``{cpu: cache}``, every CPU named); ``ValueError`` if bad.
        Without an uncore table each CPU's uncore cache is its socket, as kubelet's
        ``getUncoreCacheID`` falls back when cAdvisor reports no L3 cache."""
        rows = _validate_rows(cpus)
        core_of = _unique_core_ids(rows)
        known = bool(uncore_caches)
        if uncore_caches:
            _validate_uncore((row[0] for row in rows), uncore_caches)
        uncore = dict(uncore_caches) if uncore_caches else {row[0]: row[2] for row in rows}
        return cls(
            {
                cpu: CPUInfo(core_of[cpu], socket, numa, uncore[cpu])
                for cpu, _, socket, numa in rows
            },
            uncore_known=known,
        )

    def __repr__(self) -> str:
        return (
            f"CPUTopology(cpus={self.num_cpus}, cores={self.num_cores}, "
            f"sockets={self.num_sockets}, numa_nodes={self.num_numa_nodes})"
        )

    @property
    def details(self) -> Mapping[int, CPUInfo]:
        """Read-only ``cpu -> CPUInfo`` (kubelet's ``CPUDetails``)."""
        return self._details

    @property
    def num_cpus(self) -> int:
        return len(self._details)

    @property
    def num_cores(self) -> int:
        return len(self._by_core)

    @property
    def num_sockets(self) -> int:
        return len(self._by_socket)

    @property
    def num_numa_nodes(self) -> int:
        return len(self._by_numa)

    @property
    def cpus_per_core(self) -> int:
        """``num_cpus // num_cores``, kubelet's SMT level (assumes a uniform machine)."""
        return self.num_cpus // self.num_cores

    @property
    def num_uncore_caches(self) -> int:
        return len(self._by_uncore)

    @property
    def cpus_per_uncore(self) -> int:
        """``CPUsPerUncore``: ``num_cpus // num_uncore_caches`` (assumes equal caches)."""
        return self.num_cpus // self.num_uncore_caches

    @property
    def cpus_per_socket(self) -> int:
        return self.num_cpus // self.num_sockets

    @property
    def cpus_per_numa(self) -> int:
        return self.num_cpus // self.num_numa_nodes

    def cpus(self) -> frozenset[int]:
        return frozenset(self._details)

    def sockets(self) -> tuple[int, ...]:
        return tuple(sorted(self._by_socket))

    def numa_nodes(self) -> tuple[int, ...]:
        return tuple(sorted(self._by_numa))

    def cores(self) -> tuple[int, ...]:
        return tuple(sorted(self._by_core))

    def info(self, cpu: int) -> CPUInfo:
        """Where ``cpu`` sits; ``ValueError`` for an id this node does not have."""
        try:
            return self._details[cpu]
        except KeyError:
            raise ValueError(
                f"unknown CPU id {cpu}; this node has CPUs {format_cpuset(self.cpus())}"
            ) from None

    def core_of(self, cpu: int) -> int:
        return self.info(cpu).core

    def socket_of(self, cpu: int) -> int:
        return self.info(cpu).socket

    def numa_of(self, cpu: int) -> int:
        return self.info(cpu).numa

    def cpus_in_socket(self, socket: int) -> frozenset[int]:
        return self._by_socket.get(socket, frozenset())

    def cpus_in_numa(self, numa: int) -> frozenset[int]:
        return self._by_numa.get(numa, frozenset())

    def cpus_in_core(self, core: int) -> frozenset[int]:
        return self._by_core.get(core, frozenset())

    def cpus_in_uncore(self, uncore: int) -> frozenset[int]:
        return self._by_uncore.get(uncore, frozenset())

    def uncore_caches_in_numa(self, numa: int) -> frozenset[int]:
        return self._uncore_by_numa.get(numa, frozenset())

    def siblings(self, cpu: int) -> frozenset[int]:
        """All hardware threads of ``cpu``'s core, ``cpu`` included (like sysfs)."""
        return self.cpus_in_core(self.core_of(cpu))

    def cores_in_socket(self, socket: int) -> frozenset[int]:
        return self._cores_by_socket.get(socket, frozenset())

    def cores_in_numa(self, numa: int) -> frozenset[int]:
        return self._cores_by_numa.get(numa, frozenset())

    def sockets_in_numa(self, numa: int) -> frozenset[int]:
        return self._sockets_by_numa.get(numa, frozenset())

    def numa_nodes_in_socket(self, socket: int) -> frozenset[int]:
        return self._numa_by_socket.get(socket, frozenset())

    def cpus_in_numa_nodes(self, numa_nodes: Iterable[int]) -> frozenset[int]:
        return frozenset().union(*(self.cpus_in_numa(n) for n in numa_nodes))

    def cpus_in_sockets(self, sockets: Iterable[int]) -> frozenset[int]:
        return frozenset().union(*(self.cpus_in_socket(s) for s in sockets))

    def sockets_in_numa_nodes(self, numa_nodes: Iterable[int]) -> frozenset[int]:
        return frozenset().union(*(self.sockets_in_numa(n) for n in numa_nodes))

    def unknown(self, cpus: Iterable[int]) -> frozenset[int]:
        """The ids in ``cpus`` that are not CPUs of this node."""
        return frozenset(cpus) - self._details.keys()


def format_cpuset(cpus: Iterable[int]) -> str:
    """Kubelet-style cpuset text, e.g. ``0-3,8,10-11``; ``(none)`` when empty."""
    ranges: list[list[int]] = []
    for cpu in sorted(set(cpus)):
        if ranges and cpu == ranges[-1][1] + 1:
            ranges[-1][1] = cpu
        else:
            ranges.append([cpu, cpu])
    text = ",".join(str(a) if a == b else f"{a}-{b}" for a, b in ranges)
    return text or "(none)"
