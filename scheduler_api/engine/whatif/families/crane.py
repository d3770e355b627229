"""crane-scheduler as a what-if family."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from scheduler_api.engine.crane import cache as crane_cache
from scheduler_api.engine.crane.fast import count as crane_count
from scheduler_api.engine.crane.fast import vector as crane_vector
from scheduler_api.engine.crane.reference import plugin as crane
from scheduler_api.engine.model.decided import UNLIMITED
from scheduler_api.engine.model.snapshot import NodeSnapshot
from scheduler_api.engine.schedulerplugins.fast.vector import Bools, Ints
from scheduler_api.engine.whatif.families.base import Columns, Family
from scheduler_api.engine.whatif.systems import Scheduler

if TYPE_CHECKING:
    from scheduler_api.engine.whatif.judge import Judgement


class CraneColumns:
    """Groups of rows sharing one verdict, topology-aware rows some zone takes, and
    greedy rows whose fill finishes in the zone sorted first (`crane_vector`)."""

    def __init__(self, size: int) -> None:
        # rows whose copies are known: `copies` of them (UNLIMITED: the shared filters'
        # count alone)
        self.counted = np.zeros(size, np.bool_)
        self.copies = np.full(size, UNLIMITED, np.int64)
        # greedy rows: the most copies known to fit (the shared filters' limit counts
        # them where it is no more; -1: none known)
        self.never_empty = np.full(size, -1, np.int64)

    def settle(self, judgement: Judgement, rows: Bools) -> Bools:
        shared = self._shared(judgement, rows)
        aware = self._aware(judgement, rows & ~shared)
        return shared | aware | self._greedy(judgement, rows & ~shared & ~aware)

    def _shared(self, judgement: Judgement, rows: Bools) -> Bools:
        """Rows of `rows` whose group shares one verdict, set at once; those that fit are
        counted by the shared filters alone."""
        decided = np.zeros(len(rows), np.bool_)
        config = judgement.configs.crane
        for group, result in crane_vector.shared_verdicts(judgement.index, judgement.pod,
                                                          rows, config):  # fmt: skip
            judgement.settle(group, result)
            decided |= group
            if result.fits:
                self.counted |= group
        return decided

    def _aware(self, judgement: Judgement, rows: Bools) -> Bools:
        """Rows of `rows` decided on their zones: topology-aware nodes some zone takes."""
        config = judgement.configs.crane
        found = crane_vector.aware_verdicts(judgement.index, judgement.pod, rows, config)
        if found is None:
            return np.zeros(len(rows), np.bool_)
        _settle_fitting(judgement, found)
        self.counted |= found.decided
        self.copies = np.where(found.decided, found.copies, self.copies)
        return found.decided

    def _greedy(self, judgement: Judgement, rows: Bools) -> Bools:
        """Rows of `rows` decided on their zones: nodes that are not topology-aware whose
        greedy fill finishes in the zone sorted first."""
        config = judgement.configs.crane
        found = crane_vector.greedy_verdicts(judgement.index, judgement.pod, rows, config)
        if found is None:
            return np.zeros(len(rows), np.bool_)
        _settle_fitting(judgement, found)
        self.never_empty = np.where(found.decided, found.never_empty, self.never_empty)
        return found.decided

    def counts(
        self, judgement: Judgement, counts: Ints, limit: int, cap: Callable[[], Ints]
    ) -> Ints:
        """Counted rows: their zones' copies within `cap`; greedy rows whose fills cannot
        come out empty up to `cap` (`crane_count.fill_count`: the cap)."""
        greedy = self.never_empty >= 0
        if not self.counted.any() and not greedy.any():
            return counts
        caps = cap()
        counts = np.where(greedy & (caps <= self.never_empty), caps, counts)
        copies = np.where(self.copies == UNLIMITED, caps, np.minimum(caps, self.copies))
        return np.where(self.counted, copies, counts)

    def forget(self, row: int) -> None:
        self.counted[row] = False  # judged on its own books now
        self.never_empty[row] = -1

    def copy(self) -> Columns:
        clone = CraneColumns(0)
        clone.counted, clone.copies = self.counted.copy(), self.copies
        clone.never_empty = self.never_empty.copy()
        return clone


def _settle_fitting(judgement: Judgement, found: crane_vector.ZoneVerdicts) -> None:
    """`found`'s rows fit, each with its own verdict (shared between rows, not copied)."""
    for row, result in found.verdicts.items():
        judgement.settle_row(row, result)
    judgement.fits[found.decided] = True


def count_copies(
    judgement: Judgement, node: NodeSnapshot, limit: int, judged: object = None
) -> int | None:
    return crane_count.fill_count(
        node, judgement.pod, judgement.configs.crane, judgement.request_of(Scheduler.CRANE), limit
    )


FAMILY = Family(
    system=Scheduler.CRANE,
    evaluate=crane.evaluate,
    allocate=crane.allocate,
    evaluate_fast=partial(crane.evaluate, zones=crane_cache.kept_zones),
    allocate_fast=partial(crane.allocate, zones=crane_cache.kept_zones),
    columns=CraneColumns,
    count_copies=count_copies,
    picks_cpus=False,
)
