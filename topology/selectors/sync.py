"""Sync health: per cluster and collection, the last list, the last event, lag and errors.

Four queries for any number of clusters. A cluster the live sync has never
touched (kubectl dumps only) shows its last import instead.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from django.utils import timezone

from topology.choices import SyncResource
from topology.models import Cluster, SyncError, SyncState
from topology.selectors.common import related_or_none

STALE_AFTER = timedelta(minutes=10)
ERRORS_PER_CLUSTER = 20


class Health(StrEnum):
    OK = "ok"
    STALE = "stale"
    FAILING = "failing"
    NOT_SERVED = "not served"
    NEVER = "never synced"


HEALTH_COLOURS = {
    Health.OK: "#009e73",
    Health.STALE: "#e69f00",
    Health.FAILING: "#d55e00",
    Health.NOT_SERVED: "#9aa3ad",
    Health.NEVER: "#c9ced6",
}


@dataclass(frozen=True)
class StateRow:
    resource: str
    label: str
    state: SyncState | None
    health: Health
    behind: timedelta | None  # now − synced_through

    @property
    def colour(self) -> str:
        return HEALTH_COLOURS[self.health]


@dataclass(frozen=True)
class ClusterSync:
    cluster: Cluster
    connection: str
    lease_owner: str
    lease_expires: datetime | None
    rows: tuple[StateRow, ...]
    errors: tuple[SyncError, ...]
    error_count: int

    @property
    def synced(self) -> bool:
        return any(row.state is not None for row in self.rows)


def health(state: SyncState | None, now: datetime) -> Health:
    if state is None:
        return Health.NEVER
    if not state.served:
        return Health.NOT_SERVED
    if state.consecutive_errors:
        return Health.FAILING
    if state.synced_through is None or now - state.synced_through > STALE_AFTER:
        return Health.STALE
    return Health.OK


def state_row(resource: SyncResource, state: SyncState | None, now: datetime) -> StateRow:
    behind = now - state.synced_through if state and state.synced_through else None
    return StateRow(resource.value, str(resource.label), state, health(state, now), behind)


def cluster_syncs(now: datetime | None = None) -> list[ClusterSync]:
    now = now or timezone.now()
    clusters = list(Cluster.objects.select_related("connection", "sync_lease").order_by("name"))
    states: dict[int, dict[str, SyncState]] = defaultdict(dict)
    for state in SyncState.objects.all():
        states[state.cluster_id][state.resource] = state
    errors: dict[int, list[SyncError]] = defaultdict(list)
    counts: dict[int, int] = defaultdict(int)
    for error in SyncError.objects.order_by("cluster_id", "-last_seen_at"):
        counts[error.cluster_id] += 1
        if counts[error.cluster_id] <= ERRORS_PER_CLUSTER:
            errors[error.cluster_id].append(error)
    return [_cluster_sync(c, states[c.id], errors[c.id], counts[c.id], now) for c in clusters]


def _cluster_sync(
    cluster: Cluster,
    states: dict[str, SyncState],
    errors: list[SyncError],
    error_count: int,
    now: datetime,
) -> ClusterSync:
    connection = related_or_none(cluster, "connection")
    lease = related_or_none(cluster, "sync_lease")
    # Only the mode and whether it is enabled: never where the credentials live.
    mode = (
        f"{connection.get_mode_display()}{'' if connection.enabled else ' (disabled)'}"
        if connection is not None
        else "none (imports only)"
    )
    rows = tuple(state_row(r, states.get(r.value), now) for r in SyncResource)
    return ClusterSync(
        cluster=cluster,
        connection=mode,
        lease_owner=getattr(lease, "owner", "") or "",
        lease_expires=getattr(lease, "expires_at", None),
        rows=rows,
        errors=tuple(errors),
        error_count=error_count,
    )
