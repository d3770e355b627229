"""What the Agreement page reads of the stored audit (`topology.services.audit.store`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.db.models import Case, Value, When

from topology.figures.agreement import agree_percent
from topology.filtersets import AgreementFilterSet
from topology.models import AgreementVerdict, Cluster, PodAgreement

CHECKS = (
    ("node_infeasible", "node infeasible"),
    ("zones_differ", "other NUMA zones"),
    ("cpuset_differs", "another cpuset"),
)


@dataclass(frozen=True)
class RateRow:
    system: str
    judged: int
    agree: int
    percent: float | None
    checks: list[tuple[str, str, int]]  # (key, label, pods)
    not_judgeable: int


def rate_rows(rates: Mapping[str, Mapping[str, int]]) -> list[RateRow]:
    return [
        RateRow(
            system=system,
            judged=rate["judged"],
            agree=rate["agree"],
            percent=agree_percent(rate),
            checks=[(key, label, rate[key]) for key, label in CHECKS],
            not_judgeable=rate["not_judgeable"],
        )
        for system, rate in rates.items()
    ]


def agreement_rows(cluster: Cluster, query: Mapping[str, Any]) -> AgreementFilterSet:
    """The page's pods: disagreements first, then the pods not judgeable, then the rest."""
    rank = Case(
        When(verdict=AgreementVerdict.DIFFERS, then=Value(0)),
        When(verdict=AgreementVerdict.NOT_JUDGEABLE, then=Value(1)),
        default=Value(2),
    )
    rows = (
        PodAgreement.objects.filter(cluster=cluster)
        .annotate(rank=rank)
        .order_by("rank", "namespace", "name")
    )
    return AgreementFilterSet(query, queryset=rows)


def cpus_of_zones(cpus: Iterable[Any], zones: Iterable[int]) -> list[int]:
    """The CPUs of NUMA zones `zones` (a placement without a cpuset is drawn so)."""
    wanted = set(zones)
    return sorted(cpu.id for cpu in cpus if cpu.numa in wanted)
