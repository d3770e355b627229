"""Mirrors: whatif.judge.Judgement.fill_copy_by_copy.

What-if capacity on a Koordinator node: how many copies of a pod it takes alone.

The reference fills the node one copy at a time: judge it (every NUMA mask a real
allocation), assume the copy into a new NodeSnapshot, rebuild the resource manager's
books from scratch, judge again. Here the books are built once and updated in place
as each copy is assumed, and each copy is judged by the counting Filter of
`koordinator.fast.filter_score`:

* counting mode: a copy's cpus are counted per NUMA node, never picked. Exact when
  which cpus a copy takes cannot change whether later copies fit: no cpu binding, a
  preferred bind policy, or FullPCPUs required on a uniform layout (whole cores go,
  so every NUMA node loses exactly the cores it gave).
* picking mode (SpreadByPCPUs required, where later copies depend on which cores
  earlier ones touched, or a cpuset taken "anywhere" on a multi-node layout under a
  NUMA policy): each copy's cpuset comes from the real Reserve (`koordinator.place`),
  or from its takeCPUs calls where those are exact (`koordinator.fast.takes`).

Where a copy's effect is known, many are assumed at once (each exactness argument is
at its method, each property-tested against the copy-by-copy fill): the copies a
single NUMA node takes alone, in closed form (`alike_copies`, and a spread plan when
picking, kept with the node for the next pod of that cpu count); those single NUMA
nodes before any copy is judged whole, where Filter would put copies there anyway
(`_singles_first`); under no NUMA policy, the copies the free cpus hold. A verdict the
fast Filter already gave on the node serves for its first copy.

The shared node filters only tighten as copies pile up; their limit is counted once
(`node_fit_count`). A copy's new cpus were free, so no other holder shares them and
the order the reference rebuilds its books in cannot matter.

`fill_count` returns None where this does not apply (`koordinator.fast.filter_score.countable`, a
uid clash with the assumed copies); the caller then runs the reference loop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import cast

from scheduler_api.engine.koordinator import cache
from scheduler_api.engine.koordinator.fast.books import (
    Books,
    CPULayout,
    books_of,
    kept,
    layout_of,
    numa_totals,
    trim,
)
from scheduler_api.engine.koordinator.fast.filter_score import (
    CountingOps,
    countable,
    cpu_counts,
    cpu_reason,
    exclusive_policy,
    is_published,
    placed_amounts,
    uniform_names,
)
from scheduler_api.engine.koordinator.fast.spread import Spreader
from scheduler_api.engine.koordinator.fast.takes import (
    SpreadPlan,
    alike_copies,
    pick_cpus,
    spread_plan,
    spreads_within_numa_nodes,
)
from scheduler_api.engine.koordinator.reference.merge import Hint, exclusive_ok
from scheduler_api.engine.koordinator.reference.numa import ResourceOptions, with_hint
from scheduler_api.engine.koordinator.reference.plugin import (
    NodeRun,
    bind_checks,
    filter_run,
    filter_run_refuses_at_once,
    node_run,
    place,
    resource_options,
)
from scheduler_api.engine.koordinator.reference.state import (
    HeldAllocation,
    KoordConfig,
    NodeAllocation,
    NodeMemo,
    add,
)
from scheduler_api.engine.model.decided import Undecided
from scheduler_api.engine.model.kubernetes import node_fit_count
from scheduler_api.engine.model.results import PlacementResult, Reason
from scheduler_api.engine.model.snapshot import (
    CPUBindPolicy,
    CPUExclusivePolicy,
    NodeSnapshot,
    NUMATopologyPolicy,
    PodSpec,
    ReservationSnapshot,
)

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

    def __init__(
        self,
        run: NodeRun,
        layout: CPULayout,
        pod: PodSpec,
        *,
        closed_form: bool = True,
        judged: PlacementResult | None = None,
    ) -> None:
        # `countable` nodes only: a cpu with one holder is taken (max_ref_count 1)
        assert run.ctx.view.max_ref_count == 1, "a count needs a countable node"
        self.opts = resource_options(run, None)
        self.books = books_of(run, self.opts, layout)  # the kept books: the copy is still equal
        self.state = copy_allocation(run.ctx.state)
        # no memo: what it keeps describes the node's own books, not this changing copy
        self.run = replace(run, ctx=replace(run.ctx, state=self.state, memo=None))
        self.layout, self.pod = layout, pod
        self.picking = needs_picking(self.run, self.opts)
        self.policy = cache.exclusive_policy_of(pod)
        self.numa_ids = frozenset(self.run.ctx.view.numa_nodes())
        self.stale = False  # picking mode: the books must be built again before use
        # the node's own memo keeps what its view and held cpus alone decide (`_spread_plan`:
        # what unmatched reservations' owners may reuse is not read there)
        self.plans = run.ctx.memo
        self.changed: set[int] = set()  # NUMA nodes (layout ids) copies took cpus of
        self.closed_form = closed_form  # False: every copy judged (what the tests hold it to)
        self.judged = judged  # Filter's verdict on the node as it is, if already given
        view = self.run.ctx.view
        self.published = [name for name in self.opts.requests if is_published(view, name)]
        self.spreader = Spreader(self.opts, self.books.totals, view.topology.cpus_per_core())

    def fill(self, cap: int) -> int:
        """Copies assumed before one is refused (at most `cap`); raises Undecided.

        Where single NUMA nodes take copies first (`_singles_first`), those come first;
        else the first copy goes through the whole Filter (its checks that do not depend
        on room, such as the bind policy's, refuse every copy alike: a verdict already
        given on the node serves), then single NUMA nodes fill. The rest one by one,
        or at once where only the free cpus change (`_only_free_cpus_change`).
        """
        count, singles_done = 0, self._singles_first()
        if singles_done:
            count = self._fill_single_numa_nodes(0, cap)
            if self.run.numa_policy == NUMATopologyPolicy.SINGLE_NUMA_NODE:
                return count  # no wider hint is ever admitted: the next copy is refused
        verdict = self.judged if self.closed_form and count == 0 else None
        while count < cap:
            copy, verdict = self._next_copy(verdict), None
            if copy is None:
                return count
            if not copy.holds_something:
                return cap  # the books did not change: every further copy fits alike
            self._assume(copy, f"{UID_PREFIX}{count}")
            count += 1
            if count == 1 and self.closed_form and self._only_free_cpus_change(copy):
                return count + self._assume_anywhere(copy, count, cap - count)
            if count == 1 and not singles_done:
                count = self._fill_single_numa_nodes(count, cap)
        return cap

    def _singles_first(self) -> bool:
        """Can the copies single NUMA nodes take be assumed before any is judged whole?

        Where `_fill_single_numa_nodes` applies, from the first copy on: while some NUMA
        node takes a copy alone and may (singleNUMANodeExclusive), Filter admits one and
        puts it in such a node, as the rest do (see there); Filter's other checks (the
        bind checks) do not depend on room, and with some published resource requested
        no hint is "anywhere". Under SingleNUMANode, which admits only single-NUMA hints,
        the first copy the singles cannot take is refused: a NUMA node refused stays
        refused (copies elsewhere only take), and copies make no NUMA node "shared".
        """
        run, view = self.run, self.run.ctx.view
        if not self.closed_form or (self.picking and not self.layout.uniform):
            return False
        if run.numa_policy == NUMATopologyPolicy.NONE:
            return False
        if len(view.numa_resources) < 2 or not uniform_names(run):
            return False
        requests = self.opts.requests.items()
        if not any(amount > 0 and is_published(view, name) for name, amount in requests):
            return False  # the merge would admit the "anywhere" hint
        return not run.request_cpu_bind or bind_checks(run) is None

    def _only_free_cpus_change(self, copy: Copy) -> bool:
        """No NUMA policy, counting mode: Filter asks only whether `free` cpus suffice
        (the bind checks do not depend on room; no hint means no NUMA amounts), and a
        copy only takes its cpus off `free`."""
        counted = copy.cpuset is None and not copy.numa_resources and not copy.cpu_counts
        return self.run.numa_policy == NUMATopologyPolicy.NONE and counted and not self.picking

    def _assume_anywhere(self, copy: Copy, count: int, room: int) -> int:
        """Assume at once the further copies `free` cpus hold (at most `room`): each takes
        as many; the first one refused is the first that finds too few."""
        more = min(room, self.books.free // copy.cpus_taken) if copy.cpus_taken else room
        books = self.books  # no NUMA amounts, no cpuset: the NodeAllocation keeps nothing more
        self.books = Books(books.totals, books.numa_free, books.free - more * copy.cpus_taken, -1)
        return more

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
        for numa in numa_ids:
            mask = frozenset({numa})
            if not exclusive_ok(Hint(mask, True), exclusive, statuses):
                continue
            taken = self._take_in_numa(numa, count, cap - count) if count < cap else None
            if taken is not None:
                count += taken
                continue
            while count < cap and (copy := self._single_copy(mask)) is not None:
                self._assume(copy, f"{UID_PREFIX}{count}")
                count += 1
                more = self._assume_alike(numa, copy, count, cap - count)
                if more is not None:
                    count += more
                    break  # the next copy here is the first one refused
        return count

    def _assume_alike(self, numa: int, copy: Copy, count: int, room: int) -> int | None:
        """Assume at once the further copies NUMA node `numa` takes (at most `room`);
        None where they are left to the copy-by-copy fill.

        Counting mode: each takes the same amounts and cpus as `copy`, and the next one
        fits while every amount it places fits what is left (`alike_copies`) and, when
        binding, the NUMA node's and the node's free cpus hold its cpus.
        """
        if not self.closed_form or self.picking or set(copy.numa_resources) != {numa}:
            return None
        per_numa = (copy.cpu_counts or {}).get(numa, 0)
        if copy.cpus_taken and (per_numa != copy.cpus_taken or len(copy.cpu_counts or {}) > 1):
            return None
        more = min(room, alike_copies(self.run, numa, copy.numa_resources[numa]))
        if copy.cpus_taken:
            more = min(more, self.books.numa_free.get(numa, 0) // per_numa)
            more = min(more, self.books.free // per_numa)
        if more > 0:
            self._assume_many(numa, copy, count, more)
        return more

    def _take_in_numa(self, numa: int, count: int, room: int) -> int | None:
        """Picking mode: assume at once the copies NUMA node `numa` takes alone (at most
        `room`); None where they are left to the copy-by-copy fill.

        Where `pick_spread` picks and the pod's exclusive policy excludes nothing, every
        copy places what distribute puts in the node alone (the same amounts each time)
        and takes the node's lowest cpus, one per core that has one left: followed here
        on the node's cores. The first copy fits as `_single_copy` says (nothing it
        requests lacking, its amounts within the books'); the next ones while their
        amounts fit (`alike_copies`); each while that many cores still have a cpu
        (the node's free cpus include those, so they hold the copy too).
        """
        exclusive = (CPUExclusivePolicy.PCPU_LEVEL, CPUExclusivePolicy.NUMA_NODE_LEVEL)
        if not (self.closed_form and self.picking) or self.opts.cpu_exclusive_policy in exclusive:
            return None
        if not spreads_within_numa_nodes(self.run, self.opts, self.layout):
            return None
        books, needed = self._fresh_books(), self.opts.num_cpus_needed
        left = books.totals.get(numa, {})
        if any(left.get(name, 0) == 0 for name in self.published):
            return 0
        placed, missing = self.spreader.spread_alone(numa, books.totals)
        if missing:
            return 0
        amounts = placed.get(numa, {})
        if needed <= 0 or amounts.get("cpu", 0) != needed * 1000:
            return None  # cpus not as amounts say: the take decides, copy by copy
        limit = min(room, alike_copies(self.run, numa, amounts))
        if limit <= 0:
            return 0
        plan = self._spread_plan(numa, needed, limit)
        takes = plan.takes[:limit]
        for index, taken in enumerate(takes, start=count):
            held = HeldAllocation(f"{UID_PREFIX}{index}", taken, self.policy, {numa: dict(amounts)})
            self.state.add(held, self.layout.topology)
        if takes and self.stale:
            self._refresh_taken(frozenset().union(*takes), placed)
        elif takes:  # the required SpreadByPCPUs filter leaves a cpu of each core with one
            self.changed.add(numa)
            self._refresh_numa(numa, usable=plan.usable[len(takes)])
        return len(takes)

    def _spread_plan(self, numa: int, needed: int, limit: int) -> SpreadPlan:
        """The first `limit` takes copies make in NUMA node `numa`. While no copy
        has taken cpus there, they depend on the node alone (its free cores) and on the
        copy's cpu count, not on the rest of the pod, which only sets how many are
        taken: kept with the node's books for the next what-if (built again, longer,
        for one that takes more)."""
        memo = None if numa in self.changed else self.plans
        key = ("spread plan", numa, needed)
        plan = memo.get(key) if memo is not None else None
        if not isinstance(plan, SpreadPlan) or not plan.covers(limit):
            plan = spread_plan(self._free_cores(numa), needed, limit)
            if memo is not None:
                cache.remember(memo, key, plan)
        return plan

    def _free_cores(self, numa: int) -> list[list[int]]:
        """The available cpus of each core of NUMA node `numa`, lowest first: neither
        reserved nor held (one holder is enough: max_ref_count 1, see `__init__`)."""
        held, reserved = self.state.cpus, self.run.ctx.view.reserved_cpus
        cores = self.layout.numa_cores.get(numa, ())
        return [[c for c in core if c not in held and c not in reserved] for core in cores]

    def _assume_many(self, numa: int, copy: Copy, count: int, more: int) -> None:
        """`more` copies like `copy` into the state and the books, as `_assume` would one
        by one: the NUMA amounts add up, the cpus come off the NUMA node's count, the
        copies use the NUMA node alone. Their entries in `pods` are left out: nothing
        after the count's start reads them (their uids are unique by construction)."""
        amounts = copy.numa_resources[numa]
        held = self.state.resources.get(numa, {})
        added = {name: amount * more for name, amount in amounts.items()}
        self.state.resources[numa] = add(held, added)
        numa_free = dict(self.books.numa_free)
        if copy.cpus_taken:
            numa_free[numa] -= copy.cpus_taken * more
            uids = (f"{UID_PREFIX}{index}" for index in range(count, count + more))
            self.state.single.setdefault(numa, set()).update(uids)
        totals = {**self.books.totals, **numa_totals(self.run, {numa})}
        if self.opts.required_cpu_bind_policy:
            trim(totals, numa_free)
        free = self.books.free - copy.cpus_taken * more
        self.books = Books(totals, numa_free, free, -1)

    def _refresh_numa(self, numa: int, *, usable: int | None = None) -> None:
        """Picking mode on a uniform layout: the books after a take from one NUMA node.

        `usable`: the NUMA node's usable cpus, when the caller knows how many."""
        books = self.books
        if usable is None:
            usable = self._usable_count(numa)
        numa_free = {**books.numa_free, numa: usable}
        totals = {**books.totals, **numa_totals(self.run, {numa})}
        if self.opts.required_cpu_bind_policy:  # a uniform layout: usable cpus per NUMA node
            trim(totals, numa_free, only=(numa,))  # the others were trimmed with these counts
        free = books.free + usable - books.numa_free.get(numa, 0)
        self.books = Books(totals, numa_free, free, len(self.state.cpus))

    def _usable_count(self, numa: int) -> int:
        """How many cpus of NUMA node `numa` allocateCPUSet may take, in picking mode:
        the required SpreadByPCPUs filter keeps one cpu of each core that has one, and
        on a uniform layout each core lies in one NUMA node."""
        assert self.picking, "usable cpus are counted on cores only under SpreadByPCPUs"
        return sum(1 for cpus in self._free_cores(numa) if cpus)

    def _single_copy(self, mask: frozenset[int]) -> Copy | None:
        """The copy the NUMA node of `mask` would take alone, if it has room for one:
        no resource it requests lacking there (generateHints), then what
        tryAllocateFromNode does with that hint (`allocation_reason`, whose options do
        not read the hint but through distribute), then its cpus."""
        books, numa = self._fresh_books(), min(mask)
        left = books.totals.get(numa, {})
        if any(left.get(name, 0) == 0 for name in self.published):
            return None
        amounts, missing = self.spreader.spread_alone(numa, books.totals)
        if missing:
            return None
        if not self.run.request_cpu_bind:
            return Copy(amounts)
        if cpu_reason(self.opts, books, amounts, self.layout) is not None:
            return None
        if self.picking:
            cpus = pick_cpus(self.run, self.opts, self.layout, amounts)
            if cpus is None:
                raise Undecided("a take that did not go as counted")
            return Copy(amounts, cpuset=cpus, cpus_taken=len(cpus))
        return Copy(amounts, cpu_counts=cpu_counts(self.opts, books, amounts),
                    cpus_taken=self.opts.num_cpus_needed)  # fmt: skip

    def _next_copy(self, verdict: PlacementResult | None = None) -> Copy | None:
        """Filter, then the allocation Score and Reserve both make; None when refused.

        `verdict`: Filter's, already given on these very books (`judged`): whether it
        admits the pod, and the NUMA nodes of its hint (none: no hint).
        """
        books = self._fresh_books()
        ops = CountingOps(self.layout, books, reasons=False)
        if verdict is None:
            outcome = filter_run(self.run, ops)
            fits, hint = outcome.result.fits, outcome.hint
        else:
            fits, hint = verdict.fits, frozenset(verdict.numa_zones) or None
        if not fits:
            return None
        opts = with_hint(self.opts, hint)
        if not self._filter_attempted() and ops.attempt(self.run, opts) is not None:
            return None
        amounts = placed_amounts(self.run, opts, books, hint)
        assert not isinstance(amounts, Reason)  # the attempt succeeded with them
        if self.picking:
            return self._picked_copy(opts, amounts)
        if not self.run.request_cpu_bind:
            return Copy(amounts)
        if not amounts and not attributable(self.run, self.layout):
            raise Undecided("cpus taken outside any NUMA amount on a multi-node layout")
        return Copy(amounts, cpu_counts=cpu_counts(opts, books, amounts),
                    cpus_taken=opts.num_cpus_needed)  # fmt: skip

    def _filter_attempted(self) -> bool:
        """Did an admitting Filter end with this copy's very allocation attempt? Under a
        NUMA policy it does (FilterByNUMANode: the merged hint, the same options and
        books); under none it tries one only for a required bind policy."""
        return self.run.numa_policy != NUMATopologyPolicy.NONE

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
        numa = {n: dict(amounts) for n, amounts in copy.numa_resources.items()}
        held = HeldAllocation(uid, copy.cpuset or frozenset(), self.policy, numa)
        self.state.add(held, self.layout.topology)
        if copy.cpuset is None:
            self._count_cpus(copy, uid)
        else:
            self._refresh_taken(copy.cpuset, copy.numa_resources)

    def _refresh_taken(self, cpuset: frozenset[int], amounts: Mapping[int, object]) -> None:
        """Picking mode: the books after a take. On a uniform layout (no core across NUMA
        nodes) only the NUMA nodes of the take changed; when the books count each of
        them (upstream finds no cpu of a NUMA id with socket bits), refreshing those
        keeps every count exact. Else they are built again before next use."""
        details = self.layout.topology.details
        touched = {details[cpu].node for cpu in cpuset}
        self.changed |= touched
        if self.stale or not self.layout.uniform or not touched <= self.numa_ids:
            self.stale = True
            return
        for numa in sorted(touched | set(amounts)):
            self._refresh_numa(numa)

    def _fresh_books(self) -> Books:
        """The books as the state now holds them (built again after a take if need be)."""
        if self.stale:
            self.books, self.stale = books_of(self.run, self.opts, self.layout), False
        return self.books

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


