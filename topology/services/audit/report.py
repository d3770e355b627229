"""The audit's answer: agreement rates per system and the pods, in the shape the CLI and
the API give (issue 32)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from topology.services.audit.replay import (
    AGREE,
    APPROXIMATION,
    CPUSET,
    NODE_INFEASIBLE,
    NOT_JUDGEABLE,
    ZONES,
    PodAudit,
)

# not-judgeable pods whose system is unknown are counted under this key
NO_SYSTEM = "unknown"


def empty_rate() -> dict[str, int]:
    return {
        "judged": 0, "agree": 0, "node_infeasible": 0, "zones_differ": 0,
        "cpuset_differs": 0, "not_judgeable": 0,
    }  # fmt: skip


def rates(audits: Iterable[PodAudit]) -> dict[str, dict[str, int]]:
    """Per system: pods judged (agree or differs), how many agree, how many differ by
    each check (a pod may differ by more than one), and pods not judgeable."""
    out: dict[str, dict[str, int]] = {}
    for audit in audits:
        rate = out.setdefault(audit.system or NO_SYSTEM, empty_rate())
        if audit.verdict == NOT_JUDGEABLE:
            rate["not_judgeable"] += 1
            continue
        rate["judged"] += 1
        rate["agree"] += audit.verdict == AGREE
        rate["node_infeasible"] += NODE_INFEASIBLE in audit.differs
        rate["zones_differ"] += ZONES in audit.differs
        rate["cpuset_differs"] += CPUSET in audit.differs
    return dict(sorted(out.items()))


def audit_report(audits: list[PodAudit], *, data_age_seconds: float | None) -> dict[str, Any]:
    """`{"rates": {...}, "pods": [...]}` with what produced them."""
    return {
        "rates": rates(audits),
        "pods": [audit.as_json() for audit in audits],
        "data_age_seconds": data_age_seconds,
        "approximation": APPROXIMATION,
    }
