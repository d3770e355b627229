"""scheduler-plugins NodeResourceTopologyMatch as a what-if family."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from scheduler_api.engine.model.snapshot import NodeSnapshot
from scheduler_api.engine.schedulerplugins.fast import count as nrt_count
from scheduler_api.engine.schedulerplugins.fast import count_vector as nrt_count_vector
from scheduler_api.engine.schedulerplugins.fast.vector import Bools, Ints, judge_all
from scheduler_api.engine.schedulerplugins.reference import match as nrt_match
from scheduler_api.engine.whatif.families.base import Family, Unchanging
from scheduler_api.engine.whatif.systems import Scheduler

if TYPE_CHECKING:
    from scheduler_api.engine.whatif.judge import Judgement


class NRTColumns(Unchanging):
    """Filter and raw Score of every row at once (`judge_all`), and the rows' copies
    (`nrt_count_vector.fill_counts`)."""

    def __init__(self, size: int) -> None:
        self.rows: Bools | None = None  # the family's rows the shared filters passed

    def settle(self, judgement: Judgement, rows: Bools) -> Bools:
        self.rows = rows
        bulk = judge_all(judgement.index, judgement.pod, rows, judgement.configs.nrt,
                         judgement.request_of(Scheduler.SCHEDULER_PLUGINS))  # fmt: skip
        judgement.fits[rows] = bulk.fits[rows]
        judgement.score[rows] = bulk.score[rows]
        judgement.numa[rows] = bulk.numa[rows]
        decided: Bools = rows & ~bulk.exact
        return decided

    def counts(
        self, judgement: Judgement, counts: Ints, limit: int, cap: Callable[[], Ints]
    ) -> Ints:
        if self.rows is None or not self.rows.any():
            return counts
        index, pod = judgement.index, judgement.pod
        request = judgement.request_of(Scheduler.SCHEDULER_PLUGINS)
        counted = nrt_count_vector.fill_counts(index, pod, request, limit)
        return np.where(self.rows, counted, counts)


def count_copies(
    judgement: Judgement, node: NodeSnapshot, limit: int, judged: object = None
) -> int | None:
    return nrt_count.fill_count(
        node, judgement.pod, judgement.request_of(Scheduler.SCHEDULER_PLUGINS), limit
    )


FAMILY = Family(
    system=Scheduler.SCHEDULER_PLUGINS,
    evaluate=nrt_match.evaluate,
    allocate=nrt_match.allocate,
    evaluate_fast=nrt_match.evaluate,
    allocate_fast=nrt_match.allocate,
    columns=NRTColumns,
    count_copies=count_copies,
    picks_cpus=False,
)
