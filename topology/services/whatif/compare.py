"""The same pod under each scheduler, side by side, shaped for the compare view."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from topology.models import Cluster
from topology.services.whatif.page import (
    PlacementRow,
    Ranking,
    ReasonCount,
    VerdictRow,
    age_text,
    placement_rows,
    top_reasons,
)
from topology.services.whatif.question import COMPARE_ALL, WhatIfQuestion
from topology.services.whatif.service import ask

TOP_NODES = 5


@dataclass(frozen=True)
class SchedulerColumn:
    """One scheduler's answer: how many fit, where the best is, and why the others refuse."""

    scheduler: str
    scoring: str
    node_count: int
    fit_count: int
    capacity_total: int
    best: VerdictRow | None
    top: list[VerdictRow]
    reasons: list[ReasonCount]
    placements: list[PlacementRow]

    @property
    def placed(self) -> int:
        return sum(1 for p in self.placements if p.node is not None)


@dataclass(frozen=True)
class ComparePage:
    question: WhatIfQuestion
    qos_class: str
    data_age_seconds: float | None
    columns: list[SchedulerColumn]

    @property
    def data_age_text(self) -> str:
        return age_text(self.data_age_seconds)


def compare_page(*, cluster: Cluster, question: WhatIfQuestion) -> ComparePage:
    """Run `question` under every scheduler on one snapshot; WhatIfInputError when it cannot."""
    answers = ask(cluster, question.under(COMPARE_ALL))
    columns = [scheduler_column(name, answer) for name, answer in answers.items()]
    ages = [a["data_age_seconds"] for a in answers.values() if a["data_age_seconds"] is not None]
    return ComparePage(
        question=question,
        qos_class=question.spec.qos_class.value,
        data_age_seconds=max(ages) if ages else None,
        columns=columns,
    )


def scheduler_column(scheduler: str, answer: Mapping[str, Any]) -> SchedulerColumn:
    ranking = Ranking(answer)
    top = ranking.rows(TOP_NODES)
    return SchedulerColumn(
        scheduler=scheduler,
        scoring=answer["scoring"],
        node_count=len(ranking.nodes),
        fit_count=sum(1 for n in ranking.nodes if n["fits"]),
        capacity_total=answer["capacity"]["total"],
        best=top[0] if top and top[0].fits else None,
        top=top,
        reasons=top_reasons(ranking.nodes),
        placements=placement_rows(answer["placements"]),
    )
