"""Mirrors: koordinator.reference.state.node_view.

Koordinator's books as counts: the CPU layout indexed once, and what an attempt reads.

`koordinator.fast.filter_score` decides allocation attempts from these counts instead of cpusets;
`koordinator.fast.count` updates them in place as copies are assumed. What derives from a
node's kept books alone (the layout, the books for a bind policy, NUMA statuses) is
kept with them (`kept`): a what-if asks for it on every node, and the next what-if on
the same cached snapshot asks again.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TypeVar, cast

from scheduler_api.engine.koordinator import cache
from scheduler_api.engine.koordinator.reference.cpu import KoordCPUTopology
from scheduler_api.engine.koordinator.reference.numa import ResourceOptions
from scheduler_api.engine.koordinator.reference.plugin import NodeRun
from scheduler_api.engine.koordinator.reference.state import (
    add_numa,
    available_numa,
    subtract_non_negative,
)
from scheduler_api.engine.model.snapshot import CPUBindPolicy

NUMAAmounts = dict[int, dict[str, int]]
T = TypeVar("T")
NO_CPUS: frozenset[int] = frozenset()
ROWS_KEPT = 32  # rows kept per set of books


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
    core_cpus: Mapping[int, frozenset[int]]
    # each NUMA node's cores (their cpus, lowest first) for the cores its cpus are on
    numa_cores: Mapping[int, tuple[tuple[int, ...], ...]]


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
    numa_cores = {
        node: tuple(
            tuple(sorted(core_cpus[core]))
            for core in sorted({topology.details[cpu].core for cpu in cpus})
        )
        for node, cpus in node_cpus.items()
    }
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
        {core: frozenset(cpus) for core, cpus in core_cpus.items()},
        numa_cores,
    )


def layout_of(run: NodeRun) -> CPULayout:
    """The node's layout, kept with its books (hashing its cpu table costs more)."""
    rows = run.node.cpus if run.ctx.view.has_nrt else ()
    return kept(run, ("layout",), lambda: cpu_layout(tuple(rows)))


def bind_filter(policy: str, cpus: frozenset[int], layout: CPULayout) -> frozenset[int]:
    """filterCPUsByRequiredCPUBindPolicy: whole free cores, or one cpu (the lowest) per core."""
    if policy not in (CPUBindPolicy.FULL_PCPUS, CPUBindPolicy.SPREAD_BY_PCPUS):
        return cpus
    groups = [layout.core_cpus[core] & cpus for core in {layout.core_of[cpu] for cpu in cpus}]
    if policy == CPUBindPolicy.FULL_PCPUS:
        return frozenset(c for group in groups if len(group) == layout.per_core for c in group)
    return frozenset(min(group) for group in groups)


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
    # what hint walks read of these books, by NUMA position (kept books are walked often)
    rows: dict[tuple[object, ...], list[int]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def row(self, numa_ids: tuple[int, ...], name: str) -> list[int]:
        """Each NUMA node's available amount of `name` (by position). Not to be changed."""
        row = self.rows.get((numa_ids, name))
        if row is None:
            row = [self.totals.get(numa, {}).get(name, 0) for numa in numa_ids]
            self._keep((numa_ids, name), row)
        return row

    def free_row(self, numa_ids: tuple[int, ...]) -> list[int]:
        """Each NUMA node's free cpus (by position). Not to be changed."""
        row = self.rows.get((numa_ids,))
        if row is None:
            row = [self.numa_free.get(numa, 0) for numa in numa_ids]
            self._keep((numa_ids,), row)
        return row

    def _keep(self, key: tuple[object, ...], row: list[int]) -> None:
        if len(self.rows) < ROWS_KEPT:  # resource names come from pods: bounded
            self.rows[key] = row


def trim(
    totals: NUMAAmounts, usable: Mapping[int, int], *, only: Collection[int] | None = None
) -> None:
    """trimNUMANodeResources with the usable cpu count of each NUMA node given (of the
    NUMA nodes in `only`, or all of them).

    A trimmed NUMA node gets new amounts: the old ones may be shared with kept books.
    """
    numas = list(totals) if only is None else [numa for numa in only if numa in totals]
    for numa in numas:
        amounts = totals[numa]
        cpu = amounts.get("cpu", 0)
        if cpu and usable.get(numa, 0) * 1000 < cpu:
            totals[numa] = {**amounts, "cpu": usable.get(numa, 0) * 1000}


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


def kept(run: NodeRun, key: tuple[object, ...], build: Callable[[], T]) -> T:
    """`build()`, kept with the node's books (`NodeContext.memo`) under `key`.

    For what derives from the node's view and NodeAllocation, and from the pod only
    through `key` and through the reservations whose owners' use it may reuse (the
    unmatched ones, which the kept books hold: their ids stay theirs). Nothing kept
    may be changed in place. Without a memo (a count's changing copy), just built.
    """
    memo = run.ctx.memo
    if memo is None:
        return build()
    if run.ctx.restore.unmatched_used:
        key = (*key, tuple(id(r) for r in run.split.unmatched))
    value = memo.get(key, _MISSING)
    if value is _MISSING:
        value = build()
        cache.remember(memo, key, value)
    return cast(T, value)


_MISSING = object()


def books_of(run: NodeRun, opts: ResourceOptions, layout: CPULayout) -> Books:
    """The books of `run`'s node as its resource manager's state holds them (kept: they
    depend on the pod only through its bind policy). Never changed in place."""
    key = ("books", opts.required_cpu_bind_policy and opts.cpu_bind_policy)
    return kept(run, key, lambda: _books(run, opts, layout))


def _books(run: NodeRun, opts: ResourceOptions, layout: CPULayout) -> Books:
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
