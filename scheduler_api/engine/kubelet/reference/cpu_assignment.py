"""kubelet's ``cpu_assignment.go``: the CPU accumulator and the two takeByTopology algorithms.

:func:`take_packed` is NUMA-packed (whole NUMA nodes or sockets, then, with
``prefer-align-cpus-by-uncorecache``, whole or partial uncore caches, then whole
cores, then threads, fullest first); :func:`take_distributed` is the
``distribute-cpus-across-numa`` variant. :mod:`cpumanager` chooses between
them from the static policy options. The uncore steps follow kubernetes master after
v1.35 (``takeUncoreCache``, ``takeFullUncore``, ``takePartialUncore`` with its
whole-core rounding for odd requests on SMT machines).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from itertools import combinations

from scheduler_api.engine.kubelet.reference.cpu_topology import CPUTopology, format_cpuset
from scheduler_api.engine.model.errors import AllocationError


def _dedupe(ids: Iterable[int]) -> list[int]:
    """Keep the first occurrence of each id, in order."""
    return list(dict.fromkeys(ids))


class CPUAccumulator:
    """kubelet's ``cpuAccumulator``: free CPUs, the result so far, how many are still needed.

    Every sort is kubelet's: fewest free CPUs first ("pack the fullest"), ties by
    id, children sorted inside their parent's order. If sockets are at least as
    many as NUMA nodes, NUMA nodes are the upper level; otherwise sockets are.
    Each sort costs O(n log n) for n free CPUs.
    """

    def __init__(self, topo: CPUTopology, free: Iterable[int], needed: int, spread: bool) -> None:
        self.topo = topo
        self.free: set[int] = set(free)
        self.result: set[int] = set()
        self.needed = needed
        self.spread = spread
        self.numa_first = topo.num_sockets >= topo.num_numa_nodes

    def take(self, cpus: Iterable[int]) -> None:
        taken = set(cpus)
        self.result |= taken
        self.free -= taken
        self.needed -= len(taken)

    def needs(self, n: int) -> bool:
        return self.needed >= n

    def satisfied(self) -> bool:
        return self.needed < 1

    def failed(self) -> bool:
        return self.needed > len(self.free)

    def free_in(self, cpus: frozenset[int]) -> int:
        return len(self.free & cpus)

    def _ids(self, level: str, within: frozenset[int] | None = None) -> set[int]:
        cpus = self.free if within is None else self.free & within
        return {getattr(self.topo.details[cpu], level) for cpu in cpus}

    def _sort(self, ids: Iterable[int], cpus_of: Callable[[int], frozenset[int]]) -> list[int]:
        return sorted(ids, key=lambda i: (self.free_in(cpus_of(i)), i))

    def sorted_numa_nodes(self) -> list[int]:
        topo = self.topo
        if self.numa_first:
            return self._sort(self._ids("numa"), topo.cpus_in_numa)
        return _dedupe(
            numa
            for socket in self.sorted_sockets()
            for numa in self._sort(
                self._ids("numa", topo.cpus_in_socket(socket)), topo.cpus_in_numa
            )
        )

    def sorted_sockets(self) -> list[int]:
        topo = self.topo
        if not self.numa_first:
            return self._sort(self._ids("socket"), topo.cpus_in_socket)
        return _dedupe(
            socket
            for numa in self.sorted_numa_nodes()
            for socket in self._sort(
                self._ids("socket", topo.cpus_in_numa(numa)), topo.cpus_in_socket
            )
        )

    def sorted_cores(self) -> list[int]:
        topo = self.topo
        cpus_of: Callable[[int], frozenset[int]] = topo.cpus_in_numa
        if self.numa_first:  # cores sit below sockets, else below NUMA nodes
            parents, cpus_of = self.sorted_sockets(), topo.cpus_in_socket
        else:
            parents = self.sorted_numa_nodes()
        return _dedupe(
            core
            for parent in parents
            for core in self._sort(self._ids("core", cpus_of(parent)), topo.cpus_in_core)
        )

    def sorted_cpus(self) -> list[int]:
        """Packed: core by core, ids ascending. Spread: socket by socket, ids ascending."""
        if self.spread:
            groups = [self.free & self.topo.cpus_in_socket(s) for s in self.sorted_sockets()]
        else:
            groups = [self.free & self.topo.cpus_in_core(c) for c in self.sorted_cores()]
        return _dedupe(cpu for group in groups for cpu in sorted(group))

    def _whole(
        self, ids: list[int], cpus_of: Callable[[int], frozenset[int]], size: int
    ) -> list[int]:
        # kubelet calls a unit free when ``size`` of its CPUs are free; also
        # requiring all of its CPUs keeps irregular topologies from over-taking.
        return [i for i in ids if self.free_in(cpus_of(i)) == size == len(cpus_of(i))]

    def free_numa_nodes(self) -> list[int]:
        cpus_of = self.topo.cpus_in_numa
        return [n for n in self.sorted_numa_nodes() if self.free_in(cpus_of(n)) == len(cpus_of(n))]

    def free_sockets(self) -> list[int]:
        topo = self.topo
        return self._whole(self.sorted_sockets(), topo.cpus_in_socket, topo.cpus_per_socket)

    def free_cores(self) -> list[int]:
        topo = self.topo
        return self._whole(self.sorted_cores(), topo.cpus_in_core, topo.cpus_per_core)

    def _take_units(self, units: list[int], cpus_of: Callable[[int], frozenset[int]]) -> None:
        for unit in units:
            if self.needs(len(cpus_of(unit))):
                self.take(cpus_of(unit))

    def take_full_numa_nodes(self) -> None:
        self._take_units(self.free_numa_nodes(), self.topo.cpus_in_numa)

    def take_full_sockets(self) -> None:
        self._take_units(self.free_sockets(), self.topo.cpus_in_socket)

    def take_full_cores(self) -> None:
        self._take_units(self.free_cores(), self.topo.cpus_in_core)

    # --- prefer-align-cpus-by-uncorecache ------------------------------------------

    def sorted_uncore_caches(self) -> list[int]:
        """``sortAvailableUncoreCaches``: NUMA node by NUMA node (in their order), each
        node's uncore caches with free CPUs, fullest first. kubelet does not dedupe: a
        cache spanning two NUMA nodes is listed under each."""
        topo = self.topo
        return [
            uncore
            for numa in self.sorted_numa_nodes()
            for uncore in self._sort(
                self._ids("uncore", topo.cpus_in_numa(numa)), topo.cpus_in_uncore
            )
        ]

    def take_full_uncore(self) -> None:
        """``takeFullUncore``: every wholly free uncore cache the request still covers."""
        topo = self.topo
        for uncore in self.sorted_uncore_caches():
            cpus = topo.cpus_in_uncore(uncore)
            if self.free_in(cpus) == len(cpus) and self.needs(len(cpus)):
                self.take(cpus)

    def take_partial_uncore(self, uncore: int) -> None:
        """``takePartialUncore``: the first (by core id) free cores of ``uncore`` that
        hold what is still needed, taken only if their free CPUs are exactly that many.
        An odd remainder on an SMT machine rounds up to whole cores and leaves out the
        highest CPU id of them."""
        per_core = self.topo.cpus_per_core
        cores_needed = (self.needed + per_core - 1) // per_core
        free_here = self.free & self.topo.cpus_in_uncore(uncore)
        cores = sorted({self.topo.details[cpu].core for cpu in free_here})[:cores_needed]
        cpus = sorted(cpu for core in cores for cpu in self.free & self.topo.cpus_in_core(core))
        if self.needed % 2 and per_core > 1 and len(cpus) > self.needed:
            cpus = cpus[:-1]
        if len(cpus) == self.needed:
            self.take(cpus)

    def take_uncore_cache(self) -> None:
        """``takeUncoreCache``: per uncore cache in sorted order, whole free caches while
        the request covers one, then the cache itself partially if it fits."""
        per_uncore = self.topo.cpus_per_uncore
        for uncore in self.sorted_uncore_caches():
            if self.needs(per_uncore):
                self.take_full_uncore()
            if self.satisfied():
                return
            self.take_partial_uncore(uncore)
            if self.satisfied():
                return

    def take_remaining_cpus(self) -> None:
        for cpu in self.sorted_cpus():
            self.take((cpu,))
            if self.satisfied():
                return


def not_enough(count: int, pool: Iterable[int]) -> AllocationError:
    free = frozenset(pool)
    return AllocationError(
        f"cannot take {count} CPUs: only {len(free)} are free for exclusive use "
        f"({format_cpuset(free)}); kubelet refuses with 'not enough cpus available to "
        f"satisfy request: requested={count}, available={len(free)}'"
    )


def take_packed(
    topo: CPUTopology,
    pool: Iterable[int],
    count: int,
    *,
    spread: bool = False,
    prefer_uncore: bool = False,
) -> frozenset[int]:
    """``takeByTopologyNUMAPacked``: whole NUMA nodes/sockets, (with ``prefer_uncore``)
    uncore caches, whole cores, then threads.

    The raw kubelet algorithm over ``pool`` (ids assumed valid); prefer
    :func:`take_cpus`, which validates input and applies the policy options.
    """
    acc = CPUAccumulator(topo, pool, count, spread)
    if acc.satisfied():
        return frozenset()
    if acc.failed():
        raise not_enough(count, acc.free)
    steps = [acc.take_full_numa_nodes, acc.take_full_sockets]
    if not acc.numa_first:
        steps.reverse()
    if prefer_uncore:
        steps.append(acc.take_uncore_cache)
    if not spread:  # distribute-cpus-across-cores never takes whole cores
        steps.append(acc.take_full_cores)
    steps.append(acc.take_remaining_cpus)
    for step in steps:
        step()
        if acc.satisfied():
            return frozenset(acc.result)
    raise AllocationError(f"failed to allocate {count} CPUs from {format_cpuset(pool)}")


def _round3(value: float) -> float:
    """Go's ``math.Round(v*1000)/1000``: half away from zero (Python rounds half to even)."""
    scaled = value * 1000
    whole = math.floor(scaled)
    return (whole + (1 if scaled - whole >= 0.5 else 0)) / 1000


