"""The scheduler families a what-if judges with, each registered once.

A family offers the what-if what it can answer: its reference verdict on one node
(`evaluate`, `allocate`), the same from kept inputs or by counting (`evaluate_fast`,
`allocate_fast`), verdicts on many rows at once from the index's columns (`columns`: a
fresh `Columns` per judgement), and the copies a node takes alone (`count_copies`). The
judgement loops over `FAMILIES`; it names none of them. To add a family: write its
reference and fast paths in its own package, a module here that builds its `Family`, and
an entry in `FAMILIES`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from scheduler_api.engine.model.kubernetes import node_fit_reasons, pod_request
from scheduler_api.engine.model.results import PlacementResult, refused
from scheduler_api.engine.model.snapshot import NodeSnapshot, PodSpec, ReservationSnapshot
from scheduler_api.engine.whatif.families import crane, default, koordinator, nrt
from scheduler_api.engine.whatif.families.base import Columns, Family, NodeRunner, Unchanging
from scheduler_api.engine.whatif.systems import (
    Scheduler,
    SystemConfigs,
    reads_pod_level_requests,
)

__all__ = ["FAMILIES", "Columns", "Family", "NodeRunner", "Unchanging", "judge_node"]

FAMILIES: Mapping[Scheduler, Family] = MappingProxyType(
    {
        family.system: family
        for family in (nrt.FAMILY, crane.FAMILY, koordinator.FAMILY, default.FAMILY)
    }
)


def judge_node(
    node: NodeSnapshot,
    pod: PodSpec,
    system: Scheduler,
    configs: SystemConfigs,
    reservations: Sequence[ReservationSnapshot],
    *,
    allocate: bool = False,
    request: Mapping[str, int] | None = None,
    fast: bool = False,
) -> PlacementResult:
    """One node's verdict: the shared filters, then the family's own filter and score.

    `fast` answers from kept inputs or by counting where the family can (same answers).
    """
    if request is None:
        request = pod_request(pod, pod_level=reads_pod_level_requests(system))
    shared = node_fit_reasons(node, request)
    if shared:
        return refused(*shared)
    family = FAMILIES[system]
    runner = family.runner(allocate=allocate, fast=fast)
    return runner(node, pod, config=configs.config_for(system), reservations=reservations)
