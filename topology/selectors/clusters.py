"""Clusters for the switcher, and how old a cluster's data is."""

from __future__ import annotations

from django.db.models import Count, QuerySet

from topology.models import Cluster, SyncState
from topology.selectors.types import DataAge, stalest_data_age


def clusters_for_switcher() -> QuerySet[Cluster]:
    """Every cluster with its node count; one query."""
    return Cluster.objects.annotate(node_count=Count("nodes")).order_by("name")


def data_age(cluster: Cluster) -> DataAge:
    """How old the cluster's mirror is: `stalest_data_age` over its served collections."""
    synced = SyncState.objects.filter(cluster=cluster, served=True).values_list(
        "synced_through", flat=True
    )
    return stalest_data_age(synced, cluster.last_imported_at)
