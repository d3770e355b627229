"""koord-scheduler NodeNUMAResource as a what-if family."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from scheduler_api.engine.koordinator.fast import count as koordinator_count
from scheduler_api.engine.koordinator.fast import filter_score as koordinator_fast
from scheduler_api.engine.koordinator.fast import vector as koordinator_vector
from scheduler_api.engine.koordinator.reference import plugin as koordinator
from scheduler_api.engine.model.results import PlacementResult, ReasonCheck
from scheduler_api.engine.model.snapshot import NodeSnapshot
from scheduler_api.engine.schedulerplugins.fast.vector import Bools, Ints
from scheduler_api.engine.whatif.families.base import Family, Unchanging
from scheduler_api.engine.whatif.systems import Scheduler

if TYPE_CHECKING:
    from scheduler_api.engine.whatif.judge import Judgement


class KoordinatorColumns(Unchanging):
    """Verdicts of the rows Koordinator's columns decide (`koordinator_vector.judge`),
    refusals before any book is read, and groups where no NUMA mask takes the pod.
    Unchanging: `decided` leaves out every row judged since."""

    def __init__(self, size: int) -> None:
        self.verdicts: koordinator_vector.ColumnVerdicts | None = None

    def settle(self, judgement: Judgement, rows: Bools) -> Bools:
        self.verdicts = self._columns(judgement, rows)
        decided = self.decided(judgement) | self._refusals(judgement, rows)
        return decided | self._nothing_fits(judgement)

    def _columns(
        self, judgement: Judgement, rows: Bools
    ) -> koordinator_vector.ColumnVerdicts | None:
        verdicts = koordinator_vector.judge(
            judgement.index, judgement.pod, rows, judgement.configs.koordinator,
            judgement.reservations_on,
        )  # fmt: skip
        if verdicts is not None:
            decided = verdicts.decided
            judgement.fits[decided] = True
            judgement.score[decided] = verdicts.score[decided]
            judgement.numa[decided] = verdicts.numa[decided]
        return verdicts

    def _refusals(self, judgement: Judgement, rows: Bools) -> Bools:
        """Rows of `rows` Koordinator refuses before reading any book, with one verdict."""
        refusals = koordinator_vector.quick_refusals(
            judgement.index, judgement.pod, rows, judgement.configs.koordinator
        )
        if refusals is None:
            return np.zeros(len(rows), np.bool_)
        refused, verdict = refusals
        judgement.settle(refused, verdict)
        return refused

    def _nothing_fits(self, judgement: Judgement) -> Bools:
        """Rows the columns found no NUMA mask can take (`nothing_fits`), settled with one
        verdict per group: the reference's on the group's first row. A group whose first
        row is not refused that way is left to the reference row by row."""
        settled = np.zeros(len(judgement.index.nodes), np.bool_)
        if self.verdicts is None:
            return settled
        groups = self.verdicts.nothing_fits
        for group in np.unique(groups[groups >= 0]).tolist():
            rows = groups == group
            result = judgement.judge_row(int(np.flatnonzero(rows)[0]))
            unsatisfied = all(r.check is ReasonCheck.UNSATISFIED_NUMA for r in result.reasons)
            if not result.fits and result.reasons and unsatisfied:
                judgement.settle(rows, result)
                settled |= rows
        return settled

    def decided(self, judgement: Judgement) -> Bools:
        """Rows the columns decided and nothing judged since (a bound replica)."""
        decided = np.zeros(len(judgement.index.nodes), np.bool_)
        if self.verdicts is not None:
            decided |= self.verdicts.decided
            decided[list(judgement.exact)] = False
        return decided

    def counts(
        self, judgement: Judgement, counts: Ints, limit: int, cap: Callable[[], Ints]
    ) -> Ints:
        """The decided rows the columns counted: their NUMA nodes' copies within `cap`."""
        if self.verdicts is None:
            return counts
        known = self.decided(judgement) & self.verdicts.counted
        if not known.any():
            return counts
        return np.where(known, np.minimum(cap(), self.verdicts.copies), counts)


def count_copies(
    judgement: Judgement,
    node: NodeSnapshot,
    limit: int,
    judged: PlacementResult | None = None,
) -> int | None:
    return koordinator_count.fill_count(
        node, judgement.pod, judgement.configs.koordinator, judgement.reservations_on(node),
        judgement.request_of(Scheduler.KOORDINATOR), limit, judged=judged,
    )  # fmt: skip


FAMILY = Family(
    system=Scheduler.KOORDINATOR,
    evaluate=koordinator.evaluate,
    allocate=koordinator.allocate,
    evaluate_fast=koordinator_fast.evaluate,
    allocate_fast=koordinator_fast.allocate,
    columns=KoordinatorColumns,
    count_copies=count_copies,
    picks_cpus=True,
)
