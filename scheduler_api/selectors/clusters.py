"""Clusters with their counts, sync state per collection and data age; a fixed query count."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Count, IntegerField, OuterRef, Prefetch, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from topology.models import Cluster, Node, Pod, SyncState
from topology.selectors.types import DataAge, stalest_data_age


def _count_of(model: type[Node] | type[Pod]) -> Coalesce:
    """A per-cluster count as a subquery: two Count joins would multiply nodes by pods."""
    counts = (
        model.objects.filter(cluster=OuterRef("pk"))
        .order_by()
        .values("cluster")
        .annotate(total=Count("pk"))
        .values("total")
    )
    return Coalesce(Subquery(counts, output_field=IntegerField()), 0)


def clusters_with_sync_state() -> QuerySet[Cluster]:
    """Two queries for any number of clusters: the clusters, then their sync states."""
    states = SyncState.objects.order_by("resource")
    return (
        Cluster.objects.annotate(node_count=_count_of(Node), pod_count=_count_of(Pod))
        .prefetch_related(Prefetch("sync_states", queryset=states))
        .order_by("name")
    )


def cluster_data_age(cluster: Cluster) -> DataAge:
    """`stalest_data_age`, read from the prefetched sync states (no query)."""
    served = [state.synced_through for state in cluster.sync_states.all() if state.served]
    return stalest_data_age(served, cluster.last_imported_at)


def age_seconds(moment: datetime | None, now: datetime | None = None) -> float | None:
    if moment is None:
        return None
    return round(((now or timezone.now()) - moment).total_seconds(), 3)
