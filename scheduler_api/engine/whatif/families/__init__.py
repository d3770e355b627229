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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Protocol

from scheduler_api.engine.model.kubernetes import node_fit_reasons, pod_request
from scheduler_api.engine.model.results import PlacementResult, refused
from scheduler_api.engine.model.snapshot import NodeSnapshot, PodSpec, ReservationSnapshot
from scheduler_api.engine.schedulerplugins.fast.vector import Bools, Ints
from scheduler_api.engine.whatif.systems import Scheduler, SystemConfigs

if TYPE_CHECKING:
    from scheduler_api.engine.whatif.judge import Judgement

__all__ = ["FAMILIES", "Columns", "Family", "NodeRunner", "Unchanging", "judge_node"]

NodeRunner = Callable[..., PlacementResult]


class Columns(Protocol):
    """One family's verdicts on its rows of one judgement, read off the index's columns."""

    def settle(self, judgement: Judgement, rows: Bools) -> Bools:
        """Decide what the columns can of `rows` (the family's rows that passed the shared
        filters), writing the verdicts into `judgement`; the rows decided. The judgement
        asks the reference for every row no family decided."""
        ...

    def counts(
        self, judgement: Judgement, counts: Ints, limit: int, cap: Callable[[], Ints]
    ) -> Ints:
        """`counts` with the copies (up to `limit`) of the rows the columns count filled
        in, within `cap()`: the shared filters' count per row. Other rows as they are."""
        ...

    def forget(self, row: int) -> None:
        """`row` was judged again on its own (its node changed): nothing kept of it holds."""
        ...

    def copy(self) -> Columns:
        """A copy a working copy of the judgement may change."""
        ...


class Unchanging:
    """Columns whose state no bound replica changes: nothing to forget, nothing to copy."""

    def forget(self, row: int) -> None:
        return None

    def copy(self) -> Columns:
        return self  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class Family:
    """What one scheduler family offers the what-if (see the module docstring)."""

    system: Scheduler
    evaluate: NodeRunner
    allocate: NodeRunner
    evaluate_fast: NodeRunner
    allocate_fast: NodeRunner
    columns: Callable[[int], Columns]  # fresh columns for a judgement of so many rows
    count_copies: Callable[..., int | None]
    picks_cpus: bool  # its allocation is more than its verdict (a cpuset, annotations)
    config_of: Callable[[SystemConfigs], object]

    def runner(self, *, allocate: bool, fast: bool) -> NodeRunner:
        if fast:
            return self.allocate_fast if allocate else self.evaluate_fast
        return self.allocate if allocate else self.evaluate


def _registry() -> Mapping[Scheduler, Family]:
    from scheduler_api.engine.whatif.families import crane, default, koordinator, nrt

    families = (nrt.FAMILY, crane.FAMILY, koordinator.FAMILY, default.FAMILY)
    return MappingProxyType({family.system: family for family in families})


FAMILIES: Mapping[Scheduler, Family] = _registry()


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
    shared = node_fit_reasons(node, pod_request(pod) if request is None else request)
    if shared:
        return refused(*shared)
    family = FAMILIES[system]
    runner = family.runner(allocate=allocate, fast=fast)
    return runner(node, pod, config=family.config_of(configs), reservations=reservations)
