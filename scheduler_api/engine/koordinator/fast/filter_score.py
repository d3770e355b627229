"""Mirrors: koordinator.reference.plugin.evaluate, koordinator.reference.plugin.allocate.

koord-scheduler's Filter and Score from counts: NUMA masks judged without picking CPUs.

The reference (`koordinator.ReferenceOps`) answers "would this NUMA mask allocate?"
by allocating: NUMA amounts and a cpuset, for each of the 2^N - 1 masks, each time
walking every CPU of the node (about 100 ms for one 8-zone, 384-CPU node). Whether
such an allocation *succeeds*, though, only depends on counts:

* the NUMA amounts come from `distribute` over the mask (the reference function, or
  `koordinator.fast.spread.Spreader`, which works its per-pod parts out once per walk);
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
whose message lists every hint) all masks are enumerated. Before any allocation is
tried, a mask whose NUMA nodes together hold too little is skipped (sums kept per
mask, a width at a time); when all of them together hold too little, none is tried.
Nor is a mask holding a NUMA node that lacks a requested resource: generateHints turns
it down whether it allocates or not (on nodes whose cpus sit in a few of many NUMA
nodes, most masks).

Used only where these arguments hold (`countable`); elsewhere the reference runs.
What depends on the node alone is kept with its books (`koordinator.fast.books.kept`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from operator import add as add_ints
from typing import cast

from scheduler_api.engine.koordinator import cache
from scheduler_api.engine.koordinator.fast.books import (
    Books,
    CPULayout,
    NUMAAmounts,
    books_of,
    kept,
    layout_of,
)
from scheduler_api.engine.koordinator.fast.masks import allocating_rows, mask_table
from scheduler_api.engine.koordinator.fast.spread import (
    NO_AMOUNTS,
    Mask,
    Spreader,
    Width,
    masks_by_width,
)
from scheduler_api.engine.koordinator.reference import plugin as koordinator
from scheduler_api.engine.koordinator.reference.merge import Hint, exclusive_ok, merge
from scheduler_api.engine.koordinator.reference.numa import (
    ERR_NO_NUMA,
    ERR_NOT_ENOUGH_CPUS,
    HintsGenerator,
    ResourceOptions,
    accepted_hints,
    distribute,
    resource_score,
    with_hint,
)
from scheduler_api.engine.koordinator.reference.plugin import (
    REFERENCE_OPS,
    AllocationOps,
    NodeRun,
    cpu_bind_policy,
    resource_options,
)
from scheduler_api.engine.koordinator.reference.state import (
    KoordConfig,
    NodeView,
    add,
    add_numa,
    available_numa,
)
from scheduler_api.engine.model.results import PlacementResult, Reason, ReasonCheck
from scheduler_api.engine.model.snapshot import (
    CPUBindPolicy,
    NodeSnapshot,
    NUMATopologyPolicy,
    PodSpec,
    ReservationSnapshot,
)

VIEW_ROWS_KEPT = 16  # derived rows kept per node view
# From this many NUMA nodes on (15 masks), a whole walk runs on arrays (`koordinator.fast.masks`)
ARRAY_WALK_MIN_NUMA_NODES = 4

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
    attempt = opts if opts.hint == mask else with_hint(opts, mask)
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


def numa_statuses(run: NodeRun) -> tuple[str, ...]:
    """GetAllNUMANodeStatus of the node's NUMA nodes (kept with the node's books)."""
    count = len(run.ctx.view.numa_resources)
    return kept(run, ("statuses", count), lambda: run.ctx.state.numa_status(count))


def _merged_preferred(run: NodeRun, hints: dict[str, list[Hint]]) -> bool:
    """Does _admit's merge of `hints`, from a walk stopped early (uniform names), end on
    a preferred hint?

    Restricted stops only at an exclusive-compatible hint, and prefers every hint: yes.
    SingleNUMANode stops after the single NUMA nodes; every resource has the same list,
    so the merge's best is preferred exactly when one of those hints is preferred and
    exclusive-compatible (no list: no preference, admitted; empty lists: refused).
    BestEffort: the merge itself.
    """
    if run.numa_policy == NUMATopologyPolicy.RESTRICTED:
        return True
    statuses, exclusive = numa_statuses(run), exclusive_policy(run)
    lists = list(hints.values())
    if run.numa_policy == NUMATopologyPolicy.SINGLE_NUMA_NODE and all(h == lists[0] for h in lists):
        if not lists or not lists[0]:
            return not lists
        return any(
            h.preferred and len(h.mask or ()) == 1 and exclusive_ok(h, exclusive, statuses)
            for h in lists[0]
        )
    merged = merge(run.numa_policy, run.ctx.view.numa_nodes(), [hints], exclusive, statuses)
    return merged.hint.preferred


def uniform_names(run: NodeRun) -> bool:
    """Every NUMA node publishes the same resources (so every hint list is the same)."""
    return len(set(run.ctx.view.resource_names)) == 1


class HintWalk:
    """GetTopologyHints over masks by width, optionally stopping at the deciding width.

    Masks are first checked against sums (`_hopeful`): each mask's is its parent's plus
    one NUMA node's amount, worked out a width at a time; when even every NUMA node
    together is too small, no mask can allocate and none is visited. Masks that may
    allocate are distributed by a `Spreader`; a whole walk for a pod binding no cpus
    distributes every mask at once on arrays (`koordinator.fast.masks`).
    """

    def __init__(
        self, run: NodeRun, opts: ResourceOptions, books: Books, layout: CPULayout
    ) -> None:
        self.run, self.opts, self.books, self.layout = run, opts, books, layout
        view = run.ctx.view
        self.numa_ids = view.numa_nodes()
        self.keys, self.published = view.resource_names, view.published
        self.uniform = len(set(self.keys)) == 1
        wanted = {n: a for n, a in opts.requests.items() if a > 0 and n in self.published}
        cpu_published = any("cpu" in amounts for amounts in books.totals.values())
        cpus_needed = opts.num_cpus_needed if opts.request_cpu_bind and cpu_published else 0
        self.rows, self.needs = self._sum_rows(wanted, cpus_needed)

    # What only a walk that tries masks reads: built on first use (a count's last walk
    # on a node most often ends at `_nothing_allocates`, before any mask is tried).

    @cached_property
    def spreader(self) -> Spreader:
        return Spreader(self.opts, self.books.totals, self.run.ctx.view.topology.cpus_per_core())

    @cached_property
    def dead(self) -> frozenset[int]:
        """NUMA nodes no mask holding them allocates: a whole cpu of amount left, and no
        cpu allocateCPUSet may take there. A pod binding at least as many cpus as there
        are NUMA nodes gets at least one whole cpu's share of each NUMA node of any mask
        (split in whole cpus, the cpus left never fall below the NUMA nodes left), so
        such a NUMA node holds one the take cannot give (`_cpus_fall_short_of`,
        `cpu_reason`). On a node whose free cpus sit in some NUMA nodes only, most masks
        hold one."""
        opts = self.opts
        if not opts.request_cpu_bind or opts.whole_cores or opts.requests.get("cpu", 0) <= 0:
            return frozenset()  # whole cores are split by another rule (`Spreader._cpu_share`)
        if opts.num_cpus_needed < len(self.numa_ids):
            return frozenset()
        totals, free = self.books.totals, self.books.numa_free
        return frozenset(
            n
            for n in self.numa_ids
            if totals.get(n, NO_AMOUNTS).get("cpu", 0) >= 1000 and free.get(n, 0) <= 0
        )

    @cached_property
    def score_rows(self) -> list[tuple[str, list[int], list[int]]]:
        return self._score_rows()

    @cached_property
    def exclusive(self) -> tuple[str, tuple[str, ...]]:
        return exclusive_policy(self.run), numa_statuses(self.run)

    def _sum_rows(
        self, wanted: Mapping[str, int], cpus_needed: int
    ) -> tuple[list[list[int]], list[int]]:
        """Per bound to check: each NUMA node's amount (by position), and the bound."""
        rows = [self.books.row(self.numa_ids, name) for name in wanted]
        needs = list(wanted.values())
        if cpus_needed:
            rows.append(self.books.free_row(self.numa_ids))
            needs.append(cpus_needed)
        return rows, needs

    def _score_rows(self) -> list[tuple[str, list[int], list[int]]]:
        """Per weighed resource: each NUMA node's published and available amount."""
        view = self.run.ctx.view
        names = tuple(self.run.ctx.config.resource_weights)
        published = _published_rows(view, names)
        return [
            (name, row, self.books.row(self.numa_ids, name))
            for name, row in zip(names, published, strict=True)
        ]

    def hints(self, stop_early: bool) -> tuple[dict[str, list[Hint]], bool]:
        """The hints, and whether the walk stopped before the widest masks."""
        view, totals, requests = self.run.ctx.view, self.books.totals, self.opts.requests
        names = self.published
        width = len(view.numa_resources)
        if self._nothing_allocates():  # no mask is added: what lacks where is not read
            generator = HintsGenerator({}, {name: width for name in requests})
            generator.names |= {n for n in requests if n in names}  # what every mask adds
            return generator.result(requests, self.run.numa_policy), False
        # generateHints reads only the requested names' (generator.names)
        lacking = {
            n: {numa for numa, a in totals.items() if a.get(n, 0) == 0}
            for n in requests
            if n in names
        }
        generator = HintsGenerator(lacking, {name: width for name in requests})
        if self.uniform:
            generator.names |= {n for n in requests if n in self.keys[0]}
        sums = [[0] for _ in self.rows]
        barred = _barred(generator, self.numa_ids)
        # uniform names: the names, so the barred NUMA nodes, are final; leave their masks out
        widths = masks_by_width(self.numa_ids, barred if self.uniform else frozenset())
        if self.uniform and self._nothing_allocates(barred | self.dead):
            # no mask can be added: the hints the walk would give (a stop it might make
            # under SingleNUMANode gives `counted_hints` these very hints as well)
            return generator.result(requests, self.run.numa_policy), False
        if not stop_early and self._walks_on_arrays(generator):
            return self._hints_on_arrays(generator, barred), False
        for size, masks in enumerate(widths, start=1):
            decided, hopeful_masks = False, []
            if masks.masks:  # none left past the widest unbarred mask: no more sums needed
                sums = self._sums(masks, sums)
                hopeful_masks = self._hopeful(sums, len(masks.masks))
            for mask, hopeful in zip(masks.masks, hopeful_masks, strict=True):
                if not self.uniform and self._names_grow(generator, mask):
                    barred = _barred(generator, self.numa_ids)
                if hopeful and barred.isdisjoint(mask.numas) and self._may_allocate(mask):
                    decided = self._add(generator, mask) or decided
            if stop_early and size < width and self._stops(decided):
                return generator.result(requests, self.run.numa_policy), True
        return generator.result(requests, self.run.numa_policy), False

    def _walks_on_arrays(self, generator: HintsGenerator) -> bool:
        """A whole walk `koordinator.fast.masks` answers: every NUMA node publishing the same
        names (barred NUMA nodes are then final, the rest add every mask), a pod binding
        no cpus (no `dead` NUMA nodes, no cpu rule), and enough NUMA nodes to pay."""
        return (
            self.uniform
            and bool(generator.names)
            and not self.opts.request_cpu_bind
            and len(self.numa_ids) >= ARRAY_WALK_MIN_NUMA_NODES
        )

    def _hints_on_arrays(
        self, generator: HintsGenerator, barred: frozenset[int]
    ) -> dict[str, list[Hint]]:
        """The hints the loop below gives, every mask that allocates in walk order
        (`koordinator.fast.masks.allocating_rows` decides which; none holds a barred NUMA
        node, so the generator takes each whole: `accepted_hints`)."""
        table = mask_table(self.numa_ids, barred)
        rows = allocating_rows(table, self.spreader, self.rows, self.needs, self.numa_ids)
        masks = [table.masks[row] for row in rows]
        wide = next((i for i, mask in enumerate(masks) if len(mask.ids) > 1), len(masks))
        scores = [self._score(mask) for mask in masks[:wide]]  # single NUMA nodes: read
        if self.wide_scores_unread:
            scores += [0] * (len(masks) - wide)
        else:
            scores += [self._score(mask) for mask in masks[wide:]]
        numas = [mask.numas for mask in masks]
        return accepted_hints(generator, numas, scores, self.opts.requests, self.run.numa_policy)

    def _names_grow(self, generator: HintsGenerator, mask: Mask) -> bool:
        """Add the requested names the mask's NUMA nodes publish; True when that added any."""
        keys = frozenset().union(*(self.keys[p] for p in mask.positions))
        named = len(generator.names)
        generator.names |= {n for n in self.opts.requests if n in keys}
        return len(generator.names) != named

    def _stops(self, decided: bool) -> bool:
        return self.run.numa_policy == NUMATopologyPolicy.SINGLE_NUMA_NODE or decided

    def _nothing_allocates(self, barred: frozenset[int] = frozenset()) -> bool:
        """Even all NUMA nodes together (all but the `barred` ones) are too small: every
        mask (holding none of those) is hopeless (amounts and free cpus are never
        negative, so no mask sums more than all of them)."""
        bounds = zip(self.rows, self.needs, strict=True)
        if not barred:
            return any(sum(row) < need for row, need in bounds)
        kept = [p for p, numa in enumerate(self.numa_ids) if numa not in barred]
        return any(sum(row[p] for p in kept) < need for row, need in bounds)

    def _sums(self, masks: Width, previous: list[list[int]]) -> list[list[int]]:
        """Per bound, the sum over each mask of the width (from the previous width's)."""
        result = []
        for sums, row in zip(previous, self.rows, strict=True):
            parents = map(sums.__getitem__, masks.parents)
            result.append(list(map(add_ints, parents, map(row.__getitem__, masks.lasts))))
        return result

    def _hopeful(self, sums: list[list[int]], count: int) -> list[bool]:
        """Masks with enough in their NUMA nodes for distribute and allocateCPUSet.

        The others cannot allocate: each NUMA node gives at most its total of a
        resource, and at most its usable cpus (once cpu amounts are distributed at all).
        """
        checks = [list(map(need.__le__, row)) for row, need in zip(sums, self.needs, strict=True)]
        if not checks:
            return [True] * count
        return checks[0] if len(checks) == 1 else list(map(all, zip(*checks, strict=True)))

    def _add(self, generator: HintsGenerator, mask: Mask) -> bool:
        """A mask that allocates into generateResourceHints; True when it added a deciding
        hint (under Restricted, only one singleNUMANodeExclusive allows)."""
        if not generator.add(mask.numas, 0 if self._score_unread(mask) else self._score(mask)):
            return False
        if self.run.numa_policy != NUMATopologyPolicy.RESTRICTED:
            return True
        return exclusive_ok(Hint(mask.numas, True), *self.exclusive)

    @cached_property
    def wide_scores_unread(self) -> bool:
        """SingleNUMANode's merge weighs single-NUMA hints only: a wider one is only quoted,
        by its mask, when the Filter refuses (`provider_summary`). Its score, the dearest
        part of a hint, is left at 0: a refusal's full walk tries every mask."""
        return self.run.numa_policy == NUMATopologyPolicy.SINGLE_NUMA_NODE

    def _score_unread(self, mask: Mask) -> bool:
        return self.wide_scores_unread and len(mask.ids) > 1

    def _cpus_fall_short(self, mask: Mask) -> bool:
        """cpu's own distribute over the mask already fails `cpu_reason`."""
        spread = self.spreader.spread_cpu(mask.ids)
        return _cpus_fall_short_of(spread, self.books, self.opts.num_cpus_needed)

    def _score(self, mask: Mask) -> int:
        """The NUMA scorer's score of the mask: requested = published minus available
        over its NUMA nodes (as _mask_totals sums them), for the weighed resources only,
        the only ones resource_score reads (a resource no NUMA node publishes has no
        capacity, so it is skipped either way)."""
        config = self.run.ctx.config
        published: dict[str, int] = {}
        requested: dict[str, int] = {}
        positions = mask.positions
        for name, view_row, free_row in self.score_rows:
            if len(positions) == 1:
                total, free = view_row[positions[0]], free_row[positions[0]]
            else:
                total, free = (
                    sum(view_row[p] for p in positions),
                    sum(free_row[p] for p in positions),
                )
            published[name] = total
            requested[name] = max(total - free, 0)
        return resource_score(
            requested, published, self.opts.requests, config.resource_weights,
            config.numa_scoring_strategy,
        )  # fmt: skip

    def _may_allocate(self, mask: Mask) -> bool:
        return self.dead.isdisjoint(mask.numas) and self._allocates(mask)

    def _allocates(self, mask: Mask) -> bool:
        """`allocation_reason` is None for the mask (resource_options: no required amounts)."""
        if len(mask.ids) == 1:
            placed, missing = self.spreader.spread_alone(mask.ids[0], self.books.totals)
        elif self.opts.request_cpu_bind and self._cpus_fall_short(mask):
            return False
        elif not self.opts.request_cpu_bind and self.spreader.shares_fit(mask.ids):
            return True  # a large pod's refusal tries every mask: most take it evenly
        else:
            placed, missing = self.spreader.spread(mask.ids, all_missing=False)
        if missing:
            return False
        if not self.opts.request_cpu_bind:
            return True
        return cpu_reason(self.opts, self.books, placed, self.layout) is None


