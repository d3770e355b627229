"""Mirrors: kubelet.reference.cpumanager.cpu_hints, by counting CPUs per NUMA node.

The reference follows upstream's `generateCPUTopologyHints`: for each NUMA mask (255 on
an 8-NUMA node) it walks every available CPU asking its NUMA node, O(2^N * n), and the
what-if's kubelet admission runs it for every node it checks (most of a 5,000-node
what-if). Whether a mask qualifies only needs how many pool CPUs each NUMA node has and
which NUMA nodes the reusable CPUs sit on, so those are counted once per call (O(n)),
each mask's sum follows from a smaller mask's in one step (O(2^N)), and the narrowest
width whose *total* CPUs hold the request is a prefix sum of the NUMA nodes' sizes,
largest first. The masks themselves, in the reference's order, and their hint objects
come built from `kubelet.cache.numa_mask_table`.

Every other rule is the reference's own: the checks and the `count == 0` answer
(`cpu_hint_inputs`) and which qualifying mask is preferred (`cpu_hint_preferred`).
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import accumulate

from scheduler_api.engine.kubelet.cache import numa_mask_table
from scheduler_api.engine.kubelet.reference.cpu_topology import CPUTopology
from scheduler_api.engine.kubelet.reference.cpumanager import (
    StaticPolicyOptions,
    cpu_hint_inputs,
    cpu_hint_preferred,
)
from scheduler_api.engine.kubelet.reference.topologymanager import TopologyHint

__all__ = ["cpu_hints_counted", "sums_by_mask"]

NO_OPTIONS = StaticPolicyOptions()  # the reference's default (frozen), named for ruff's B008


def cpu_hints_counted(
    topology: CPUTopology,
    available: Iterable[int],
    count: int,
    reusable: Iterable[int] = (),
    *,
    options: StaticPolicyOptions = NO_OPTIONS,
    reserved: Iterable[int] = (),
) -> list[TopologyHint]:
    """`cpu_hints`' answer (the same hints in the same order, the same errors), counted.

    Cost: O(n + 2^N) for n CPUs and N NUMA nodes, against the reference's O(2^N * n).
    """
    inputs = cpu_hint_inputs(
        topology, available, count, reusable, options=options, reserved=reserved
    )
    if inputs is None:
        return [TopologyHint(None, True)]
    pool, reuse = inputs
    numa_ids = topology.numa_nodes()
    position = {numa: index for index, numa in enumerate(numa_ids)}
    # As kubelet: a mask must hold every reusable CPU's NUMA node, and a reusable CPU
    # that is also available counts twice (once in `len(reuse)`, once in the pool).
    needed = 0
    for cpu in reuse:
        needed |= 1 << position[topology.numa_of(cpu)]
    free = sums_by_mask([len(topology.cpus_in_numa(numa) & pool) for numa in numa_ids])
    short = count - len(reuse)  # what the pool must add
    min_width = _min_width([len(topology.cpus_in_numa(numa)) for numa in numa_ids], count)
    return [
        row.hints[cpu_hint_preferred(topology, row.mask, min_width, options)]
        for row in numa_mask_table(numa_ids)
        if row.positions & needed == needed and free[row.positions] >= short
    ]


def sums_by_mask(per_node: list[int]) -> list[int]:
    """`sums[bits]`: the sum of `per_node[i]` over the bits i set in `bits`, for every
    `bits` below 2^N: each from the same mask without its lowest bit."""
    sums = [0] * (1 << len(per_node))
    for bits in range(1, len(sums)):
        low = bits & -bits
        sums[bits] = sums[bits ^ low] + per_node[low.bit_length() - 1]
    return sums


def _min_width(totals: list[int], count: int) -> int:
    """The fewest NUMA nodes whose total CPUs reach `count` (the widest mask, all of
    them, when none do): the reference's minimum over every mask, found as the first
    width at which the largest NUMA nodes together reach it."""
    reached = accumulate(sorted(totals, reverse=True))
    return next((width for width, held in enumerate(reached, 1) if held >= count), len(totals))
