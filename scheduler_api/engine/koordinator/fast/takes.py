"""Mirrors: koordinator.reference.plugin.allocate.

What copies of a pod take on a Koordinator node, worked out without Reserve.

`pick_cpus`: the cpus allocateCPUSet takes for NUMA amounts already placed (the very
takeCPUs calls, or by index where SpreadByPCPUs makes that exact: `pick_spread`);
`alike_copies`: how many copies placing the same amounts in one NUMA node its amounts
still hold. Both are property-tested against the steps they stand for.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from scheduler_api.engine.koordinator.fast.books import CPULayout, bind_filter
from scheduler_api.engine.koordinator.reference.cpu import (
    CPUInfo,
    satisfies_required_bind_policy,
    take_preferred_cpus,
)
from scheduler_api.engine.koordinator.reference.numa import ResourceOptions
from scheduler_api.engine.koordinator.reference.plugin import NodeRun
from scheduler_api.engine.koordinator.reference.state import add_numa
from scheduler_api.engine.model.errors import AllocationError
from scheduler_api.engine.model.snapshot import CPUBindPolicy, CPUExclusivePolicy


def alike_copies(run: NodeRun, numa: int, amounts: Mapping[str, int]) -> int:
    """How many more copies placing `amounts` in NUMA node `numa` still fit its amounts.

    getAvailableNUMANodeResources leaves max(R - max(H - U, 0), 0) of a resource (R
    published, H held, U reusable); distribute places a copy's amount a there when that
    is at least a. After i more copies H grows by i*a, so copy i fits while
    max(H + i*a - U, 0) <= R - a: for every i up to (R - a - H + U) // a, if R >= a.
    The copy's own amounts are in H already (the first copy was assumed).
    """
    resources = run.ctx.view.resources_of(numa)
    held = run.ctx.state.resources.get(numa, {})
    reusable = add_numa(run.ctx.restore.unmatched_used).get(numa, {})
    fits: int | None = None
    for name, amount in amounts.items():
        room = resources.get(name, 0) - amount
        if amount <= 0 or room < 0:
            return 0
        slack = room - held.get(name, 0) + reusable.get(name, 0)
        copies = slack // amount + 1 if slack >= 0 else 0
        fits = copies if fits is None else min(fits, copies)
    return fits or 0


def pick_cpus(
    run: NodeRun, opts: ResourceOptions, layout: CPULayout, placed: Mapping[int, Mapping[str, int]]
) -> frozenset[int] | None:
    """allocateCPUSet for NUMA amounts already placed: the very takeCPUs calls Reserve makes
    (tryAllocateFromNode: no preferred cpus), on the layout's index instead of a scan of
    every cpu per NUMA node. None when the takes do not add up (the reference decides)."""
    if spreads_within_numa_nodes(run, opts, layout):
        result = pick_spread(run, opts, layout, placed)
    else:
        taken = take_cpus_by_numa(run, opts, layout, placed)
        if taken is None:
            return None
        result = taken
    policy = opts.cpu_bind_policy
    satisfied = not opts.required_cpu_bind_policy or satisfies_required_bind_policy(
        policy, result, layout.topology
    )
    return result if len(result) == opts.num_cpus_needed and satisfied else None


def take_cpus_by_numa(
    run: NodeRun, opts: ResourceOptions, layout: CPULayout, placed: Mapping[int, Mapping[str, int]]
) -> frozenset[int] | None:
    """allocateCPUSet's takeCPUs per NUMA node of `placed`; None when one fails."""
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
    return result


def spreads_within_numa_nodes(run: NodeRun, opts: ResourceOptions, layout: CPULayout) -> bool:
    """SpreadByPCPUs required on a uniform SMT layout: what takeCPUs does is `pick_spread`."""
    spread = opts.cpu_bind_policy == CPUBindPolicy.SPREAD_BY_PCPUS
    smt = layout.per_core > 1 and run.ctx.view.max_ref_count == 1
    return bool(opts.required_cpu_bind_policy and spread and layout.uniform and smt)


