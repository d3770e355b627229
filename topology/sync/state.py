"""Sync state per cluster and collection, and per-object sync errors.

Only the writer thread calls these. Messages here go to admin: they are built from
`errors.describe` and parser errors, never from raw exceptions, so they hold no
credentials.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable
from datetime import datetime

from django.db.models import F
from django.utils import timezone

from topology.choices import SyncResource
from topology.models import Cluster, SyncError, SyncState

logger = logging.getLogger(__name__)


def plan_states(
    cluster: Cluster, served: dict[SyncResource, str], skipped: dict[SyncResource, str]
) -> None:
    """Record which collections are served (and at which version) and which are not."""
    for resource, api_version in served.items():
        SyncState.objects.update_or_create(
            cluster=cluster,
            resource=resource,
            defaults={"served": True, "api_version": api_version, "skipped_reason": ""},
        )
    for resource, reason in skipped.items():
        SyncState.objects.update_or_create(
            cluster=cluster,
            resource=resource,
            defaults={"served": False, "api_version": "", "skipped_reason": reason},
        )


def record_list(
    cluster: Cluster, resource: SyncResource, *, resource_version: str, count: int, at: datetime
) -> None:
    """A full list ended: the mirror equals the cluster as of the list's start."""
    SyncState.objects.filter(cluster=cluster, resource=resource).update(
        last_full_list_at=at,
        listed_count=count,
        resource_version=resource_version,
        synced_through=at,
    )


def record_applied(
    cluster: Cluster,
    resource: SyncResource,
    *,
    events: int,
    resource_version: str,
    last_event_at: datetime | None,
    last_bookmark_at: datetime | None,
    lag_seconds: float | None,
) -> None:
    """Events (and bookmarks) up to here are in the database: move freshness forward."""
    values: dict[str, object] = {"events_applied": F("events_applied") + events}
    if resource_version:
        values["resource_version"] = resource_version
    if last_event_at:
        values["last_event_at"] = last_event_at
    if last_bookmark_at:
        values["last_bookmark_at"] = last_bookmark_at
    through = max(filter(None, (last_event_at, last_bookmark_at)), default=None)
    if through:
        values["synced_through"] = through
    if lag_seconds is not None:
        values["lag_seconds"] = lag_seconds
    SyncState.objects.filter(cluster=cluster, resource=resource).update(**values)


def record_failure(cluster: Cluster, resource: SyncResource, message: str) -> None:
    SyncState.objects.filter(cluster=cluster, resource=resource).update(
        consecutive_errors=F("consecutive_errors") + 1,
        last_error=message,
        last_error_at=timezone.now(),
    )


def record_connect_failure(cluster: Cluster, message: str) -> None:
    """The whole cluster is unreachable: every collection it serves is failing. A cluster
    never synced has no collections yet: its nodes, which every API server serves, carry
    the error, so that it shows wherever sync health is read."""
    now = timezone.now()
    failing = SyncState.objects.filter(cluster=cluster, served=True).update(
        consecutive_errors=F("consecutive_errors") + 1,
        last_error=message,
        last_error_at=now,
    )
    if not failing:
        SyncState.objects.update_or_create(
            cluster=cluster,
            resource=SyncResource.NODES,
            defaults={"served": True, "consecutive_errors": 1, "last_error": message,
                      "last_error_at": now},
        )  # fmt: skip


def record_recovery(cluster: Cluster, resource: SyncResource) -> None:
    SyncState.objects.filter(cluster=cluster, resource=resource).update(consecutive_errors=0)


def record_object_error(
    cluster: Cluster, resource: SyncResource, *, name: str, field: str, message: str
) -> None:
    """One malformed object: logged with its name and field, kept until it syncs."""
    logger.warning("%s %s %s: %s: %s", cluster.name, resource.value, name, field, message)
    now = timezone.now()
    updated = SyncError.objects.filter(cluster=cluster, resource=resource, object_name=name).update(
        field=field, message=message, last_seen_at=now, occurrences=F("occurrences") + 1
    )
    if not updated:
        SyncError.objects.create(
            cluster=cluster,
            resource=resource,
            object_name=name,
            field=field,
            message=message,
            first_seen_at=now,
            last_seen_at=now,
        )


def clear_object_errors(cluster: Cluster, resource: SyncResource, names: Collection[str]) -> None:
    if names:
        SyncError.objects.filter(
            cluster=cluster, resource=resource, object_name__in=list(names)
        ).delete()


def open_error_names(cluster: Cluster) -> dict[SyncResource, set[str]]:
    names: dict[SyncResource, set[str]] = {}
    rows: Iterable[tuple[str, str]] = SyncError.objects.filter(cluster=cluster).values_list(
        "resource", "object_name"
    )
    for resource, name in rows:
        names.setdefault(SyncResource(resource), set()).add(name)
    return names
