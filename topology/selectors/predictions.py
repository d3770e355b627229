"""What the Agreement page shows of the tracked predictions (`services.audit.predictions`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from topology.models import Cluster, TrackedPrediction
from topology.parsers.cpulist import format_cpulist

RECENT = 20  # predictions the page lists; the API has them all
SHOWN_REPLICAS = 3  # replicas written out per system; the rest counted


@dataclass(frozen=True)
class PredictionRow:
    row: TrackedPrediction
    predicted: list[str]  # one line per system: where its replicas go
    landed: list[str]  # one line per landed pod: where, and what differed


def recent_predictions(cluster: Cluster, limit: int = RECENT) -> list[PredictionRow]:
    rows = TrackedPrediction.objects.filter(cluster=cluster).order_by("-created_at", "-pk")
    return [
        PredictionRow(row, predicted_lines(row.predicted), landed_lines(row.landed))
        for row in rows[:limit]
    ]


def placement_text(node: str, zones: Sequence[int], cpuset: Iterable[int] | None) -> str:
    """ "node-1 (NUMA 0, CPUs 2-5)"; only what is known."""
    parts = []
    if zones:
        parts.append("NUMA " + ", ".join(map(str, zones)))
    if cpuset:
        parts.append("CPUs " + format_cpulist(cpuset))
    return f"{node} ({'; '.join(parts)})" if parts else node


def predicted_lines(predicted: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[str]:
    lines = []
    for system, placements in predicted.items():
        shown = [placement_text(p["node"], p["numa_zones"], p["cpuset"]) for p in placements]
        more = len(shown) - SHOWN_REPLICAS
        text = ", ".join(shown[:SHOWN_REPLICAS]) + (f" and {more} more" if more > 0 else "")
        lines.append(f"{system}: {text or 'fits nowhere'}")
    return lines


def landed_lines(landed: Sequence[Mapping[str, Any]]) -> list[str]:
    lines = []
    for pod in landed:
        where = placement_text(pod["node"], pod["numa_zones"], pod["cpuset"])
        if not pod["published"]:
            where += ", placement not published"
        verdict = "held" if pod["held"] else "differs: " + ", ".join(pod["differs"])
        lines.append(f"{pod['name']} on {where}: {verdict}")
    return lines


def held_text(counts: Mapping[str, Any]) -> str:
    """ "12 of 13 settled predictions held (92.3 %)." from `prediction_counts`."""
    counted = counts["held"] + counts["missed"]
    if not counted:
        return "No prediction settled yet."
    percent = 100 * counts["held"] / counted
    return f"{counts['held']} of {counted} settled predictions held ({percent:.1f} %)."
