"""koord-scheduler's Filter and Score from counts: NUMA masks judged without picking CPUs.

The reference (`koordinator.ReferenceOps`) answers "would this NUMA mask allocate?"
by allocating: NUMA amounts and a cpuset, for each of the 2^N - 1 masks, each time
walking every CPU of the node (about 100 ms for one 8-zone, 384-CPU node). Whether
such an allocation *succeeds*, though, only depends on counts:

* the NUMA amounts come from `distribute` over the mask (the reference function);
* allocateCPUSet then takes, from each NUMA node of the mask, min(usable cpus there,
  its cpu amount) cpus, and fails unless these add up to the cpus needed; takeCPUs
  itself never fails when asked for no more cpus than it is offered;
* the required bind policy's last check can only fail under FullPCPUs, and there,
  on a uniform layout (every core has cpus_per_core cpus, all in one NUMA node; every
  node has cpus_per_node cpus), exactly when some NUMA node's count is not a whole
  number of cores: takeCPUs hands out whole cores whenever the count allows it.

Hints are generated in upstream order with the upstream generator and merged by the
reference merge. When every NUMA node publishes the same resources, enumeration
stops at the narrowest width that can decide the merge (single NUMA nodes for
SingleNUMANode; the first width with a hint, or with an exclusive-compatible hint
under Restricted): a wider hint can never replace a preferred narrower one. The
stop is kept only when its merge does find a preferred hint; otherwise (a refusal,
whose message lists every hint) all masks are enumerated.

Used only where these arguments hold (`countable`); elsewhere the reference runs.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import combinations

from scheduler_api.engine import koordinator
from scheduler_api.engine.koordinator import (
    REFERENCE_OPS,
    AllocationOps,
    NodeRun,
    cpu_bind_policy,
    resource_options,
)
from scheduler_api.engine.koordinator_cpu import KoordCPUTopology
from scheduler_api.engine.koordinator_merge import Hint, exclusive_ok, merge
from scheduler_api.engine.koordinator_numa import (
    ERR_NO_NUMA,
    ERR_NOT_ENOUGH_CPUS,
    HintsGenerator,
    ResourceOptions,
    _mask_totals,
    distribute,
    resource_score,
)
from scheduler_api.engine.koordinator_state import (
    KoordConfig,
    NodeView,
    add,
    add_numa,
    available_numa,
    subtract_non_negative,
)
from scheduler_api.engine.results import PlacementResult, Reason, ReasonCheck
from scheduler_api.engine.snapshot import (
    CPUBindPolicy,
    NodeSnapshot,
    NUMATopologyPolicy,
    PodSpec,
    ReservationSnapshot,
)

NUMAAmounts = dict[int, dict[str, int]]
NO_CPUS: frozenset[int] = frozenset()


# --- the CPU layout, indexed once per hardware model -----------------------------------------


@dataclass(frozen=True, slots=True)
class CPULayout:
    """A KoordCPUTopology indexed for counting (node ids keep upstream's socket bits)."""

    topology: KoordCPUTopology
    cpus: frozenset[int]
    node_cpus: Mapping[int, frozenset[int]]
    core_of: Mapping[int, int]
    per_core: int
    uniform: bool


@lru_cache(maxsize=512)
def cpu_layout(rows: tuple[tuple[int, int, int, int], ...]) -> CPULayout:
    """The layout of `rows` (a node's cpu table), shared by every node that has it."""
    topology = KoordCPUTopology.shared(rows)
    node_cpus: dict[int, set[int]] = {}
    core_cpus: dict[int, list[int]] = {}
    for cpu, info in topology.details.items():
        node_cpus.setdefault(info.node, set()).add(cpu)
        core_cpus.setdefault(info.core, []).append(cpu)
    node_of = {cpu: info.node for cpu, info in topology.details.items()}
    uniform = (
        all(len(cpus) == topology.cpus_per_core() for cpus in core_cpus.values())
        and all(len({node_of[c] for c in cpus}) == 1 for cpus in core_cpus.values())
        and all(len(cpus) == topology.cpus_per_node() for cpus in node_cpus.values())
    )
    return CPULayout(
        topology,
        frozenset(topology.details),
        {node: frozenset(cpus) for node, cpus in node_cpus.items()},
        {cpu: info.core for cpu, info in topology.details.items()},
        topology.cpus_per_core(),
        uniform,
    )


def layout_of(run: NodeRun) -> CPULayout:
    return cpu_layout(tuple(run.node.cpus) if run.ctx.view.has_nrt else ())


def bind_filter(policy: str, cpus: frozenset[int], layout: CPULayout) -> frozenset[int]:
    """filterCPUsByRequiredCPUBindPolicy: whole free cores, or one cpu (the lowest) per core."""
    if policy not in (CPUBindPolicy.FULL_PCPUS, CPUBindPolicy.SPREAD_BY_PCPUS):
        return cpus
    cores: dict[int, list[int]] = {}
    for cpu in cpus:
        cores.setdefault(layout.core_of[cpu], []).append(cpu)
    if policy == CPUBindPolicy.FULL_PCPUS:
        return frozenset(
            c for group in cores.values() if len(group) == layout.per_core for c in group
        )
    return frozenset(min(group) for group in cores.values())


# --- the books one attempt reads ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Books:
    """What tryAllocateFromNode reads, as counts.

    `totals`: available amounts per NUMA node (cpu trimmed to usable cpus under a
    required bind policy); `numa_free`: cpus allocateCPUSet may take in each NUMA node;
    `free`: cpus it may take anywhere; `held`: cpus the resource manager holds.
    """

    totals: NUMAAmounts
    numa_free: Mapping[int, int]
    free: int
    held: int


def trim(totals: NUMAAmounts, usable: Mapping[int, int]) -> None:
    """trimNUMANodeResources with the usable cpu count of each NUMA node given."""
    for numa, amounts in totals.items():
        cpu = amounts.get("cpu", 0)
        if cpu and usable.get(numa, 0) * 1000 < cpu:
            amounts["cpu"] = usable.get(numa, 0) * 1000


def numa_totals(run: NodeRun, only: Collection[int] | None = None) -> NUMAAmounts:
    """getAvailableNUMANodeResources with what unmatched reservations' owners may reuse
    (for the NUMA nodes in `only`, or all of them)."""
    reusable = add_numa(run.ctx.restore.unmatched_used)
    if only is None:
        return available_numa(run.ctx.state, run.ctx.view, reusable)[0]
    state, view = run.ctx.state, run.ctx.view
    totals: NUMAAmounts = {}
    for numa, resources in view.numa_resources:
        if numa in only:
            held = state.resources.get(numa)
            allocated = subtract_non_negative(held, reusable.get(numa, {})) if held else {}
            totals[numa] = subtract_non_negative(resources, allocated)
    return totals


def books_of(run: NodeRun, opts: ResourceOptions, layout: CPULayout) -> Books:
    """The books of `run`'s node as its resource manager's state holds them."""
    state, view = run.ctx.state, run.ctx.view
    taken = {cpu for cpu, info in state.cpus.items() if info.ref_count >= view.max_ref_count}
    available = layout.cpus - taken - view.reserved_cpus
    totals = numa_totals(run)
    usable = available
    if opts.required_cpu_bind_policy:
        policy = opts.cpu_bind_policy
        usable = bind_filter(policy, available, layout)
        trim(
            totals, {numa: _trim_count(numa, available, usable, policy, layout) for numa in totals}
        )
    numa_free = {
        numa: len(layout.node_cpus.get(numa, NO_CPUS) & usable) for numa in view.numa_nodes()
    }
    return Books(totals, numa_free, len(usable), len(state.cpus))


def _trim_count(
    numa: int, available: frozenset[int], usable: frozenset[int], policy: str, layout: CPULayout
) -> int:
    """trimNUMANodeResources' count: the bind filter of the NUMA node's available cpus,
    which on a uniform layout (no core across NUMA nodes) is the node's share of `usable`."""
    in_numa = layout.node_cpus.get(numa, NO_CPUS)
    if layout.uniform:
        return len(in_numa & usable)
    return len(bind_filter(policy, in_numa & available, layout))


# --- one allocation attempt, decided by counts --------------------------------------------------


def _fail(message: str, check: ReasonCheck = ReasonCheck.INSUFFICIENT_NUMA) -> Reason:
    return Reason(check, message=message)


def placed_amounts(
    run: NodeRun, opts: ResourceOptions, books: Books, mask: frozenset[int] | None
) -> NUMAAmounts | Reason:
    """allocateResourcesByHint's amounts per NUMA node ({} without a hint)."""
    if mask is None:
        return {}
    if not run.ctx.view.numa_resources:
        return _fail(ERR_NO_NUMA)
    attempt = opts if opts.hint == mask else replace(opts, hint=mask)
    placed, missing = distribute(run.ctx, attempt, books.totals)
    return _fail(", ".join(missing)) if missing else placed


def cpu_counts(opts: ResourceOptions, books: Books, placed: NUMAAmounts) -> dict[int, int]:
    """How many cpus allocateCPUSet takes from each NUMA node of `placed`."""
    return {
        numa: max(min(books.numa_free.get(numa, 0), amounts.get("cpu", 0) // 1000), 0)
        for numa, amounts in placed.items()
    }


def cpu_reason(
    opts: ResourceOptions, books: Books, placed: NUMAAmounts, layout: CPULayout
) -> Reason | None:
    """allocateCPUSet's verdict without picking: None when it would succeed."""
    needed = opts.num_cpus_needed
    if books.free < needed:
        return _fail(ERR_NOT_ENOUGH_CPUS, ReasonCheck.INSUFFICIENT_CPUS)
    if not placed:
        return None  # takeCPUs anywhere; on a uniform layout FullPCPUs gets whole cores
    counts = cpu_counts(opts, books, placed)
    if sum(counts.values()) != needed:
        return _fail(ERR_NOT_ENOUGH_CPUS, ReasonCheck.INSUFFICIENT_CPUS)
    whole_cores = opts.cpu_bind_policy != CPUBindPolicy.FULL_PCPUS or all(
        count % layout.per_core == 0 for count in counts.values()
    )
    if opts.required_cpu_bind_policy and not whole_cores:
        message = f"insufficient CPUs to satisfy required cpu bind policy {opts.cpu_bind_policy}"
        return _fail(message, ReasonCheck.INSUFFICIENT_CPUS)
    return None


def allocation_reason(
    run: NodeRun, opts: ResourceOptions, books: Books, layout: CPULayout
) -> Reason | None:
    """Why tryAllocateFromNode with `opts` (and its hint) would fail; None if it succeeds."""
    placed = placed_amounts(run, opts, books, opts.hint)
    if isinstance(placed, Reason):
        return placed
    return cpu_reason(opts, books, placed, layout) if opts.request_cpu_bind else None


# --- hints -----------------------------------------------------------------------------------


def exclusive_policy(run: NodeRun) -> str:
    return run.state.pod_numa_exclusive or ("Required" if run.state.pod_numa_policy else "")


def _merged_preferred(run: NodeRun, hints: dict[str, list[Hint]]) -> bool:
    """Does _admit's merge of `hints` end on a preferred hint?"""
    numa_nodes = run.ctx.view.numa_nodes()
    statuses = run.ctx.state.numa_status(len(numa_nodes))
    merged = merge(run.numa_policy, numa_nodes, [hints], exclusive_policy(run), statuses)
    return merged.hint.preferred


def uniform_names(run: NodeRun) -> bool:
    """Every NUMA node publishes the same resources (so every hint list is the same)."""
    names = {frozenset(resources) for _, resources in run.ctx.view.numa_resources}
    return len(names) == 1


class HintWalk:
    """GetTopologyHints over masks by width, optionally stopping at the deciding width."""

    def __init__(
        self, run: NodeRun, opts: ResourceOptions, books: Books, layout: CPULayout
    ) -> None:
        self.run, self.opts, self.books, self.layout = run, opts, books, layout
        view = run.ctx.view
        self.keys = {numa: frozenset(resources) for numa, resources in view.numa_resources}
        self.wanted = {n: a for n, a in opts.requests.items() if a > 0 and is_published(view, n)}
        cpu_published = "cpu" in {n for amounts in books.totals.values() for n in amounts}
        self.cpus_needed = opts.num_cpus_needed if opts.request_cpu_bind and cpu_published else 0
        statuses = run.ctx.state.numa_status(len(view.numa_resources))
        self.exclusive = (exclusive_policy(run), statuses)

    def hints(self, stop_early: bool) -> tuple[dict[str, list[Hint]], bool]:
        """The hints, and whether the walk stopped before the widest masks."""
        view, totals = self.run.ctx.view, self.books.totals
        names = {n for _, res in view.numa_resources for n in res}
        lacking = {n: {numa for numa, a in totals.items() if a.get(n, 0) == 0} for n in names}
        width = len(view.numa_resources)
        generator = HintsGenerator(lacking, {name: width for name in self.opts.requests})
        for size in range(1, width + 1):
            decided = False
            for combo in combinations(view.numa_nodes(), size):
                decided = self._visit(generator, frozenset(combo)) or decided
            if stop_early and size < width and self._stops(decided):
                return generator.result(self.opts.requests, self.run.numa_policy), True
        return generator.result(self.opts.requests, self.run.numa_policy), False

    def _stops(self, decided: bool) -> bool:
        return self.run.numa_policy == NUMATopologyPolicy.SINGLE_NUMA_NODE or decided

    def _hopeless(self, mask: frozenset[int]) -> bool:
        """Too little in the mask's NUMA nodes for distribute or allocateCPUSet to succeed.

        Sound: each NUMA node gives at most its total of a resource, and at most its
        usable cpus (once cpu amounts are distributed at all).
        """
        totals, numa_free = self.books.totals, self.books.numa_free
        for name, amount in self.wanted.items():
            if sum(totals.get(numa, {}).get(name, 0) for numa in mask) < amount:
                return True
        return sum(numa_free.get(numa, 0) for numa in mask) < self.cpus_needed

    def _visit(self, generator: HintsGenerator, mask: frozenset[int]) -> bool:
        """One mask of generateResourceHints; True when it added a deciding hint."""
        view, config = self.run.ctx.view, self.run.ctx.config
        keys = frozenset().union(*(self.keys[numa] for numa in mask))
        generator.names |= {n for n in self.opts.requests if n in keys}
        if self._hopeless(mask):
            return False
        attempt = replace(self.opts, hint=mask)  # resource_options: no required_resources
        if allocation_reason(self.run, attempt, self.books, self.layout) is not None:
            return False
        total, free = _mask_totals(view, self.books.totals, mask)
        before = sum(map(len, generator.hints.values()))
        score = resource_score(
            subtract_non_negative(total, free), total, self.opts.requests,
            config.resource_weights, config.numa_scoring_strategy,
        )  # fmt: skip
        generator.add(mask, score)
        if sum(map(len, generator.hints.values())) == before:
            return False
        if self.run.numa_policy != NUMATopologyPolicy.RESTRICTED:
            return True
        return exclusive_ok(Hint(mask, True), *self.exclusive)


def is_published(view: NodeView, name: str) -> bool:
    return any(name in resources for _, resources in view.numa_resources)


def counted_hints(
    run: NodeRun, opts: ResourceOptions, books: Books, layout: CPULayout, *, reasons: bool = True
) -> dict[str, list[Hint]] | Reason:
    """Hints that merge exactly as the reference GetTopologyHints' do.

    Without `reasons`, a refusal may come from fewer hints (the same refusal, quoting
    fewer masks): under SingleNUMANode and Restricted, a stopped walk whose merge is
    not preferred is refused by the full walk's merge too.
    """
    if not run.ctx.view.numa_resources:
        return _fail("node(s) Insufficient NUMA Node resources")
    walk = HintWalk(run, opts, books, layout)
    if uniform_names(run):
        hints, stopped = walk.hints(stop_early=True)
        if not stopped or _merged_preferred(run, hints):
            return hints
        if not reasons and run.numa_policy != NUMATopologyPolicy.BEST_EFFORT:
            return hints
    return walk.hints(stop_early=False)[0]


# --- the ops ---------------------------------------------------------------------------------


def countable(run: NodeRun, layout: CPULayout) -> bool:
    """Where the counting arguments hold (see the module docstring)."""
    view = run.ctx.view
    numa_ids = view.numa_nodes()
    if run.candidates or run.state.has_reservation_affinity or view.max_ref_count != 1:
        return False
    if len(set(numa_ids)) != len(numa_ids):
        return False
    policy, required = cpu_bind_policy(run)
    full_cores = run.request_cpu_bind and required and policy == CPUBindPolicy.FULL_PCPUS
    return layout.uniform or not full_cores


@dataclass(frozen=True, slots=True)
class CountingOps:
    """AllocationOps answered from `books` (see the module docstring)."""

    layout: CPULayout
    books: Books
    reasons: bool = True  # False: only whether the Filter admits matters (capacity)

    def hints(self, run: NodeRun, opts: ResourceOptions) -> dict[str, list[Hint]] | Reason:
        return counted_hints(run, opts, self.books, self.layout, reasons=self.reasons)

    def attempt(self, run: NodeRun, opts: ResourceOptions) -> Reason | None:
        return allocation_reason(run, opts, self.books, self.layout)

    def score_inputs(
        self, run: NodeRun, hint: frozenset[int] | None
    ) -> tuple[dict[str, int], dict[str, int]] | Reason:
        """calculateAllocatableAndRequested after tryAllocateFromNode (no reservation)."""
        opts = resource_options(run, hint)
        placed = placed_amounts(run, opts, self.books, hint)
        if isinstance(placed, Reason):
            return placed
        reason = (
            cpu_reason(opts, self.books, placed, self.layout) if opts.request_cpu_bind else None
        )
        if reason is not None:
            return reason
        return score_inputs(run, placed, cpus_taken=opts.request_cpu_bind, held=self.books.held)


def score_inputs(
    run: NodeRun, placed: NUMAAmounts, *, cpus_taken: bool, held: int
) -> tuple[dict[str, int], dict[str, int]]:
    """The chosen NUMA nodes' allocatable and requested (or the node's without any)."""
    view = run.ctx.view
    if placed:
        allocated = available_numa(run.ctx.state, view, add_numa(run.ctx.restore.unmatched_used))[1]
        allocatable: dict[str, int] = {}
        requested: dict[str, int] = {}
        for numa in sorted(placed):
            requested = add(requested, allocated.get(numa, {}))
            allocatable = add(allocatable, view.resources_of(numa))
    else:
        allocatable, requested = dict(run.node.allocatable), dict(run.node.requested)
    if cpus_taken:
        requested["cpu"] = held * 1000  # no preferred cpus: every held cpu stays held
    return allocatable, requested


def fast_ops(run: NodeRun) -> AllocationOps:
    """Counting where it is exact, the reference elsewhere."""
    layout = layout_of(run)
    if not countable(run, layout):
        return REFERENCE_OPS
    return CountingOps(layout, books_of(run, resource_options(run, None), layout))


def evaluate(
    node: NodeSnapshot,
    pod: PodSpec,
    *,
    config: KoordConfig | None = None,
    reservations: Sequence[ReservationSnapshot] = (),
) -> PlacementResult:
    """`koordinator.evaluate`, answered by counting where that is exact."""
    return koordinator.evaluate(node, pod, config=config, reservations=reservations, ops=fast_ops)


def allocate(
    node: NodeSnapshot,
    pod: PodSpec,
    *,
    config: KoordConfig | None = None,
    reservations: Sequence[ReservationSnapshot] = (),
) -> PlacementResult:
    """`koordinator.allocate`: Filter and Score by counting, Reserve for real."""
    return koordinator.allocate(node, pod, config=config, reservations=reservations, ops=fast_ops)
