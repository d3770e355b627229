"""Mirrors: kubelet.reference.memorymanager.calculate_hints, by summing per NUMA mask.

The reference follows upstream's `calculateHints`: for each NUMA mask (255 on an 8-NUMA
node) it sums every requested resource's allocatable and free memory over the mask's
NUMA nodes and checks the group rules node by node, building a `NUMAMask` per mask; the
what-if's kubelet admission runs it for every Static Memory Manager node it checks, for
every container (or the pod) and again when it allocates. Here each resource's sums over
every mask come from a smaller mask's in one step (O(2^N)), the group rules become two
bit tests (the nodes holding memory alone; the grouped nodes and their groups), and the
masks, in the reference's order, and their hint objects come built from
`kubelet.cache.numa_mask_table`.

Every rule is the reference's: a mask is considered when its allocatable holds every
request (the narrowest such mask's width is the preferred one), refused when the group
rules forbid it, kept when its free memory plus the pod's reusable memory on exactly
that mask holds every request; no mask kept is no hints at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from scheduler_api.engine.kubelet.cache import numa_mask_table
from scheduler_api.engine.kubelet.fast.hints import sums_by_mask
from scheduler_api.engine.kubelet.reference.bitmask import NUMAMask
from scheduler_api.engine.kubelet.reference.memorymanager import (
    MachineState,
    NUMANodeState,
    ResourceHints,
)

__all__ = ["calculate_hints_counted"]


def calculate_hints_counted(
    state: MachineState,
    requested: Mapping[str, int],
    reusable: Mapping[NUMAMask, Mapping[str, int]] | None = None,
) -> ResourceHints:
    """`calculate_hints`' answer (the same hints, in the same order), summed per mask.

    Cost: O(2^N * resources + 2^N * G) for N NUMA nodes and G grouped ones, against the
    reference's O(2^N * N * resources)."""
    numa_ids = state.numa_ids()
    nodes = [node for _, node in state.nodes]
    amounts = [
        (
            amount,
            sums_by_mask([node.table(name).allocatable for node in nodes]),
            sums_by_mask([node.table(name).free for node in nodes]),
            name,
        )
        for name, amount in requested.items()
    ]
    rows = numa_mask_table(numa_ids)
    holds = [
        all(allocatable[row.positions] >= amount for amount, allocatable, _, _ in amounts)
        for row in rows
    ]
    widths = [row.positions.bit_count() for row, held in zip(rows, holds, strict=True) if held]
    min_width = min(widths, default=len(nodes))
    groups = Groups.of(numa_ids, nodes)
    reusable = reusable or {}
    found = []
    for row, held in zip(rows, holds, strict=True):
        if not held or groups.forbid(row.positions):
            continue
        reuse = reusable.get(row.mask, {})
        if any(
            free[row.positions] + reuse.get(name, 0) < amount for amount, _, free, name in amounts
        ):
            continue
        found.append(row.hints[row.positions.bit_count() == min_width])
    return {name: list(found) for name in requested} if found else {}


@dataclass(frozen=True, slots=True)
class Groups:
    """The reference's group rules as bits over the machine's positions (bit i: the
    i-th NUMA id): `grouped`, the nodes grouped with others (no single-NUMA hint on
    them); `alone`, the nodes holding single-NUMA memory (no multi-NUMA hint takes them);
    `held`, each grouped node holding memory with its group's bits (-1 when the group
    names a NUMA node the machine lacks: it equals no mask), which a multi-NUMA hint
    takes only as that very group."""

    grouped: int
    alone: int
    held: tuple[tuple[int, int], ...]

    @classmethod
    def of(cls, numa_ids: tuple[int, ...], nodes: list[NUMANodeState]) -> Groups:
        position = {numa: index for index, numa in enumerate(numa_ids)}
        grouped = alone = 0
        held = []
        for index, node in enumerate(nodes):
            bit = 1 << index
            if len(node.cells) > 1:
                grouped |= bit
                if node.assignments:
                    on_machine = all(n in position for n in node.cells)
                    cells = sum(1 << position[n] for n in node.cells) if on_machine else -1
                    held.append((bit, cells))
            elif node.assignments:
                alone |= bit
        return cls(grouped, alone, tuple(held))

    def forbid(self, bits: int) -> bool:
        """`_grouping_forbids` on a mask given as bits."""
        if bits & (bits - 1) == 0:
            return bool(bits & self.grouped)
        if bits & self.alone:
            return True
        return any(bit & bits and cells != bits for bit, cells in self.held)