def _cpus_fall_short_of(
    spread: tuple[dict[int, int], bool] | None, books: Books, needed: int
) -> bool:
    """Would `cpu_reason` refuse the mask whose cpu distribute gave `spread`, whatever
    the other names do: cpu left unplaced (distribute misses it), or the cpus
    allocateCPUSet takes where cpu is placed (min(free there, the amount)) not adding
    up to `needed`? (A NUMA node given another name but no cpu adds none.)"""
    if spread is None:
        return False
    placed, whole = spread
    if not whole:
        return True
    taken = sum(max(min(books.numa_free.get(n, 0), cpu // 1000), 0) for n, cpu in placed.items())
    return bool(placed) and taken != needed


def _barred(generator: HintsGenerator, numa_ids: tuple[int, ...]) -> frozenset[int]:
    """The NUMA nodes whose masks `generator.add` turns down, whether they allocate or not:
    those lacking a resource of `generator.names` (all of them while it has no names: it
    then adds no hint). Trying such a mask changes nothing (`_allocates` and `_score`
    only read), so it is not tried; on a node whose cpus sit in some NUMA nodes only,
    the masks holding the others are most of them."""
    if not generator.names:
        return frozenset(numa_ids)
    return frozenset().union(*(generator.lacking.get(name, ()) for name in generator.names))


def _published_rows(view: NodeView, names: tuple[str, ...]) -> list[list[int]]:
    """Per name, each NUMA node's published amount (by position); kept with the view
    (a count walks hints copy after copy on one node). Not to be changed."""
    key = ("published rows", names)
    rows = view.derived.get(key)
    if rows is None:
        rows = [[view.resources_of(n).get(name, 0) for n in view.numa_nodes()] for name in names]
        if len(view.derived) < VIEW_ROWS_KEPT:  # weights come from configs: bounded
            view.derived[key] = rows
    return cast(list[list[int]], rows)


def is_published(view: NodeView, name: str) -> bool:
    return name in view.published


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
    if walk.uniform:
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
        allocated = kept(run, ("allocated",), lambda: _allocated(run))
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


def _allocated(run: NodeRun) -> NUMAAmounts:
    """getAvailableNUMANodeResources' allocated amounts, less what owners may reuse."""
    return available_numa(run.ctx.state, run.ctx.view, add_numa(run.ctx.restore.unmatched_used))[1]


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
    conf = config or KoordConfig()
    result, _, _ = koordinator.filter_and_score(node, pod, conf, reservations, fast_ops, cache.KEPT)
    return result


def allocate(
    node: NodeSnapshot,
    pod: PodSpec,
    *,
    config: KoordConfig | None = None,
    reservations: Sequence[ReservationSnapshot] = (),
) -> PlacementResult:
    """`koordinator.allocate`: Filter and Score by counting, Reserve for real."""
    return koordinator.allocate(
        node, pod, config=config, reservations=reservations, ops=fast_ops, inputs=cache.KEPT
    )
