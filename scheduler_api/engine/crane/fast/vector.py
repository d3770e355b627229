"""Mirrors: crane.reference.plugin.evaluate.

crane-scheduler's Filter, Score and capacity count for many nodes at once.

A cluster what-if judges every Crane node one by one (`crane.evaluate`). Two cases
are answered here instead; every other node still goes to the reference.

Shared verdicts (`shared_verdicts`): for three groups of nodes that passed the shared
filters, Filter and Score answer the same whatever the node's zones hold, so one node
of each group is judged and its verdict stands for the group:

* the pod has no container whose cpus crane-agent would pin (a DaemonSet pod,
  cpu-policy none, no container asking for whole cpus with limits equal): the plugin
  skips it on every node, which fits with score 0;
* otherwise, a node that publishes no Crane NRT is refused (crane judges it only when
  asked to judge every node, `scheduler=crane`);
* otherwise, a node whose crane cpuManagerPolicy is not Static fits with score 0.

The copies such a node takes alone are then what the shared filters admit
(`crane.fast.count.fill_count` returns before reading a zone), and none on a refusal.

Topology-aware nodes (`aware_verdicts`): the whole request goes to one zone, the one
Go's sort puts first among those without a shortfall; the verdict depends only on
that zone, and the copies on each zone's free amounts (see the function).

Nodes that are not topology-aware (`greedy_verdicts`): where the zone Go's sort puts
first holds the whole request, the greedy fill ends there, and the verdict depends only
on that zone. Their copies are the node-level filters' limit wherever
`crane.fast.count.greedy_never_empty` vouches for that many (worked out here as a bound per
row); the other rows are filled copy by copy.

Property tests hold every row to `whatif.systems.judge_node` and to the copy-by-copy
fill.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from scheduler_api.engine.crane.cache import kept_zones
from scheduler_api.engine.crane.reference.plugin import (
    FIXED_RESOURCES,
    CraneConfig,
    CraneZone,
    compared_resources,
    evaluate,
    one_zone_greedy_verdict,
    one_zone_verdict,
    pinned_containers,
    published_amounts,
    target_request,
    topology_aware,
    whole_cores,
)
from scheduler_api.engine.model.decided import UNLIMITED
from scheduler_api.engine.model.results import PlacementResult
from scheduler_api.engine.model.snapshot import NodeSnapshot, PodSpec
from scheduler_api.engine.schedulerplugins.fast.vector import Bools, Ints, NRTIndex


def skips_pod(pod: PodSpec, config: CraneConfig) -> bool:
    """PreFilter finds no container to pin: the plugin passes every node alike."""
    return not pinned_containers(pod, config)


def shared_verdicts(
    index: NRTIndex, pod: PodSpec, rows: Bools, config: CraneConfig
) -> list[tuple[Bools, PlacementResult]]:
    """Groups of `rows` that share one verdict, each with it (see the module docstring).

    `rows` must be judged by Crane and have passed NodeUnschedulable and
    NodeResourcesFit. The groups are disjoint; rows in none are left to the reference.
    """
    if not rows.any():
        return []
    if skips_pod(pod, config):
        groups = [rows]
    else:
        crane = index.crane_nrt
        groups = [rows & ~crane, rows & crane & ~index.crane_static]
    shared = []
    for group in groups:
        members = np.flatnonzero(group)
        if len(members):
            node = index.nodes[int(members[0])]
            shared.append((group, evaluate(node, pod, config=config)))
    return shared


# --- topology-aware nodes, one zone per pod ---------------------------------------------------

GO_INSERTION_SORT_MAX = 12  # Go 1.17's sort.Slice sorts up to 12 elements without pivots
SHELL_GAP = 6  # ... after one Shell-sort pass of gap 6, which can reorder ties


@dataclass(frozen=True)
class ZoneVerdicts:
    """Rows decided on their zones (`decided`) and the verdict of each (one per zone a
    row's verdict names, shared)."""

    decided: Bools
    verdicts: dict[int, PlacementResult]


@dataclass(frozen=True)
class AwareVerdicts(ZoneVerdicts):
    """... and the copies each row's zones take alone (UNLIMITED: none limit them)."""

    copies: Ints


def aware_verdicts(
    index: NRTIndex, pod: PodSpec, rows: Bools, config: CraneConfig
) -> AwareVerdicts | None:
    """Filter, Score and zone copies of the rows of `rows` where the pod is topology-aware
    and some zone passes the shortfall check; None when the pod is not in the case.

    The case: the pod has containers to pin and requests something crane places; the
    node publishes a Crane NRT, its policy is Static, its zones (at most 12) have unique
    NUMA ids. Filter keeps the zones without a shortfall; assignTopologyResult sorts them
    by free cpu, most first (Go 1.17's sort.Slice: a Shell pass of gap 6, then an
    insertion sort), and places the whole request in the first; Score is 100. A copy
    debits only its zone, by the amounts the next cycle reads back (`crane.fast.count`).
    """
    request = _placed_request(pod, config)
    found = _case_members(index, pod, rows, aware=True) if request is not None else None
    if request is None or found is None:
        return None
    members, zones = found
    table = _ZoneTable([index.nodes[row] for row in members], zones, request)
    fits = table.fitting()
    chosen = table.first_after_sort(fits)
    # a row no zone fits is refused: the reference writes every zone's shortfall
    fitting = np.flatnonzero(fits.any(axis=1))
    decided, verdicts = _by_first_zone(
        len(index.nodes), fitting, members, zones, chosen,
        lambda zone: one_zone_verdict(zone, request),
    )  # fmt: skip
    copies = np.zeros(len(index.nodes), np.int64)
    copies[np.asarray(members, np.int64)[fitting]] = table.copies()[fitting]
    return AwareVerdicts(decided, verdicts, copies)


# --- nodes that are not topology-aware: the greedy fill ----------------------------------------


@dataclass(frozen=True)
class GreedyVerdicts(ZoneVerdicts):
    """... and per row the most copies none of whose greedy fills can come out empty
    (`crane.fast.count.greedy_never_empty`; -1 on the other rows)."""

    never_empty: Ints


def greedy_verdicts(
    index: NRTIndex, pod: PodSpec, rows: Bools, config: CraneConfig
) -> GreedyVerdicts | None:
    """Filter, Score and a bound on the copies of the rows of `rows` where the pod is not
    topology-aware and the zone sorted first takes the whole request; None when the pod
    is not in the case.

    The case: the pod has containers to pin and requests only resources `_take` places
    (any other one panics upstream); the node publishes a Crane NRT, its policy is
    Static, its zones (at most 12) have unique NUMA ids. assignTopologyResult sorts every
    zone by free cpu as `aware_verdicts` says, then fills greedily, each zone's cpu
    rounded down to whole cores first; where the first zone has at least the request of
    every fixed resource (nothing, for one not requested), the fill takes it all there
    and finishes: one zone, Score 100, whatever the other zones hold.
    """
    request = _placed_request(pod, config)
    if request is None or any(name not in FIXED_RESOURCES for name in request):
        return None
    found = _case_members(index, pod, rows, aware=False)
    if found is None:
        return None
    members, zones = found
    table = _ZoneTable([index.nodes[row] for row in members], zones, request)
    chosen = table.first_after_sort(table.valid)
    takes_all = np.ones(len(members), np.bool_)
    for name in FIXED_RESOURCES:
        first = np.take_along_axis(table.greedy_free(name), chosen[:, None], 1)[:, 0]
        takes_all &= first >= request.get(name, 0)
    positions = np.flatnonzero(takes_all)
    decided, verdicts = _by_first_zone(
        len(index.nodes), positions, members, zones, chosen,
        lambda zone: one_zone_greedy_verdict(zone, request),
    )  # fmt: skip
    never_empty = np.full(len(index.nodes), -1, np.int64)
    never_empty[np.asarray(members, np.int64)[positions]] = table.never_empty()[positions]
    return GreedyVerdicts(decided, verdicts, never_empty)


# --- what both cases share ---------------------------------------------------------------------


def _placed_request(pod: PodSpec, config: CraneConfig) -> dict[str, int] | None:
    """What the plugin places for the pod; None when it pins nothing or places nothing."""
    indices = pinned_containers(pod, config)
    request = target_request(pod, indices, config) if indices else {}
    return request if any(request.values()) else None


def _case_members(
    index: NRTIndex, pod: PodSpec, rows: Bools, *, aware: bool
) -> tuple[list[int], list[tuple[CraneZone, ...]]] | None:
    """The rows of `rows` in the case (a Crane NRT, Static, the pod topology-aware on it
    or not as `aware` says, zones `_zones_in_case`) and their zones; None if there are none."""
    candidates = rows & index.crane_nrt & index.crane_static
    members, zones = [], []
    for row in np.flatnonzero(candidates).tolist():
        node = index.nodes[row]
        if topology_aware(node, pod) == aware and _zones_in_case(listed := kept_zones(node)):
            members.append(row)
            zones.append(listed)
    return (members, zones) if members else None


def _by_first_zone(
    count: int,
    positions: Ints,
    members: list[int],
    zones: list[tuple[CraneZone, ...]],
    chosen: Ints,
    verdict_of: Callable[[CraneZone], PlacementResult],
) -> tuple[Bools, dict[int, PlacementResult]]:
    """The rows of the members at `positions`, decided with the verdict `verdict_of`
    gives their chosen zone: one per zone name and NUMA id, shared."""
    decided = np.zeros(count, np.bool_)
    found: dict[int, PlacementResult] = {}
    shared: dict[tuple[str, int], PlacementResult] = {}
    for position in positions.tolist():
        row, zone = members[position], zones[position][int(chosen[position])]
        key = (zone.name, zone.numa_id)
        if key not in shared:
            shared[key] = verdict_of(zone)
        decided[row], found[row] = True, shared[key]
    return decided, found


def _zones_in_case(zones: tuple[CraneZone, ...]) -> bool:
    return 0 < len(zones) <= GO_INSERTION_SORT_MAX and len({z.numa_id for z in zones}) == len(zones)


ZONE_ROWS = "crane-zone-rows"  # NodeSnapshot.derived: `_zone_rows`


def _zone_rows(node: NodeSnapshot) -> Ints:
    """A node's zones (at most GO_INSERTION_SORT_MAX) as crane sees them, by position:
    the free amount of each fixed resource, then the free cpu once the greedy fill
    rounds the zone's allocatable down to whole cores. Kept with the node: every
    question on it reads them."""
    rows = np.zeros((len(FIXED_RESOURCES) + 1, GO_INSERTION_SORT_MAX), np.int64)
    for column, zone in enumerate(kept_zones(node)[:GO_INSERTION_SORT_MAX]):
        for position, name in enumerate(FIXED_RESOURCES):
            rows[position, column] = zone.free(name)
        whole = whole_cores(zone.allocatable.get("cpu", 0))
        rows[-1, column] = whole - zone.requested.get("cpu", 0)
    return rows


class _ZoneTable:
    """Free amounts of each member row's zones, (rows, zones) per resource name."""

    def __init__(
        self,
        nodes: list[NodeSnapshot],
        zones: list[tuple[CraneZone, ...]],
        request: Mapping[str, int],
    ) -> None:
        """`zones`: each node's `kept_zones` (at most GO_INSERTION_SORT_MAX of them)."""
        width = max(len(z) for z in zones)
        self.request = dict(request)
        self.names = compared_resources(request)
        counts = np.array([len(listed) for listed in zones], np.int64)
        self.valid = np.arange(width)[None, :] < counts[:, None]
        kept = np.stack([node.derived(ZONE_ROWS, _zone_rows) for node in nodes])[:, :, :width]
        self.free = {name: kept[:, i] for i, name in enumerate(FIXED_RESOURCES)}
        # free cpu once the greedy fill rounds the zone's allocatable down to whole cores
        self.whole_core_free = kept[:, -1]
        for name in self.names:
            if name not in self.free:  # another requested name: read off the zones
                free = self.free[name] = np.zeros((len(zones), width), np.int64)
                for position, listed in enumerate(zones):
                    for column, zone in enumerate(listed):
                        free[position, column] = zone.free(name)

    def fitting(self) -> Bools:
        """fitsRequestForNUMANode per zone: no compared resource short."""
        fits = self.valid.copy()
        for name in self.names:
            fits &= self.free[name] >= self.request.get(name, 0)
        return fits

    def first_after_sort(self, fits: Bools) -> Ints:
        """Per row, the column of the zone sort.Slice puts first among the fitting ones."""
        order = np.argsort(~fits, axis=1, kind="stable")  # the candidates, in NRT order
        count = fits.sum(axis=1)
        keys = np.take_along_axis(np.where(fits, self.free["cpu"], 0), order, 1)
        for i in range(SHELL_GAP, keys.shape[1]):
            j = i - SHELL_GAP
            swap = (i < count) & (keys[:, i] > keys[:, j])
            for table in (keys, order):
                left, right = table[:, j].copy(), table[:, i].copy()
                table[:, j], table[:, i] = np.where(swap, right, left), np.where(swap, left, right)
        # the insertion sort that follows is stable: the first largest key comes first
        live = np.arange(keys.shape[1])[None, :] < count[:, None]
        lowest = np.iinfo(np.int64).min
        first = np.argmax(np.where(live, keys, lowest), axis=1)
        return np.take_along_axis(order, first[:, None], 1)[:, 0]

    def never_empty(self) -> Ints:
        """Per row, the most copies `crane.fast.count.greedy_never_empty` vouches for: some
        requested fixed resource's positive free total (cpu in whole cores) exceeds that
        many greedy debits (each the request of its basis, cpu for memory, plus the
        zones' shortfalls of it). -1 where not even none would."""
        best = np.full(self.valid.shape[0], -1, np.int64)
        for name in FIXED_RESOURCES:
            if self.request.get(name, 0) <= 0:
                continue
            basis = "cpu" if name == "memory" else name
            free = self.greedy_free(name)
            positive = np.where(self.valid, np.maximum(free, 0), 0).sum(axis=1)
            short = np.where(self.valid, np.maximum(-self.greedy_free(basis), 0), 0).sum(axis=1)
            debit = self.request.get(basis, 0) + short  # at least the cpu request: above 0
            best = np.maximum(best, (positive - 1) // np.maximum(debit, 1))
        return best

    def greedy_free(self, name: str) -> Ints:
        """Free `name` as the greedy fill reads it: cpu in whole cores."""
        return self.whole_core_free if name == "cpu" else self.free[name]

    def copies(self) -> Ints:
        """`crane.fast.count.aware_copies` per row: each zone's copies summed (UNLIMITED when
        some zone is never short)."""
        debit = published_amounts(self.request)
        per_zone = np.full(self.valid.shape, UNLIMITED, np.int64)
        for name in self.names:
            wanted, step, free = self.request.get(name, 0), debit.get(name, 0), self.free[name]
            if step <= 0:
                found = np.where(wanted > free, 0, UNLIMITED)
            else:
                found = np.where(wanted > free, 0, (free - wanted) // step + 1)
            limited = found != UNLIMITED
            per_zone = np.where(
                limited & ((per_zone == UNLIMITED) | (found < per_zone)), found, per_zone
            )
        unlimited = (self.valid & (per_zone == UNLIMITED)).any(axis=1)
        total = np.where(self.valid, per_zone, 0).sum(axis=1)
        return np.where(unlimited, UNLIMITED, total)
