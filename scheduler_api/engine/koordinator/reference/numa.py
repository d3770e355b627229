"""Koordinator's resource manager: NUMA hints and the allocation itself.

Reproduces resource_manager.go (GetTopologyHints, Allocate, allocateResourcesByHint,
tryBestToDistributeEvenly, allocateCPUSet), reservation.go (tryAllocateFromReservation,
tryAllocateFromNode) and the scorers; the merge lives in `koordinator.reference.merge`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import combinations

from scheduler_api.engine.koordinator.reference.cpu import (
    filter_by_required_bind_policy,
    satisfies_required_bind_policy,
    take_preferred_cpus,
)
from scheduler_api.engine.koordinator.reference.merge import Hint
from scheduler_api.engine.koordinator.reference.reservation import ReservationAlloc, RestoreState
from scheduler_api.engine.koordinator.reference.state import (
    KoordConfig,
    NodeAllocation,
    NodeMemo,
    NodeView,
    NUMAResources,
    ResourceMap,
    add,
    add_numa,
    available_cpus,
    available_numa,
    subtract_non_negative,
)
from scheduler_api.engine.model.errors import AllocationError
from scheduler_api.engine.model.results import Reason, ReasonCheck
from scheduler_api.engine.model.snapshot import CPUBindPolicy, NUMATopologyPolicy

MAX_NODE_SCORE = 100
ERR_NO_NUMA = "insufficient resources on NUMA Node"
ERR_NOT_ENOUGH_CPUS = "not enough cpus available to satisfy request"


@dataclass(frozen=True, slots=True)
class ResourceOptions:
    """ResourceOptions: one allocation attempt (hint None is Go's nil affinity)."""

    requests: ResourceMap
    num_cpus_needed: int
    request_cpu_bind: bool
    required_cpu_bind_policy: bool
    cpu_bind_policy: str
    cpu_exclusive_policy: str
    numa_allocate_strategy: str
    required_from_reservation: bool = False
    ignores_reservations: bool = False
    hint: frozenset[int] | None = None
    preferred_cpus: frozenset[int] = frozenset()
    reusable: NUMAResources = field(default_factory=dict)
    required_resources: NUMAResources | None = None

    @property
    def whole_cores(self) -> bool:
        """splitQuantity splits cpu in whole cores (when binding): FullPCPUs, required."""
        return self.required_cpu_bind_policy and self.cpu_bind_policy == CPUBindPolicy.FULL_PCPUS


@dataclass(frozen=True, slots=True)
class NodeContext:
    """Everything about the node one attempt reads."""

    view: NodeView
    state: NodeAllocation
    restore: RestoreState
    config: KoordConfig
    # what fast paths derive from `view` and `state` (NodeBooks.memo, kept by
    # koordinator.cache); None for fresh books and for a copy that may change (a count's)
    memo: NodeMemo | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Allocation:
    """PodAllocation: the cpus and per-NUMA amounts the pod would get."""

    cpuset: frozenset[int]
    numa_resources: tuple[tuple[int, ResourceMap], ...]
    exclusive_policy: str


def with_hint(opts: ResourceOptions, hint: frozenset[int] | None) -> ResourceOptions:
    """`replace(opts, hint=hint)` without dataclasses.replace's introspection (hot loops)."""
    return ResourceOptions(
        opts.requests, opts.num_cpus_needed, opts.request_cpu_bind, opts.required_cpu_bind_policy,
        opts.cpu_bind_policy, opts.cpu_exclusive_policy, opts.numa_allocate_strategy,
        opts.required_from_reservation, opts.ignores_reservations, hint, opts.preferred_cpus,
        opts.reusable, opts.required_resources,
    )  # fmt: skip


def _fail(message: str, check: ReasonCheck = ReasonCheck.INSUFFICIENT_NUMA) -> Reason:
    return Reason(check, message=message)


# --- NUMA amounts --------------------------------------------------------------------------


def trim_cpu(ctx: NodeContext, opts: ResourceOptions, totals: dict[int, dict[str, int]]) -> None:
    """trimNUMANodeResources: with a required bind policy, count only usable cpus."""
    if not opts.required_cpu_bind_policy:
        return
    topology = ctx.view.topology
    available, _ = available_cpus(ctx.state, ctx.view, opts.preferred_cpus)
    for numa, amounts in totals.items():
        cpu = amounts.get("cpu", 0)
        if cpu == 0:
            continue
        in_numa = topology.cpus_in_nodes(numa) & available
        usable = filter_by_required_bind_policy(opts.cpu_bind_policy, in_numa, topology)
        if len(usable) * 1000 < cpu:
            amounts["cpu"] = len(usable) * 1000


def split_amount(
    name: str, amount: int, count: int, ctx: NodeContext, opts: ResourceOptions
) -> int:
    """splitQuantity: an even share; whole (or whole-core) cpus when binding cpus."""
    if name != "cpu":
        return amount // count
    if not opts.request_cpu_bind:
        return amount // count
    cores = -(-amount // 1000)
    if opts.whole_cores:
        per_core = ctx.view.topology.cpus_per_core()
        return cores // per_core // count * per_core * 1000
    return cores // count * 1000


def positional_sort(
    numas: Sequence[int], totals: Mapping[int, ResourceMap], name: str
) -> list[int]:
    """The sort in tryBestToDistributeEvenly: its comparator reads totals by *position*.

    Go's sort.Slice is an insertion sort below 13 elements; the positional comparator
    is an upstream bug kept as is (it only matters when the hint is not 0..n-1).
    """
    order = list(numas)

    def less(i: int, j: int) -> bool:
        return totals.get(i, {}).get(name, 0) < totals.get(j, {}).get(name, 0)

    for i in range(1, len(order)):
        j = i
        while j > 0 and less(j, j - 1):
            order[j], order[j - 1] = order[j - 1], order[j]
            j -= 1
    return order


def positional_orders(count: int, totals: Mapping[int, ResourceMap], name: str) -> list[list[int]]:
    """`positional_sort(range(w), totals, name)` for every width w in 1..count, in one
    insertion sort: its pass i only reads and moves positions 0..i, so the list after
    that pass is the sort of range(i + 1)."""
    amounts = [totals.get(position, {}).get(name, 0) for position in range(count)]
    order: list[int] = []
    orders = []
    for i in range(count):
        order.append(i)
        j = i
        while j > 0 and amounts[j] < amounts[j - 1]:  # by position, as upstream compares
            order[j], order[j - 1] = order[j - 1], order[j]
            j -= 1
        orders.append(list(order))
    return orders


def distribute(
    ctx: NodeContext, opts: ResourceOptions, totals: Mapping[int, ResourceMap]
) -> tuple[dict[int, dict[str, int]], list[str]]:
    """tryBestToDistributeEvenly over the hint's NUMA nodes."""
    names = {name for amounts in totals.values() for name in amounts}
    numas = sorted(opts.hint or ())
    placed: dict[int, dict[str, int]] = {}
    missing = []
    for name, amount in sorted(opts.requests.items()):
        order = positional_sort(numas, totals, name) if name in names else []
        for i, numa in enumerate(order):
            share = split_amount(name, amount, len(numas) - i, ctx, opts)
            got = min(totals.get(numa, {}).get(name, 0), share)
            if got != 0:
                placed.setdefault(numa, {})[name] = got
                amount -= got
        if name in names and amount != 0:
            missing.append(f"Insufficient NUMA {name}")
    return placed, missing


def allocate_by_hint(ctx: NodeContext, opts: ResourceOptions) -> dict[int, dict[str, int]] | Reason:
    """allocateResourcesByHint."""
    if not ctx.view.numa_resources:
        return _fail(ERR_NO_NUMA)
    if opts.required_resources:
        totals = {n: dict(r) for n, r in opts.required_resources.items()}
    else:
        totals = available_numa(ctx.state, ctx.view, opts.reusable)[0]
    trim_cpu(ctx, opts, totals)
    placed, missing = distribute(ctx, opts, totals)
    if missing:
        return _fail(", ".join(missing))
    return placed


def allocate_cpuset(
    ctx: NodeContext, opts: ResourceOptions, numa_placed: Mapping[int, ResourceMap]
) -> frozenset[int] | Reason:
    """allocateCPUSet: per NUMA node when NUMA amounts were placed, else anywhere."""
    topology = ctx.view.topology
    available, held = available_cpus(ctx.state, ctx.view, opts.preferred_cpus)
    if opts.required_cpu_bind_policy:
        available = filter_by_required_bind_policy(opts.cpu_bind_policy, available, topology)
    if len(available) < opts.num_cpus_needed:
        return _fail(ERR_NOT_ENOUGH_CPUS, ReasonCheck.INSUFFICIENT_CPUS)
    args = (opts.cpu_bind_policy, opts.cpu_exclusive_policy, opts.numa_allocate_strategy)
    result: frozenset[int] = frozenset()
    needed = opts.num_cpus_needed
    try:
        if numa_placed:
            for numa, amounts in sorted(numa_placed.items()):
                in_numa = topology.cpus_in_nodes(numa) & available
                count = min(len(in_numa), amounts.get("cpu", 0) // 1000)
                result |= take_preferred_cpus(
                    topology,
                    ctx.view.max_ref_count,
                    in_numa,
                    opts.preferred_cpus,
                    held,
                    count,
                    *args,
                )
            needed -= len(result)
            if needed != 0:
                return _fail(ERR_NOT_ENOUGH_CPUS, ReasonCheck.INSUFFICIENT_CPUS)
        if needed > 0:
            result |= take_preferred_cpus(
                topology, ctx.view.max_ref_count, available - result, opts.preferred_cpus,
                held, needed, *args,
            )  # fmt: skip
    except AllocationError as error:
        return _fail(str(error), ReasonCheck.INSUFFICIENT_CPUS)
    if opts.required_cpu_bind_policy and not satisfies_required_bind_policy(
        opts.cpu_bind_policy, result, topology
    ):
        message = f"insufficient CPUs to satisfy required cpu bind policy {opts.cpu_bind_policy}"
        return _fail(message, ReasonCheck.INSUFFICIENT_CPUS)
    return result


def allocate(ctx: NodeContext, opts: ResourceOptions) -> Allocation | Reason:
    """resourceManager.Allocate."""
    placed: dict[int, dict[str, int]] = {}
    if opts.hint is not None:
        by_hint = allocate_by_hint(ctx, opts)
        if isinstance(by_hint, Reason):
            return by_hint
        placed = by_hint
    cpus: frozenset[int] = frozenset()
    if opts.request_cpu_bind:
        taken = allocate_cpuset(ctx, opts, placed)
        if isinstance(taken, Reason):
            return taken
        cpus = taken
    return Allocation(cpus, tuple(sorted(placed.items())), opts.cpu_exclusive_policy)


# --- reservations --------------------------------------------------------------------------


def _from_reservation(
    ctx: NodeContext, opts: ResourceOptions, alloc: ReservationAlloc, reusable: NUMAResources
) -> Allocation | Reason:
    """One reservation of tryAllocateFromReservation (Aligned or Restricted)."""
    attempt = replace(
        opts, reusable=add_numa(reusable, alloc.remained), preferred_cpus=alloc.reserved_cpus,
        required_resources=None,
    )  # fmt: skip
    result = allocate(ctx, attempt)
    if not alloc.restricted or isinstance(result, Reason):
        return result
    if opts.request_cpu_bind and opts.num_cpus_needed > len(alloc.reserved_cpus):
        return _fail(ERR_NOT_ENOUGH_CPUS, ReasonCheck.RESERVATION)
    result = allocate(ctx, replace(attempt, required_resources=alloc.remained))
    if not isinstance(result, Reason) and len(result.cpuset) > len(alloc.reserved_cpus):
        return _fail(ERR_NOT_ENOUGH_CPUS, ReasonCheck.RESERVATION)
    return result


def try_from_reservations(
    ctx: NodeContext, opts: ResourceOptions, candidates: Sequence[ReservationAlloc]
) -> Allocation | Reason | None:
    """tryAllocateFromReservation: the first reservation that works, None if none did.

    Only a pod that requires a reservation (reservation-affinity) is refused here.
    """
    if not candidates:
        return None
    reusable = add_numa(ctx.restore.unmatched_used, ctx.restore.matched_allocated)
    failures: list[Reason] = []
    for alloc in candidates:
        result = _from_reservation(ctx, opts, alloc, reusable)
        if isinstance(result, Allocation):
            return result
        failures.append(result)
    if opts.required_from_reservation:
        text = "; ".join(f"Reservation(s) {r.message}" for r in failures)
        return Reason(ReasonCheck.RESERVATION, message=text)
    return None


def try_from_node(ctx: NodeContext, opts: ResourceOptions) -> Allocation | Reason:
    """tryAllocateFromNode: owners' double counting inside other reservations is reusable."""
    attempt = replace(
        opts, required_resources=None, reusable=add_numa(ctx.restore.unmatched_used),
        preferred_cpus=frozenset(),
    )  # fmt: skip
    return allocate(ctx, attempt)


def ignored_reusable(restore: RestoreState) -> NUMAResources:
    """What a reservation-ignored pod may take on top of the node's unreserved resources:
    the owners' double counting, and what every reservation it sees has left."""
    remained = add_numa(*(alloc.remained for alloc in restore.matched))
    return add_numa(restore.unmatched_used, restore.matched_allocated, remained)


def try_ignoring_reservations(ctx: NodeContext, opts: ResourceOptions) -> Allocation | Reason:
    """tryAllocateIgnoreReservation: a reservation-ignored pod takes from the node's
    unreserved resources and from what every reservation it may see (all the node's,
    whoever owns them) has left; their remaining CPUs are preferred."""
    attempt = replace(
        opts, required_resources=None, preferred_cpus=ctx.restore.matched_reserved_cpus,
        reusable=ignored_reusable(ctx.restore),
    )  # fmt: skip
    return allocate(ctx, attempt)


def try_allocate(
    ctx: NodeContext, opts: ResourceOptions, candidates: Sequence[ReservationAlloc]
) -> Allocation | Reason:
    """Reservation first, then the node, as Filter, Score and Reserve all do (a
    reservation-ignored pod: `try_ignoring_reservations`)."""
    if opts.ignores_reservations:
        return try_ignoring_reservations(ctx, opts)
    from_reservation = try_from_reservations(ctx, opts, candidates)
    if from_reservation is not None:
        return from_reservation
    return try_from_node(ctx, opts)


# --- scoring -----------------------------------------------------------------------------


def is_scalar(name: str) -> bool:
    """schedutil.IsScalarResourceName: extended, hugepages, attachable volumes or prefixed
    native names."""
    return "/" in name or name.startswith(("hugepages-", "attachable-volumes-"))


SCORED_NATIVE = frozenset({"cpu", "memory", "ephemeral-storage"})


def is_scored(name: str) -> bool:
    """Names calculateResourceAllocatableRequest reads; any other (`pods`) has no
    allocatable there, so a weight on it is skipped like a resource the node lacks."""
    return name in SCORED_NATIVE or is_scalar(name)


def resource_score(
    requested: ResourceMap,
    allocatable: ResourceMap,
    pod_requests: ResourceMap,
    weights: Mapping[str, int],
    strategy: str,
) -> int:
    """resourceAllocationScorer.score with the most/least requested scorers."""
    total = weight_sum = 0
    for name, weight in weights.items():
        pod_request = pod_requests.get(name, 0)
        if pod_request == 0 and is_scalar(name):
            continue
        capacity = allocatable.get(name, 0) if is_scored(name) else 0
        if capacity == 0:
            continue
        used = requested.get(name, 0) + pod_request
        if strategy == "MostAllocated":
            score = min(used, capacity) * MAX_NODE_SCORE // capacity
        else:
            score = 0 if used > capacity else (capacity - used) * MAX_NODE_SCORE // capacity
        total += score * weight
        weight_sum += weight
    return total // weight_sum if weight_sum else 0


# --- hints and their merge -------------------------------------------------------------------


_NO_NUMAS: frozenset[int] = frozenset()


@dataclass(slots=True)
class HintsGenerator:
    """hintsGenerator: masks become hints for every NUMA-published resource requested."""

    lacking: Mapping[str, set[int]]
    min_size: dict[str, int]
    names: set[str] = field(default_factory=set)
    hints: dict[str, list[Hint]] = field(default_factory=dict)

    def add(self, mask: frozenset[int], score: int) -> bool:
        """generateHints: skipped when any NUMA node of the mask lacks a resource.
        True when the mask became a hint (of at least one resource)."""
        names, lacking = self.names, self.lacking
        if any(not lacking.get(n, _NO_NUMAS).isdisjoint(mask) for n in names):
            return False
        hint = Hint(mask, False, score)  # one (immutable) hint shared by every resource
        size, min_size, hints = len(mask), self.min_size, self.hints
        for name in names:
            if size < min_size.get(name, size + 1):
                min_size[name] = size
            hints.setdefault(name, []).append(hint)
        return bool(names)

    def result(self, requests: ResourceMap, policy: str) -> dict[str, list[Hint]]:
        """Preferred = minimal width (every hint under Restricted); [] when none fits.

        Equal hints stay one object across resources, so comparing lists is cheap.
        """
        restricted = policy == NUMATopologyPolicy.RESTRICTED
        made: dict[tuple[int, bool], Hint] = {}
        out: dict[str, list[Hint]] = {}
        for name, hints in self.hints.items():
            smallest, final = self.min_size[name], []
            for h in hints:  # every hint of every width, on a refusal: written out
                preferred = restricted or len(h.mask or ()) == smallest
                key = (id(h), preferred)
                hint = made.get(key)
                if hint is None:
                    hint = made[key] = Hint(h.mask, preferred, h.score, h.unsatisfied)
                final.append(hint)
            out[name] = final
        for name in requests:
            if name in self.names:
                out.setdefault(name, [])
        return out


@lru_cache(maxsize=16384)
def shared_hint(mask: frozenset[int], preferred: bool, score: int) -> Hint:
    """One (immutable) Hint per value: a refusal's walk on every node of a machine type
    gives the same wide hints (score 0 where it is not read), built once here."""
    return Hint(mask, preferred, score)


def accepted_hints(
    generator: HintsGenerator,
    masks: Sequence[frozenset[int]],
    scores: Sequence[int],
    requests: ResourceMap,
    policy: str,
) -> dict[str, list[Hint]]:
    """`generator.add` of each mask (with its score), then `generator.result`, for masks
    `add` accepts whole: none holds a NUMA node lacking a name of `generator.names`.
    `masks` come in walk order, so by width. Each hint is built once, preferred as
    `result` makes it, and shared by every name."""
    if not masks:
        return generator.result(requests, policy)
    restricted, narrowest = policy == NUMATopologyPolicy.RESTRICTED, len(masks[0])
    by_smallest: dict[int, list[Hint]] = {}
    out: dict[str, list[Hint]] = {}
    for name in generator.names:
        smallest = min(generator.min_size.get(name, narrowest), narrowest)
        generator.min_size[name] = smallest
        hints = by_smallest.get(smallest)
        if hints is None:
            hints = by_smallest[smallest] = [
                shared_hint(mask, restricted or len(mask) == smallest, score)
                for mask, score in zip(masks, scores, strict=True)
            ]
        out[name] = list(hints)
    for name in requests:
        if name in generator.names:
            out.setdefault(name, [])
    return out


def topology_hints(
    ctx: NodeContext, opts: ResourceOptions, policy: str, candidates: Sequence[ReservationAlloc]
) -> dict[str, list[Hint]] | Reason:
    """GetTopologyHints + generateResourceHints: every mask that really allocates.

    Each hint carries the NUMA scorer's score of the mask (requested = total minus
    available, plus the pod), which breaks ties between equally wide hints.
    """
    view = ctx.view
    if not view.numa_resources:
        return _fail("node(s) Insufficient NUMA Node resources")
    reusable = add_numa(ctx.restore.unmatched_used, ctx.restore.matched_allocatable)
    base = replace(opts, reusable=reusable, preferred_cpus=ctx.restore.matched_reserved_cpus)
    totals = available_numa(ctx.state, view, reusable)[0]
    trim_cpu(ctx, base, totals)
    names = {n for _, res in view.numa_resources for n in res}
    lacking = {n: {numa for numa, a in totals.items() if a.get(n, 0) == 0} for n in names}
    generator = HintsGenerator(lacking, {name: len(view.numa_resources) for name in opts.requests})
    for size in range(1, len(view.numa_resources) + 1):
        for mask in map(frozenset, combinations(view.numa_nodes(), size)):
            total, free = _mask_totals(view, totals, mask)
            generator.names |= {n for n in opts.requests if n in total}
            score = resource_score(
                subtract_non_negative(total, free), total, opts.requests,
                ctx.config.resource_weights, ctx.config.numa_scoring_strategy,
            )  # fmt: skip
            attempt = replace(base, hint=mask, required_resources=None)
            if not isinstance(try_allocate(ctx, attempt, candidates), Reason):
                generator.add(mask, score)
    return generator.result(opts.requests, policy)


def _mask_totals(
    view: NodeView, totals: Mapping[int, ResourceMap], mask: frozenset[int]
) -> tuple[dict[str, int], dict[str, int]]:
    total: dict[str, int] = {}
    free: dict[str, int] = {}
    for numa in sorted(mask):
        free = add(free, totals.get(numa, {}))
        total = add(total, view.resources_of(numa))
    return total, free
