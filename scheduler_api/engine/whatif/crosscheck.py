"""The cross-check switch: every fast answer recomputed by the reference.

With `TOPOLENS_ENGINE_CROSSCHECK=1` in the environment, each what-if's verdicts (decided
on columns, by counting, or by a fast Filter) are recomputed node by node by the
reference (`systems.judge_node(..., fast=False)`: the shared filters, then the family's
upstream-faithful Filter and Score), and each capacity count by filling the node copy by
copy with the reference. A disagreement raises `CrossCheckError` naming the node and
both answers. It multiplies the cost of a what-if many times over: for CI and for
chasing a suspected wrong answer, never for serving.

What is compared is the scheduler's stage (fits, score, NUMA zones, reasons; the cpuset
where both computed one): the kubelet's admission is one reference already.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from scheduler_api.engine.model.results import ReasonCheck
from scheduler_api.engine.whatif.families import judge_node

if TYPE_CHECKING:
    from scheduler_api.engine.whatif.judge import Judgement

ENV = "TOPOLENS_ENGINE_CROSSCHECK"


class CrossCheckError(AssertionError):
    """A fast answer the reference does not give."""


def enabled() -> bool:
    return os.environ.get(ENV, "").strip().lower() not in ("", "0", "false", "no", "off")


def _scheduler_stage(fits: bool, verdict: Any) -> tuple[Any, ...]:
    reasons = tuple(r for r in verdict.reasons if r.check is not ReasonCheck.KUBELET_ADMISSION)
    return (fits, verdict.score if fits else None, verdict.numa_zones, reasons)


def check_verdicts(judgement: Judgement, rows: Sequence[int] | None = None) -> None:
    """Each row's verdict against the reference's, for the same node, pod and settings."""
    rows = range(len(judgement.index.nodes)) if rows is None else rows
    for row, got in zip(rows, judgement.verdicts(list(rows)), strict=True):
        node, system = judgement.index.nodes[row], judgement.system(row)
        want = judge_node(
            node, judgement.pod, system, judgement.configs, judgement.reservations_on(node),
            allocate=got.detailed, request=judgement.request_of(system), fast=False,
        )  # fmt: skip
        fast, reference = (
            _scheduler_stage(got.scheduler_fits, got),
            _scheduler_stage(want.fits, want),
        )
        if fast != reference:
            raise CrossCheckError(
                f"{node.name} ({system.value}): fast answer {fast} but the reference {reference}"
            )
        if got.detailed and want.cpuset is not None and got.cpuset != want.cpuset:
            raise CrossCheckError(
                f"{node.name} ({system.value}): fast cpuset {sorted(got.cpuset or ())} but "
                f"the reference {sorted(want.cpuset)}"
            )


def check_counts(judgement: Judgement, counted: Sequence[tuple[str, int]], limit: int) -> None:
    """Each node's capacity count against filling it copy by copy with the reference."""
    for name, count in counted:
        row = judgement.row_of(name)
        if not judgement.fits[row]:
            continue
        want = judgement.fill_copy_by_copy(row, limit, fast=False)
        if count != want:
            raise CrossCheckError(
                f"{name} ({judgement.system(row).value}): {count} copies counted fast but "
                f"{want} filling it copy by copy with the reference"
            )