def _std_dev(values: Sequence[int]) -> float:
    """Population standard deviation, mean and result rounded to 3 decimals (as kubelet)."""
    mean = _round3(sum(values) / len(values))
    return _round3(math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)))


def _numa_range(acc: CPUAccumulator, group: int) -> range:
    """``rangeNUMANodesNeededToSatisfy``: how many NUMA nodes a distribution may use."""
    groups_total = (acc.topo.num_cpus - 1) // group + 1
    groups_per_numa = (groups_total - 1) // acc.topo.num_numa_nodes + 1
    groups_needed = (acc.needed - 1) // group + 1
    low = (groups_needed - 1) // groups_per_numa + 1
    high = min(groups_needed, len(acc._ids("numa")))
    return range(low, high + 1)


def _remainder_balance(
    after: dict[int, int], subset: Sequence[int], left: int, group: int
) -> float | None:
    """Hand ``left`` CPUs round-robin in ``group`` chunks over ``subset``; score the result.

    ``None`` when the subset cannot take them. Kubelet loops forever when no NUMA
    node of the subset has a whole group left; here that counts as "cannot".
    """
    after = dict(after)
    if sum(after[n] for n in subset) < left:
        return None
    while left > 0:
        progressed = False
        for numa in subset:
            if left and after[numa] >= group:
                after[numa] -= group
                left -= group
                progressed = True
        if not progressed:
            return None
    return _std_dev(list(after.values()))


