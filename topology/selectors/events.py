"""Pods' Warning events as `kubectl get events` shows them: one line per pod and reason.

The mirror keeps one row per Event object, and a scheduler that retries a pod writes a
new Event (or bumps the count of the last one) each time. Here they are folded by
(pod, reason): counts summed, first seen the earliest, last seen, message and source
those of the newest. Reads are O(n) in the rows read, which retention bounds
(`TOPOLENS_EVENT_RETENTION_COUNT` per cluster).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from django.db.models import DateTimeField, F, QuerySet
from django.db.models.functions import Coalesce

from topology.models import Cluster, PodEvent

PodKey = tuple[str, str]  # (namespace, pod name)
_COLUMNS = (
    "namespace",
    "pod_name",
    "pod_uid",
    "reason",
    "message",
    "source",
    "count",
    "first_seen",
    "last_seen",
)


@dataclass(frozen=True)
class PodEventSummary:
    """One reason a pod was refused, over all the Event objects that gave it."""

    namespace: str
    pod_name: str
    pod_uid: str  # of the newest event (a pod recreated under its name has another)
    reason: str
    count: int
    first_seen: datetime | None
    last_seen: datetime | None
    message: str
    source: str


def pod_events(cluster: Cluster, namespace: str, name: str) -> list[PodEventSummary]:
    """One pod's events by reason, the most recent first."""
    rows = PodEvent.objects.filter(cluster=cluster, namespace=namespace, pod_name=name)
    return list(fold_events(_newest_first(rows)).values())


def latest_events_by_pod(cluster: Cluster) -> dict[PodKey, list[PodEventSummary]]:
    """Every pod with events → its events by reason, the most recent first; pods in the
    order of their latest event, the most recent first."""
    by_pod: dict[PodKey, list[PodEventSummary]] = {}
    for summary in fold_events(_newest_first(PodEvent.objects.filter(cluster=cluster))).values():
        by_pod.setdefault((summary.namespace, summary.pod_name), []).append(summary)
    return by_pod


def _newest_first(rows: QuerySet[PodEvent]) -> Iterable[dict[str, Any]]:
    """Rows by when they were last seen (when mirrored, for an Event without a time),
    newest first; the id breaks ties, the later row being the newer."""
    seen = Coalesce("last_seen", "observed_at", output_field=DateTimeField())
    return rows.annotate(seen=seen).order_by(F("seen").desc(), "-pk").values(*_COLUMNS)


def fold_events(
    rows: Iterable[Mapping[str, Any]],
) -> dict[tuple[str, str, str], PodEventSummary]:
    """Rows (mirrored, or a dump's parsed records as dicts) newest first, folded by
    (namespace, pod, reason), in the order of each group's newest row: that row gives
    what is shown, the others add their counts."""
    folded: dict[tuple[str, str, str], PodEventSummary] = {}
    for row in rows:
        key = (row["namespace"], row["pod_name"], row["reason"])
        seen = folded.get(key)
        folded[key] = _summary(row) if seen is None else _with_older(seen, row)
    return folded


def _summary(row: dict[str, Any]) -> PodEventSummary:
    return PodEventSummary(**{column: row[column] for column in _COLUMNS})


def _with_older(summary: PodEventSummary, row: dict[str, Any]) -> PodEventSummary:
    first_seen = min(
        (t for t in (summary.first_seen, row["first_seen"]) if t is not None), default=None
    )
    return replace(summary, count=summary.count + row["count"], first_seen=first_seen)
