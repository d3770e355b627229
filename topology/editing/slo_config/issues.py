"""One finding about a slo-controller-config draft: what, where, and on which nodes.

Kept apart from `qos.py` so that every qos_* module can produce issues without an
import cycle; `topology.editing.slo_config.validation` re-exports it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning"]
ERROR: Severity = "error"
WARNING: Severity = "warning"


@dataclass(frozen=True)
class QoSIssue:
    """An "error" blocks an apply; a "warning" is shown and does not.

    `path` is the data key then the JSON path inside it, e.g.
    "resource-qos-config.clusterStrategy.beClass.resctrlQOS.catRangeEndPercent".
    `line` / `column` (1-based) are set for JSON syntax errors.
    """

    severity: Severity
    path: str
    message: str
    line: int | None = None
    column: int | None = None
    nodes: tuple[str, ...] = ()

    @property
    def is_error(self) -> bool:
        return self.severity == ERROR

    @property
    def where(self) -> str:
        """The path, with the line and column when known: for one-line messages."""
        if self.line is None:
            return self.path
        return f"{self.path} (line {self.line}, column {self.column})"


def has_errors(issues: Iterable[QoSIssue]) -> bool:
    return any(issue.is_error for issue in issues)


def grouped_by_message(
    found: Iterable[tuple[Severity, str, str, str]],
) -> list[QoSIssue]:
    """(severity, path, message, node) rows → one issue per finding, naming all its nodes.

    A finding that hits 2,000 nodes is one line naming them, not 2,000 lines.
    """
    nodes: dict[tuple[Severity, str, str], list[str]] = defaultdict(list)
    for severity, path, message, node in found:
        nodes[(severity, path, message)].append(node)
    return [
        QoSIssue(severity, path, message, nodes=tuple(sorted(set(names))))
        for (severity, path, message), names in nodes.items()
    ]
