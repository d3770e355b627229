"""kube-scheduler without a topology plugin as a what-if family."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from scheduler_api.engine.model.kubernetes import node_fit_count
from scheduler_api.engine.model.snapshot import NodeSnapshot
from scheduler_api.engine.schedulerplugins.fast.vector import Bools, Ints
from scheduler_api.engine.whatif.families.base import Family, Unchanging
from scheduler_api.engine.whatif.systems import Scheduler, default_scheduler_verdict

if TYPE_CHECKING:
    from scheduler_api.engine.whatif.judge import Judgement


class NoColumns(Unchanging):
    """A family whose every row is judged on its own."""

    def __init__(self, size: int) -> None:
        self.size = size

    def settle(self, judgement: Judgement, rows: Bools) -> Bools:
        return np.zeros(len(rows), np.bool_)

    def counts(
        self, judgement: Judgement, counts: Ints, limit: int, cap: Callable[[], Ints]
    ) -> Ints:
        return counts


def count_copies(
    judgement: Judgement, node: NodeSnapshot, limit: int, judged: object = None
) -> int | None:
    """Past the shared filters the default scheduler binds: they alone limit copies."""
    return node_fit_count(node, judgement.request_of(Scheduler.DEFAULT), limit)


FAMILY = Family(
    system=Scheduler.DEFAULT,
    evaluate=default_scheduler_verdict,
    allocate=default_scheduler_verdict,
    evaluate_fast=default_scheduler_verdict,
    allocate_fast=default_scheduler_verdict,
    columns=NoColumns,
    count_copies=count_copies,
    picks_cpus=False,
)
