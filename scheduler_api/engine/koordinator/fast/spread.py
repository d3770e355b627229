"""Mirrors: koordinator.reference.numa.distribute.

tryBestToDistributeEvenly for one pod and one set of books, mask after mask.

`koordinator.reference.numa.distribute` works one hint out from scratch: it sorts the requests,
collects the published names and sorts the hint's NUMA nodes for every resource. The
counting hint walk asks the same question for up to 2^N - 1 masks with the same
requests and amounts, so here that work is done once. Upstream's sort compares amounts
by *position* (see `positional_sort`), so the order it leaves depends only on the
mask's width, not on which NUMA nodes it holds: its permutation is kept per resource
and width. Property-tested against `distribute`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations

from scheduler_api.engine.koordinator.reference.numa import (
    ResourceOptions,
    positional_orders,
    positional_sort,
)
from scheduler_api.engine.koordinator.reference.state import ResourceMap

NO_AMOUNTS: ResourceMap = {}


@dataclass(frozen=True, slots=True)
class Mask:
    """One NUMA mask: its NUMA ids, sorted as distribute walks them, and their positions
    in the node's list of NUMA nodes."""

    numas: frozenset[int]
    ids: tuple[int, ...]
    positions: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Width:
    """The masks of one width in enumeration order. A sum over a mask is its parent's
    (the mask without its last position, at `parents[i]` among the previous width's
    masks; 0 for width 1) plus the last NUMA node's (`lasts[i]`)."""

    masks: tuple[Mask, ...]
    parents: tuple[int, ...]
    lasts: tuple[int, ...]


@lru_cache(maxsize=256)
def masks_by_width(
    numa_ids: tuple[int, ...], barred: frozenset[int] = frozenset()
) -> tuple[Width, ...]:
    """Every mask of `numa_ids` in GetTopologyHints' order: by width, then as
    itertools.combinations lists them. O(2^N) masks, built once per NUMA id list.

    With `barred`, only the masks holding none of those NUMA ids, in the same order (the
    combinations of the other positions, which keep their lexicographic order); every
    width is still listed, empty where none is left. A kept mask's parent is kept too.
    """
    widths: list[Width] = []
    index_of: dict[tuple[int, ...], int] = {(): 0}
    allowed = [p for p, numa in enumerate(numa_ids) if numa not in barred]
    for size in range(1, len(numa_ids) + 1):
        masks: list[Mask] = []
        parents: list[int] = []
        lasts: list[int] = []
        row_index: dict[tuple[int, ...], int] = {}
        for combo in combinations(allowed, size):
            ids = tuple(numa_ids[p] for p in combo)
            row_index[combo] = len(masks)
            masks.append(Mask(frozenset(ids), tuple(sorted(ids)), combo))
            parents.append(index_of[combo[:-1]])
            lasts.append(combo[-1])
        widths.append(Width(tuple(masks), tuple(parents), tuple(lasts)))
        index_of = row_index
    return tuple(widths)


