"""What-if capacity on a Koordinator node: how many copies of a pod it takes alone.

The reference fills the node one copy at a time: judge it (every NUMA mask a real
allocation), assume the copy into a new NodeSnapshot, rebuild the resource manager's
books from scratch, judge again. Here the books are built once and updated in place
as each copy is assumed, and each copy is judged by the counting Filter of
`koordinator_fast`:

* counting mode: a copy's cpus are counted per NUMA node, never picked. Exact when
  which cpus a copy takes cannot change whether later copies fit: no cpu binding, a
  preferred bind policy, or FullPCPUs required on a uniform layout (whole cores go,
  so every NUMA node loses exactly the cores it gave).
* picking mode (SpreadByPCPUs required, where later copies depend on which cores
  earlier ones touched, or a cpuset taken "anywhere" on a multi-node layout under a
  NUMA policy): each copy's cpuset comes from the real Reserve (`koordinator.place`).

The shared node filters only tighten as copies pile up; their limit is counted once
(`node_fit_count`). A copy's new cpus were free, so no other holder shares them and
the order the reference rebuilds its books in cannot matter.

`fill_count` returns None where this does not apply (`koordinator_fast.countable`, a
uid clash with the assumed copies); the caller then runs the reference loop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from scheduler_api.engine.errors import AllocationError
from scheduler_api.engine.koordinator import (
    NodeRun,
    filter_run,
    node_run,
    place,
    resource_options,
)
from scheduler_api.engine.koordinator_cpu import (
    satisfies_required_bind_policy,
    take_preferred_cpus,
)
from scheduler_api.engine.koordinator_fast import (
    Books,
    CountingOps,
    CPULayout,
    allocation_reason,
    bind_filter,
    books_of,
    countable,
    cpu_counts,
    exclusive_policy,
    is_published,
    layout_of,
    numa_totals,
    placed_amounts,
    trim,
    uniform_names,
)
from scheduler_api.engine.koordinator_merge import Hint, exclusive_ok
from scheduler_api.engine.koordinator_numa import ResourceOptions
from scheduler_api.engine.koordinator_pod import prefilter
from scheduler_api.engine.koordinator_state import HeldAllocation, KoordConfig, NodeAllocation
from scheduler_api.engine.results import Reason
from scheduler_api.engine.snapshot import (
    CPUBindPolicy,
    NodeSnapshot,
    NUMATopologyPolicy,
    PodSpec,
    ReservationSnapshot,
)
from scheduler_api.engine.whatif_assume import koord_exclusive_policy
from scheduler_api.engine.whatif_systems import node_fit_count

UID_PREFIX = "capacity-"  # what `Judgement.fill_node` names its assumed copies


@dataclass(frozen=True, slots=True)
class Copy:
    """What one copy holds once assumed: its NUMA amounts and its cpus (per NUMA node)."""

    numa_resources: Mapping[int, Mapping[str, int]]
    cpuset: frozenset[int] | None = None  # picking mode
    cpu_counts: Mapping[int, int] | None = None  # counting mode: cpus taken per NUMA node
    cpus_taken: int = 0

    @property
    def holds_something(self) -> bool:
        return bool(self.numa_resources) or self.cpus_taken > 0


def copy_allocation(state: NodeAllocation) -> NodeAllocation:
    """A NodeAllocation the fill may change without touching `state`."""
    return NodeAllocation(
        pods=dict(state.pods),
        cpus=dict(state.cpus),
        resources={numa: dict(r) for numa, r in state.resources.items()},
        shared={numa: set(uids) for numa, uids in state.shared.items()},
        single={numa: set(uids) for numa, uids in state.single.items()},
    )


class Undecided(Exception):
    """A copy the counts cannot follow: the reference has to fill this node."""


def attributable(run: NodeRun, layout: CPULayout) -> bool:
    """Would cpus taken "anywhere" (no NUMA amounts placed) come out of a known NUMA node?"""
    if run.numa_policy == NUMATopologyPolicy.NONE:
        return True  # no hints are ever asked for: only the total count matters
    numa_ids = run.ctx.view.numa_nodes()
    return len(numa_ids) == 1 and set(layout.node_cpus) == {numa_ids[0]}


def needs_picking(run: NodeRun, opts: ResourceOptions) -> bool:
    """SpreadByPCPUs required: later copies depend on which cores earlier ones took."""
    spread = opts.required_cpu_bind_policy and opts.cpu_bind_policy == CPUBindPolicy.SPREAD_BY_PCPUS
    return run.request_cpu_bind and bool(spread)


class Filler:
    """Assumes copies of one pod into one node's books until the next one is refused."""

    def __init__(self, run: NodeRun, layout: CPULayout, pod: PodSpec) -> None:
        self.state = copy_allocation(run.ctx.state)
        self.run = replace(run, ctx=replace(run.ctx, state=self.state))
        self.layout, self.pod = layout, pod
        self.opts = resource_options(self.run, None)
        self.picking = needs_picking(self.run, self.opts)
        self.books = books_of(self.run, self.opts, layout)

    def fill(self, cap: int) -> int:
        """Copies assumed before one is refused (at most `cap`); raises Undecided.

        The first copy goes through the whole Filter (its checks that do not depend on
        room, such as the bind policy's, refuse every copy alike); then the copies that
        single NUMA nodes take are assumed at once, then the rest one by one.
        """
        count = 0
        while count < cap:
            copy = self._next_copy()
            if copy is None:
                return count
            if not copy.holds_something:
                return cap  # the books did not change: every further copy fits alike
            self._assume(copy, f"{UID_PREFIX}{count}")
            count += 1
            if count == 1:
                count = self._fill_single_numa_nodes(count, cap)
        return cap

    def _fill_single_numa_nodes(self, count: int, cap: int) -> int:
        """Assume at once every further copy that will land in a single NUMA node.

        While some single NUMA node could take a copy and may (singleNUMANodeExclusive),
        every policy puts the next copy in one: SingleNUMANode only allows those,
        Restricted and BestEffort prefer the narrowest hint. Copies in different NUMA
        nodes touch different counts, so the state after them does not depend on their
        order: fill each NUMA node in turn, then let `fill` go on with wider hints.
        Picking mode too on a uniform layout (cores inside one NUMA node: a take there
        reads and changes only that NUMA node's cpus). Only where the hint walk itself
        may stop early.
        """
        numa_ids = self.run.ctx.view.numa_nodes()
        if len(numa_ids) < 2 or not uniform_names(self.run):
            return count
        if self.picking and not self.layout.uniform:
            return count
        if self.run.numa_policy == NUMATopologyPolicy.NONE:
            return count  # no hints at all: cpus come from anywhere
        statuses = self.state.numa_status(len(numa_ids))
        exclusive = exclusive_policy(self.run)
        if self.picking:
            self.books = books_of(self.run, self.opts, self.layout)
        for numa in numa_ids:
            mask = frozenset({numa})
            if not exclusive_ok(Hint(mask, True), exclusive, statuses):
                continue
            while count < cap and (copy := self._single_copy(mask)) is not None:
                self._assume(copy, f"{UID_PREFIX}{count}")
                if self.picking:
                    self._refresh_numa(numa)
                count += 1
        return count

    def _refresh_numa(self, numa: int) -> None:
        """Picking mode on a uniform layout: the books after a take from one NUMA node."""
        view, layout, books = self.run.ctx.view, self.layout, self.books
        in_numa = layout.node_cpus.get(numa, frozenset())
        held = {cpu for cpu in in_numa if cpu in self.state.cpus}
        taken = {cpu for cpu in held if self.state.cpus[cpu].ref_count >= view.max_ref_count}
        usable = in_numa - taken - view.reserved_cpus
        if self.opts.required_cpu_bind_policy:
            usable = bind_filter(self.opts.cpu_bind_policy, usable, layout)
        numa_free = {**books.numa_free, numa: len(usable)}
        totals = {**books.totals, **numa_totals(self.run, {numa})}
        if self.opts.required_cpu_bind_policy:
            trim(totals, numa_free)  # a uniform layout: usable cpus per NUMA node
        free = books.free + len(usable) - books.numa_free.get(numa, 0)
        self.books = Books(totals, numa_free, free, len(self.state.cpus))

    def _single_copy(self, mask: frozenset[int]) -> Copy | None:
        """The copy the NUMA node of `mask` would take alone, if it has room for one."""
        lacking = any(
            self.books.totals.get(min(mask), {}).get(name, 0) == 0
            for name in self.opts.requests
            if is_published(self.run.ctx.view, name)
        )
        opts = replace(self.opts, hint=mask)
        if lacking or allocation_reason(self.run, opts, self.books, self.layout) is not None:
            return None
        amounts = placed_amounts(self.run, opts, self.books, mask)
        assert not isinstance(amounts, Reason)
        if not self.run.request_cpu_bind:
            return Copy(amounts)
        if self.picking:
            cpus = pick_cpus(self.run, opts, self.layout, amounts)
            if cpus is None:
                raise Undecided("a take that did not go as counted")
            return Copy(amounts, cpuset=cpus, cpus_taken=len(cpus))
        return Copy(amounts, cpu_counts=cpu_counts(opts, self.books, amounts),
                    cpus_taken=opts.num_cpus_needed)  # fmt: skip

    def _next_copy(self) -> Copy | None:
        """Filter, then the allocation Score and Reserve both make; None when refused."""
        books = books_of(self.run, self.opts, self.layout) if self.picking else self.books
        ops = CountingOps(self.layout, books, reasons=False)
        outcome = filter_run(self.run, ops)
        if not outcome.result.fits:
            return None
        opts = replace(self.opts, hint=outcome.hint)
        if ops.attempt(self.run, opts) is not None:
            return None
        amounts = placed_amounts(self.run, opts, books, outcome.hint)
        assert not isinstance(amounts, Reason)  # attempt() just succeeded with them
        if self.picking:
            return self._picked_copy(opts, amounts)
        if not self.run.request_cpu_bind:
            return Copy(amounts)
        if not amounts and not attributable(self.run, self.layout):
            raise Undecided("cpus taken outside any NUMA amount on a multi-node layout")
        return Copy(amounts, cpu_counts=cpu_counts(opts, books, amounts),
                    cpus_taken=opts.num_cpus_needed)  # fmt: skip

    def _picked_copy(self, opts: ResourceOptions, amounts: dict[int, dict[str, int]]) -> Copy:
        """Picking mode: the copy with the cpuset Reserve would take."""
        cpus = pick_cpus(self.run, opts, self.layout, amounts) if amounts else None
        if cpus is None:  # cpus from anywhere, or a take that did not go as counted
            placed = place(self.run, opts.hint)
            if isinstance(placed, Reason):
                raise Undecided(f"Reserve refused a copy the counts admitted: {placed}")
            cpus = placed.allocation.cpuset
        return Copy(amounts, cpuset=cpus, cpus_taken=len(cpus))

    def _assume(self, copy: Copy, uid: str) -> None:
        """The copy into the books, as the reference's rebuilt NodeAllocation holds it."""
        policy = koord_exclusive_policy(self.pod)
        numa = {n: dict(amounts) for n, amounts in copy.numa_resources.items()}
        held = HeldAllocation(uid, copy.cpuset or frozenset(), policy, numa)
        self.state.add(held, self.layout.topology)
        if copy.cpuset is None:
            self._count_cpus(copy, uid)

    def _count_cpus(self, copy: Copy, uid: str) -> None:
        """Counting mode: take the copy's cpus off the counts, mark the NUMA nodes it used."""
        numa_free = dict(self.books.numa_free)
        used: set[int] = set()
        if copy.cpu_counts:
            for numa, count in copy.cpu_counts.items():
                numa_free[numa] = numa_free.get(numa, 0) - count
                used |= {numa} if count else set()
        elif copy.cpus_taken and self.run.numa_policy != NUMATopologyPolicy.NONE:
            numa = self.run.ctx.view.numa_nodes()[0]  # attributable(): the only node
            numa_free[numa] -= copy.cpus_taken
            used.add(numa)
        target = self.state.shared if len(used) > 1 else self.state.single
        for numa in used:
            target.setdefault(numa, set()).add(uid)
        touched = used | set(copy.numa_resources)
        totals = dict(self.books.totals)
        totals.update(numa_totals(self.run, touched))  # only the copy's NUMA nodes changed
        if self.opts.required_cpu_bind_policy:
            trim(totals, numa_free)  # FullPCPUs on a uniform layout: usable = whole free cores
        self.books = Books(totals, numa_free, self.books.free - copy.cpus_taken, -1)