def pick_spread(
    run: NodeRun, opts: ResourceOptions, layout: CPULayout, placed: Mapping[int, Mapping[str, int]]
) -> frozenset[int]:
    """`take_cpus_by_numa` where `spreads_within_numa_nodes`, in O(cpus of the NUMA nodes).

    The required SpreadByPCPUs filter leaves one cpu per core, so takeCPUs (no whole
    cores: SMT; not over one NUMA node's cpus: uniform) goes to its spread half, whose
    one NUMA node is the only group: it takes that node's lowest cpus, first among those
    not excluded (cores or NUMA nodes others hold exclusively, if the pod's exclusive
    policy says so), else among all of them. The round-robin over cores keeps that order,
    as no two of those cpus share a core.
    """
    view, held = run.ctx.view, run.ctx.state.cpus
    excluded = _excluded(opts.cpu_exclusive_policy, held, layout)
    result: set[int] = set()
    for numa, amounts in sorted(placed.items()):
        node = layout.node_cpus.get(numa, frozenset())
        taken = {c for c in node if c in held and held[c].ref_count >= view.max_ref_count}
        offered = sorted(bind_filter(opts.cpu_bind_policy, node - taken - view.reserved_cpus,
                                     layout))  # fmt: skip
        count = min(len(offered), amounts.get("cpu", 0) // 1000)
        kept = [cpu for cpu in offered if cpu not in excluded]
        result.update((kept if len(kept) >= count else offered)[:count])
    return frozenset(result)


def _excluded(policy: str, held: Mapping[int, CPUInfo], layout: CPULayout) -> frozenset[int]:
    """The cpus takeCPUs first leaves out: of cores (PCPULevel) or NUMA nodes (NUMANodeLevel)
    where another pod with that exclusive policy holds a cpu."""
    details = layout.topology.details
    if policy == CPUExclusivePolicy.PCPU_LEVEL:
        cores = {info.core for info in held.values() if info.exclusive_policy == policy}
        return frozenset(cpu for cpu in layout.cpus if details[cpu].core in cores)
    if policy == CPUExclusivePolicy.NUMA_NODE_LEVEL:
        nodes = {info.node for info in held.values() if info.exclusive_policy == policy}
        return frozenset(cpu for cpu in layout.cpus if details[cpu].node in nodes)
    return frozenset()


@dataclass(frozen=True, slots=True)
class SpreadPlan:
    """What `pick_spread` takes from one NUMA node, copy after copy: the first takes, in
    order (a smaller limit's are the first ones); after k takes, `usable[k]`: how many
    cores still have a cpu. `complete`: no further take is possible (too few cores left)."""

    takes: tuple[frozenset[int], ...]
    usable: tuple[int, ...]
    complete: bool

    def covers(self, limit: int) -> bool:
        """Does the plan hold the takes of `limit` (all of them, or all there are)?"""
        return self.complete or len(self.takes) >= limit


def spread_plan(cores: list[list[int]], needed: int, limit: int) -> SpreadPlan:
    """The SpreadPlan of at most `limit` copies of `needed` cpus (at least one).

    `cores`: each core's available cpus, lowest first; consumed. Each take is the lowest
    cpus, one per core that still has one; none once fewer than `needed` cores have one.
    """
    if needed < 1:
        raise ValueError(f"a spread take needs at least one cpu; got {needed}")
    takes: list[frozenset[int]] = []
    left = sum(1 for cpus in cores if cpus)
    usable = [left]
    while len(takes) < limit:
        offered = sorted(cpus[0] for cpus in cores if cpus)
        if len(offered) < needed:
            return SpreadPlan(tuple(takes), tuple(usable), complete=True)
        taken = frozenset(offered[:needed])
        for cpus in cores:
            if cpus and cpus[0] in taken:
                cpus.pop(0)
                left -= not cpus
        takes.append(taken)
        usable.append(left)
    return SpreadPlan(tuple(takes), tuple(usable), complete=False)