class Spreader:
    """`distribute` for fixed requests and amounts, over any mask."""

    __slots__ = (
        "_orders", "cpus_per_core", "cpus_whole", "full_cores", "left", "requests", "totals",
    )  # fmt: skip

    def __init__(
        self, opts: ResourceOptions, totals: Mapping[int, ResourceMap], cpus_per_core: int
    ) -> None:
        names = {name for amounts in totals.values() for name in amounts}
        self.totals = totals
        # a zero request places nothing and misses nothing; unpublished ones are skipped
        self.requests = tuple(
            (name, amount)
            for name, amount in sorted(opts.requests.items())
            if name in names and amount != 0
        )
        self.cpus_whole = opts.request_cpu_bind  # splitQuantity: whole cpus when binding
        self.full_cores = opts.whole_cores
        self.cpus_per_core = cpus_per_core
        self._orders: dict[tuple[str, int], list[int]] = {}
        # per requested name, what each NUMA node has left of it
        self.left = {
            name: {numa: amounts.get(name, 0) for numa, amounts in totals.items()}
            for name, _ in self.requests
        }

    def _order(self, name: str, width: int) -> list[int]:
        """The positions `positional_sort` leaves a width-`width` hint's NUMA nodes in."""
        key = (name, width)
        order = self._orders.get(key)
        if order is None:
            order = self._orders[key] = positional_sort(list(range(width)), self.totals, name)
        return order

    def orders(self, name: str, count: int) -> list[list[int]]:
        """`_order(name, w)` for w in 1..count, worked out together (unless all are kept
        already: `_order` keeps only the widths a walk has spread)."""
        keys = [(name, width) for width in range(1, count + 1)]
        if any(key not in self._orders for key in keys):
            self._orders.update(zip(keys, positional_orders(count, self.totals, name), strict=True))
        return [self._orders[key] for key in keys]

    def _cpu_share(self, amount: int, count: int) -> int:
        """splitQuantity for cpu when binding: whole cpus, or whole cores under FullPCPUs."""
        cores = -(-amount // 1000)
        if self.full_cores:
            return cores // self.cpus_per_core // count * self.cpus_per_core * 1000
        return cores // count * 1000

    def spread_alone(
        self, numa: int, totals: Mapping[int, ResourceMap]
    ) -> tuple[dict[int, dict[str, int]], list[str]]:
        """`distribute` over NUMA node `numa` alone, with `totals` (amounts that changed
        since, under the same names: one NUMA node needs no order)."""
        placed: dict[str, int] = {}
        missing = []
        left = totals.get(numa, NO_AMOUNTS)
        for name, amount in self.requests:
            share = self._cpu_share(amount, 1) if self.cpus_whole and name == "cpu" else amount
            got = min(left.get(name, 0), share)
            if got != 0:
                placed[name] = got
            if amount != got:
                missing.append(f"Insufficient NUMA {name}")
        return ({numa: placed} if placed else {}), missing

    def spread(
        self, numas: Sequence[int], *, all_missing: bool = True
    ) -> tuple[dict[int, dict[str, int]], list[str]]:
        """`distribute` over the (sorted) NUMA ids `numas`: (placed, missing).

        Without `all_missing`, it stops at the first resource missing (placed is then
        partial): for callers that only ask whether distribute succeeds.
        """
        placed: dict[int, dict[str, int]] = {}
        missing = []
        for name, amount in self.requests:
            for numa, got in self._spread_name(name, amount, numas):
                placed.setdefault(numa, {})[name] = got
                amount -= got
            if amount != 0:
                missing.append(f"Insufficient NUMA {name}")
                if not all_missing:
                    break
        return placed, missing

    def shares_fit(self, numas: Sequence[int]) -> bool:
        """True: `spread` over `numas` surely misses nothing (False says nothing).

        Every NUMA node has at least ceil(amount / width) of each requested name. An
        amount is split by successive floors (what is left // the NUMA nodes left), so
        while each NUMA node gives its whole share, every share is the floor or the
        ceiling of amount / width: none asks for more than each has. Whole cpus are
        split by another rule (`_cpu_share`): not answered here."""
        if self.cpus_whole:
            return False
        width = len(numas)
        for name, amount in self.requests:
            need, left = -(-amount // width), self.left[name]
            for numa in numas:
                if left.get(numa, 0) < need:
                    return False
        return True

    def spread_cpu(self, numas: Sequence[int]) -> tuple[dict[int, int], bool] | None:
        """`spread`'s cpu alone (each name is distributed on its own): the cpu placed in
        each NUMA node that gets some, and whether all of it was; None when cpu is not
        requested."""
        for name, amount in self.requests:
            if name == "cpu":
                placed = dict(self._spread_name(name, amount, numas))
                return placed, sum(placed.values()) == amount
        return None

    def _spread_name(self, name: str, amount: int, numas: Sequence[int]) -> list[tuple[int, int]]:
        """distribute of one requested name over the (sorted) NUMA ids `numas`: each NUMA
        node given some, in order, with what it gets."""
        width, whole, left = len(numas), self.cpus_whole and name == "cpu", self.left[name]
        given = []
        for i, position in enumerate(self._order(name, width)):
            numa = numas[position]
            share = self._cpu_share(amount, width - i) if whole else amount // (width - i)
            got = left.get(numa, 0)
            got = share if share < got else got
            if got != 0:
                given.append((numa, got))
                amount -= got
        return given
