"""Mirrors: koordinator.reference.numa.allocate_by_hint.

Which NUMA masks a pod that binds no cpus allocates in, every mask of a node at once.

A Koordinator node refusing a pod under SingleNUMANode (or a refusal under another
policy) quotes every hint, so its hint walk tries every mask: 255 on an 8-NUMA
machine, each a `distribute` worked out in Python (about 1 ms a node). For a pod that
binds no cpus, whether a mask allocates is whether distribute places all of every
requested amount there (`HintWalk._allocates`), and distribute is successive floors:
the NUMA nodes of the mask, in the order `positional_sort` leaves them (which depends
on the width only, `Spreader.orders`), each give min(what it has, what is left // the
NUMA nodes left). Here that runs on numpy arrays of shape (masks,), one step per NUMA
node, masks of every width together (a mask of width w takes part in steps 0..w-1;
masks come by width, so those are a tail of the table). Property-tested against the
walk mask by mask.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from scheduler_api.engine.koordinator.fast.spread import Mask, Spreader, masks_by_width

Ints = NDArray[np.int64]
Bools = NDArray[np.bool_]


@dataclass(frozen=True)
class MaskTable:
    """Every mask of a node (holding no barred NUMA node) in walk order, as arrays.

    `slots[k, i]`: the position (in the node's NUMA id list) of the i-th NUMA id of mask
    k, ids sorted as distribute walks them; past the mask's width, the padding position
    (one past the last), which reads 0. Step i of distribute concerns the masks of width
    > i, from `starts[i]` on; `left[i]` holds how many NUMA nodes each of them has left.
    """

    masks: tuple[Mask, ...]
    widths: Ints
    slots: NDArray[np.intp]
    starts: tuple[int, ...]
    left: tuple[Ints, ...]
    by_row: NDArray[np.intp]  # each mask's row number, as a column (for fancy indexing)


@lru_cache(maxsize=64)
def mask_table(numa_ids: tuple[int, ...], barred: frozenset[int]) -> MaskTable:
    """The table of `masks_by_width(numa_ids, barred)`, built once per id list."""
    masks = tuple(mask for width in masks_by_width(numa_ids, barred) for mask in width.masks)
    position = {numa: p for p, numa in enumerate(numa_ids)}
    count = len(numa_ids)
    slots = np.full((len(masks), count), count, dtype=np.intp)
    for row, mask in enumerate(masks):
        slots[row, : len(mask.ids)] = [position[numa] for numa in mask.ids]
    widths = np.array([len(mask.ids) for mask in masks], dtype=np.int64)
    starts = tuple(
        start
        for step in range(count)
        if (start := int(np.searchsorted(widths, step + 1))) < len(masks)
    )
    left = tuple(widths[start:] - step for step, start in enumerate(starts))
    by_row = np.arange(len(masks), dtype=np.intp)[:, None]
    return MaskTable(masks, widths, slots, starts, left, by_row)


def allocating_rows(
    table: MaskTable,
    spreader: Spreader,
    rows: Sequence[Sequence[int]],
    needs: Sequence[int],
    numa_ids: tuple[int, ...],
) -> list[int]:
    """The table's masks (by row) that a pod binding no cpus allocates in: each of
    `rows` (per NUMA position) sums to at least its `need` over the mask (the walk's
    `_hopeful`), and distribute places every requested amount (`_allocates`)."""
    allocates = np.ones(len(table.masks), dtype=np.bool_)
    for row, need in zip(rows, needs, strict=True):
        padded = np.append(np.asarray(row, dtype=np.int64), 0)
        allocates &= padded[table.slots].sum(axis=1) >= need
    for name, amount in spreader.requests:
        left = spreader.left[name]
        padded = np.array([left.get(numa, 0) for numa in numa_ids] + [0], dtype=np.int64)
        allocates &= _distributes_whole(table, spreader, name, amount, padded)
    return np.flatnonzero(allocates).tolist()


def _distributes_whole(
    table: MaskTable, spreader: Spreader, name: str, amount: int, left: Ints
) -> Bools:
    """Per mask: does distribute place all of `amount` of `name`? Successive floors over
    the mask's NUMA nodes in `positional_sort`'s order (see the module docstring)."""
    count = table.slots.shape[1]
    order = np.array(  # by width - 1: the slots in walk order, the padding after them
        [walk + list(range(len(walk), count)) for walk in spreader.orders(name, count)],
        dtype=np.intp,
    )
    walked = table.slots[table.by_row, order[table.widths - 1]].T  # by step, then mask
    remaining = np.full(len(table.masks), amount, dtype=np.int64)
    for step, (start, numa_nodes_left) in enumerate(zip(table.starts, table.left, strict=True)):
        tail = remaining[start:]
        tail -= np.minimum(left[walked[step, start:]], tail // numa_nodes_left)
    whole: Bools = remaining == 0
    return whole