def _uid_clash(run: NodeRun, reservations: Sequence[ReservationSnapshot]) -> bool:
    """An existing holder named like an assumed copy (the reference would skip that copy)."""
    pods = run.ctx.state.pods
    held = kept(run, ("uid clash",), lambda: any(uid.startswith(UID_PREFIX) for uid in pods))
    return held or any(r.uid.startswith(UID_PREFIX) for r in reservations)


def fill_count(
    node: NodeSnapshot,
    pod: PodSpec,
    config: KoordConfig,
    reservations: Sequence[ReservationSnapshot],
    request: Mapping[str, int],
    limit: int,
    *,
    judged: PlacementResult | None = None,
) -> int | None:
    """Copies of `pod` `node` takes alone (at most `limit`); None: run the reference loop.

    `judged`: the fast Filter's verdict on `node` for this pod, config and reservations,
    when the caller has it already; the first copy is then not judged again.
    """
    cap = node_fit_count(node, request, limit)
    state = cache.kept_prefilter(pod, config)
    if cap == 0 or state.error is not None:
        return 0
    if state.skip:
        return cap  # the plugin is skipped and nothing is held
    run = node_run(node, pod, state, reservations, config, cache.KEPT)
    if isinstance(run, Reason) or filter_run_refuses_at_once(run):
        return 0
    if run.state.has_reservation_affinity and run.split.matched:
        return None  # each copy books a reservation the next one needs: filled copy by copy
    if not run.request_cpu_bind and run.numa_policy == NUMATopologyPolicy.NONE:
        return cap  # Filter passes and Reserve writes nothing: the books never change
    kept = _kept_counts(run)
    key = (cache.question_key(pod, config), cap)
    if kept is not None and key in kept:
        return cast(int | None, kept[key])
    counted = _counted(run, pod, reservations, cap, judged)
    if kept is not None:
        cache.remember(kept, key, counted)
    return counted


def _kept_counts(run: NodeRun) -> NodeMemo | None:
    """The counts kept with the node's books, by question and cap (see `question_key`);
    one memo entry, so that many questions do not crowd out what else the memo keeps
    (`remember` starts a full memo afresh: so does this one, at MEMO_KEPT counts)."""
    memo = run.ctx.memo
    if not cache.KEEP_COUNTS or memo is None:
        return None
    kept = memo.get(COUNT_KEY)
    if not isinstance(kept, dict):
        kept = {}
        cache.remember(memo, COUNT_KEY, kept)
    return kept


def _counted(
    run: NodeRun,
    pod: PodSpec,
    reservations: Sequence[ReservationSnapshot],
    cap: int,
    judged: PlacementResult | None,
) -> int | None:
    layout = layout_of(run)
    if not countable(run, layout) or _uid_clash(run, reservations):
        return None
    try:
        return Filler(run, layout, pod, judged=judged).fill(cap)
    except Undecided:
        return None


COUNT_KEY = "copies"  # the node memo's entry for its counts (`_kept_counts`)