def pick_cpus(
    run: NodeRun, opts: ResourceOptions, layout: CPULayout, placed: Mapping[int, Mapping[str, int]]
) -> frozenset[int] | None:
    """allocateCPUSet for NUMA amounts already placed: the very takeCPUs calls Reserve makes
    (tryAllocateFromNode: no preferred cpus), on the layout's index instead of a scan of
    every cpu per NUMA node. None when the takes do not add up (the reference decides)."""
    view, state = run.ctx.view, run.ctx.state
    taken = {cpu for cpu, info in state.cpus.items() if info.ref_count >= view.max_ref_count}
    available = layout.cpus - taken - view.reserved_cpus
    if opts.required_cpu_bind_policy:
        available = bind_filter(opts.cpu_bind_policy, available, layout)
    args = (opts.cpu_bind_policy, opts.cpu_exclusive_policy, opts.numa_allocate_strategy)
    held, result = dict(state.cpus), frozenset[int]()
    try:
        for numa, amounts in sorted(placed.items()):
            in_numa = layout.node_cpus.get(numa, frozenset()) & available
            count = min(len(in_numa), amounts.get("cpu", 0) // 1000)
            result |= take_preferred_cpus(
                layout.topology, view.max_ref_count, in_numa, frozenset(), held, count, *args
            )
    except AllocationError:
        return None
    policy = opts.cpu_bind_policy
    satisfied = not opts.required_cpu_bind_policy or satisfies_required_bind_policy(
        policy, result, layout.topology
    )
    return result if len(result) == opts.num_cpus_needed and satisfied else None


def _uid_clash(run: NodeRun, reservations: Sequence[ReservationSnapshot]) -> bool:
    """An existing holder named like an assumed copy (the reference would skip that copy)."""
    uids = set(run.ctx.state.pods) | {r.uid for r in reservations}
    return any(uid.startswith(UID_PREFIX) for uid in uids)


def fill_count(
    node: NodeSnapshot,
    pod: PodSpec,
    config: KoordConfig,
    reservations: Sequence[ReservationSnapshot],
    request: Mapping[str, int],
    limit: int,
) -> int | None:
    """Copies of `pod` `node` takes alone (at most `limit`); None: run the reference loop."""
    cap = node_fit_count(node, request, limit)
    state = prefilter(pod, config)
    if cap == 0 or state.error is not None:
        return 0
    if state.skip:
        return cap  # the plugin is skipped and nothing is held
    run = node_run(node, pod, state, reservations, config)
    if isinstance(run, Reason):
        return 0
    if not run.request_cpu_bind and run.numa_policy == NUMATopologyPolicy.NONE:
        return cap  # Filter passes and Reserve writes nothing: the books never change
    layout = layout_of(run)
    if not countable(run, layout) or _uid_clash(run, reservations):
        return None
    try:
        return Filler(run, layout, pod).fill(cap)
    except Undecided:
        return None
