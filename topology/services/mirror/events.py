"""How long mirrored Warning events about pods are kept.

The sync never removes an event (`removal.RETAINED_KINDS`): the API server expires
Events after about an hour, and what refused a pod is worth keeping longer. Instead the
housekeeping task prunes, per cluster, what is older than
`TOPOLENS_EVENT_RETENTION_SECONDS` and all but the newest
`TOPOLENS_EVENT_RETENTION_COUNT` rows, so that a scheduler that fails in a loop cannot
grow the table without bound.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import DateTimeField, F, Q, QuerySet
from django.db.models.functions import Coalesce
from django.utils import timezone

from topology.models import Cluster, PodEvent
from topology.services.sync.enqueue import enqueue_diagnosis

logger = logging.getLogger(__name__)


def with_seen(rows: QuerySet[PodEvent]) -> QuerySet[PodEvent]:
    """`seen`: when each was last seen, or when it was mirrored for an Event that carried
    no time at all."""
    return rows.annotate(seen=Coalesce("last_seen", "observed_at", output_field=DateTimeField()))


def events_by_age(rows: QuerySet[PodEvent]) -> QuerySet[PodEvent]:
    """Newest first by `seen`; the id breaks ties, so the order is total."""
    return with_seen(rows).order_by(F("seen").desc(), "-pk")


def prune_pod_events(cluster: Cluster | None = None, now: datetime | None = None) -> int:
    """Delete the events past the retention age or count, of one cluster or of all;
    returns how many. Safe to repeat: a second run deletes nothing."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.TOPOLENS_EVENT_RETENTION_SECONDS)
    keep = settings.TOPOLENS_EVENT_RETENTION_COUNT
    clusters = [cluster] if cluster is not None else _clusters_with_events()
    removed = sum(_prune_cluster(each, cutoff, keep) for each in clusters)
    if removed:
        logger.info("pod events: %d pruned (older than %s, or beyond %d)", removed, cutoff, keep)
    return removed


def _clusters_with_events() -> list[Cluster]:
    ids = PodEvent.objects.order_by().values("cluster_id").distinct()
    return list(Cluster.objects.filter(pk__in=ids))


@transaction.atomic
def _prune_cluster(cluster: Cluster, cutoff: datetime, keep: int) -> int:
    rows = PodEvent.objects.filter(cluster=cluster)
    removed = with_seen(rows).filter(seen__lt=cutoff).delete()[0]
    removed += _beyond_count(rows, keep).delete()[0]
    if removed:
        enqueue_diagnosis(cluster.pk)  # what a diagnosis shows of a pod's events changed
    return removed


def _beyond_count(rows: QuerySet[PodEvent], keep: int) -> QuerySet[PodEvent]:
    """The rows after the newest `keep`: the first of them and every row older than it,
    so that a backlog of any size goes in one statement, with no list of ids."""
    first = next(iter(events_by_age(rows).values("seen", "pk")[keep : keep + 1]), None)
    if first is None:
        return rows.none()
    older = Q(seen__lt=first["seen"]) | Q(seen=first["seen"], pk__lte=first["pk"])
    return with_seen(rows).filter(older)