def _score_combo(
    free: dict[int, int], combo: tuple[int, ...], count: int, group: int
) -> tuple[float, tuple[int, ...]] | None:
    """Balance score of spreading ``count`` CPUs over ``combo``, and its remainder subset."""
    if sum(free[n] for n in combo) < count or sum(free[n] // group for n in combo) * group < count:
        return None
    share = (count // len(combo) // group) * group
    if any(free[n] < share for n in combo):
        return None
    after = {n: free[n] - (share if n in combo else 0) for n in free}
    left = count - share * len(combo)
    if left == 0:
        return _std_dev(list(after.values())), ()
    candidates = [n for n in combo if after[n] >= group]
    best: tuple[float, tuple[int, ...]] | None = None
    for size in range(len(candidates), 0, -1):  # prefer spreading over more nodes
        for subset in combinations(candidates, size):
            balance = _remainder_balance(after, subset, left, group)
            if balance is not None and (best is None or balance < best[0]):
                best = (balance, subset)
    return best


def _best_combo(
    acc: CPUAccumulator, numas: list[int], k: int, count: int, group: int
) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """The k-combination of NUMA nodes (and remainder subset) with the lowest std-dev."""
    free = {n: acc.free_in(acc.topo.cpus_in_numa(n)) for n in numas}
    best: tuple[float, tuple[int, ...], tuple[int, ...]] | None = None
    for combo in combinations(numas, k):
        if best is not None and best[0] == 0:
            break  # a perfect balance cannot be beaten
        score = _score_combo(free, combo, count, group)
        if score is not None and (best is None or score[0] < best[0]):
            best = (score[0], combo, score[1])
    return None if best is None else (best[1], best[2])


def take_distributed(
    topo: CPUTopology, pool: Iterable[int], count: int, group: int = 1, *, spread: bool = False
) -> frozenset[int]:
    """``takeByTopologyNUMADistributed`` (KEP-2902): spread evenly over the fewest NUMA nodes.

    Cost: O(sum over k of C(N, k) * 2^k) balance evaluations for N NUMA nodes.
    """
    pool = frozenset(pool)
    if count % group:
        return take_packed(topo, pool, count, spread=spread)
    acc = CPUAccumulator(topo, pool, count, spread)
    if acc.satisfied():
        return frozenset()
    if acc.failed():
        raise not_enough(count, pool)
    numas = acc.sorted_numa_nodes()
    for k in _numa_range(acc, group):
        chosen = _best_combo(acc, numas, k, count, group)
        if chosen is not None:
            return _take_distribution(acc, chosen[0], chosen[1], group)
    return take_packed(topo, pool, count, spread=spread)


def _take_distribution(
    acc: CPUAccumulator, combo: tuple[int, ...], remainder_set: tuple[int, ...], group: int
) -> frozenset[int]:
    """Take the even share from each chosen node, then the remainder round-robin."""
    topo, count = acc.topo, acc.needed
    share = (count // len(combo) // group) * group
    for numa in combo:
        acc.take(take_packed(topo, acc.free & topo.cpus_in_numa(numa), share, spread=acc.spread))
    left = count - share * len(combo)
    while left > 0:
        before = left
        for numa in remainder_set:
            in_numa = acc.free & topo.cpus_in_numa(numa)
            if left and len(in_numa) >= group:
                acc.take(take_packed(topo, in_numa, group, spread=acc.spread))
                left -= group
        if left == before:
            break
    if acc.needed != 0:
        raise AllocationError(f"accounting error distributing {count} CPUs over NUMA {combo}")
    return frozenset(acc.result)
